package metrics

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// Series is the per-interval time series of a run (timeseries.csv): one row
// per interval, columns named in Columns. Rows are appended with Append;
// all but the last few are kept packed (see pack.go), so a long run's
// series takes a few bytes per value rather than eight, and past
// spillAbove bytes the packed rows move to a temporary file (see
// spill.go): a series holds a bounded amount of memory however long the
// run. Read it with Scan, Each or ColumnAt.
type Series struct {
	Columns []string
	// positions is each column's place in a stored row, or -1 for a column left
	// out (see leaveOut); nil when every column is stored, in order.
	positions []int
	width     int             // values in a stored row, when positions is set
	file      *spillFile      // the sealed rows moved out of memory, the first blocks; nil until then
	blocks    [][]byte        // the sealed rows after them, blockRows each
	held      int             // bytes in blocks
	stuck     bool            // the spill file could not be made or written: blocks stay in memory
	spillAt   int             // bytes of blocks held beyond which they move to the spill file; 0: spillAbove
	open      [][]float64     // the rows after them, unpacked
	spare     [][]float64     // rows sealed, for Row to hand out again
	late      map[int]float64 // additions to sealed cells, by row × width + stored column
	scratch   []byte          // where seal packs a block before copying it out
}

// NewSeries returns a series of the given columns holding rows (each of
// len(columns) values).
func NewSeries(columns []string, rows ...[]float64) *Series {
	s := &Series{Columns: columns}
	for _, r := range rows {
		s.Append(r)
	}
	return s
}

// Len returns the number of rows.
func (s *Series) Len() int {
	if s == nil {
		return 0
	}
	return s.sealed()*blockRows + len(s.open)
}

// sealed returns the number of sealed blocks.
func (s *Series) sealed() int { return s.file.blocks() + len(s.blocks) }

// leaveOut marks columns as empty (NaN) in every row, before the first
// Append: their values are not stored, and rows are appended without them.
// Readers see them as NaN, as if every row held NaN there. A run that
// writes no series leaves out its hosts' columns but paused (see
// Recorder.SeriesUnread): with a thousand hosts, four fifths of every row.
func (s *Series) leaveOut(columns []int) {
	if len(columns) == 0 {
		return
	}
	if s.positions == nil {
		s.positions = make([]int, len(s.Columns))
	}
	for _, c := range columns {
		s.positions[c] = -1
	}
	s.width = 0
	for c := range s.positions {
		if s.positions[c] >= 0 {
			s.positions[c] = s.width
			s.width++
		}
	}
}

// Width returns the number of values Append takes in a row: len(Columns)
// less the columns left out.
func (s *Series) Width() int {
	if s.positions == nil {
		return len(s.Columns)
	}
	return s.width
}

// stored returns the place of column in a stored row, or -1 if it is left
// out.
func (s *Series) stored(column int) int {
	if s.positions == nil {
		return column
	}
	return s.positions[column]
}

// full returns a stored row with the columns left out put back, as NaN.
func (s *Series) full(row, into []float64) []float64 {
	into = into[:0]
	for _, k := range s.positions {
		if k < 0 {
			into = append(into, math.NaN())
		} else {
			into = append(into, row[k])
		}
	}
	return into
}

// Row returns an empty row with room for Width values, for Append: one
// a sealed block no longer needs, when there is one.
func (s *Series) Row() []float64 {
	if n := len(s.spare); n > 0 {
		row := s.spare[n-1]
		s.spare = s.spare[:n-1]
		return row[:0]
	}
	return make([]float64, 0, s.Width()) // exact: a row grown by append would keep up to twice its size
}

// Append adds a row (Width values: every column but those left out). The
// series owns it from then on: it keeps it until it is sealed, then Row
// may hand it out again.
func (s *Series) Append(row []float64) {
	s.open = append(s.open, row)
	if len(s.open) >= openRows+blockRows {
		var block []byte
		block, s.scratch = seal(s.open[:blockRows], s.Width(), s.scratch)
		s.blocks = append(s.blocks, block)
		s.held += len(block)
		for _, r := range s.open[:blockRows] {
			if cap(r) >= s.Width() && len(s.spare) < blockRows { // a caller that never asks Row for one leaves the rest to the collector
				s.spare = append(s.spare, r)
			}
		}
		n := copy(s.open, s.open[blockRows:])
		clear(s.open[n:])
		s.open = s.open[:n]
		if limit := cmp.Or(s.spillAt, spillAbove); s.held > limit {
			s.spillBlocks()
		}
	}
}

// Add adds d to row i's cell in column. Several additions to one sealed cell
// are summed apart and added to it at once when it is read: exact for
// whole counts, which is what late 429s are.
func (s *Series) Add(i, column int, d float64) {
	if column = s.stored(column); column < 0 {
		return // NaN plus d
	}
	sealed := s.sealed() * blockRows
	if i >= sealed {
		s.open[i-sealed][column] += d
		return
	}
	if s.late == nil {
		s.late = map[int]float64{}
	}
	s.late[i*s.Width()+column] += d
}

// Last returns the last row, or nil. With columns left out it is a copy
// with them put back (as NaN); otherwise the row itself.
func (s *Series) Last() []float64 {
	if len(s.open) == 0 {
		return nil
	}
	if row := s.open[len(s.open)-1]; s.positions == nil {
		return row
	} else {
		return s.full(row, nil)
	}
}

// ColumnAt returns the given column of every row.
func (s *Series) ColumnAt(column int) []float64 {
	out := make([]float64, 0, s.Len())
	s.Scan(0, []int{column}, func(_ int, values []float64) bool {
		out = append(out, values[0])
		return true
	})
	return out
}

// Index returns the position of the column named name in Columns, or -1.
func (s *Series) Index(name string) int {
	if s == nil {
		return -1
	}
	for i, c := range s.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// ScanNamed is Scan over the columns named: a series without one of them
// has no rows to scan, as Column returns nil for a missing name.
func (s *Series) ScanNamed(from int, names []string, f func(i int, values []float64) bool) {
	columns := make([]int, len(names))
	for k, name := range names {
		if columns[k] = s.Index(name); columns[k] < 0 {
			return
		}
	}
	s.Scan(from, columns, f)
}

// Scan calls f with the given columns (positions in Columns) of each row from
// row from on, in order: i is the row's index and values[k] its value in
// column columns[k] (NaN for a column left out). values is valid only during
// the call; f returns false to stop. Only the columns asked for are
// unpacked, a block at a time, so a scan holds a block's worth of values
// whatever the series' length. A sealed block the spill file cannot give
// back reads as NaN, and Err says why.
func (s *Series) Scan(from int, columns []int, f func(i int, values []float64) bool) {
	if s == nil {
		return
	}
	stored := make([]int, len(columns))
	last := -1 // the last stored column read
	for k, c := range columns {
		stored[k] = s.stored(c)
		last = max(last, stored[k])
	}
	values := make([]float64, len(columns))
	sealed := s.sealed()
	if from < sealed*blockRows {
		unpacked := make([][]float64, len(columns))
		var split [][]byte
		var buf []byte
		for b := from / blockRows; b < sealed; b++ {
			var data []byte
			data, buf = s.block(b, buf)
			if data != nil {
				split = splitBlock(data, last+1, split)
			}
			for k, c := range stored {
				unpacked[k] = unpacked[k][:0]
				if c < 0 || data == nil {
					for range blockRows {
						unpacked[k] = append(unpacked[k], math.NaN())
					}
					continue
				}
				unpacked[k] = unpackColumn(split[c], blockRows, unpacked[k])
				s.fix(unpacked[k], b*blockRows, c)
			}
			for r := max(0, from-b*blockRows); r < blockRows; r++ {
				for k := range values {
					values[k] = unpacked[k][r]
				}
				if !f(b*blockRows+r, values) {
					return
				}
			}
		}
	}
	first := sealed * blockRows
	for r := max(0, from-first); r < len(s.open); r++ {
		for k, c := range stored {
			if c < 0 {
				values[k] = math.NaN()
			} else {
				values[k] = s.open[r][c]
			}
		}
		if !f(first+r, values) {
			return
		}
	}
}

// block returns sealed block b's bytes, read into buf (grown as needed and
// returned) when the block is in the spill file; nil if it cannot be read.
func (s *Series) block(b int, buf []byte) ([]byte, []byte) {
	if n := s.file.blocks(); b >= n {
		return s.blocks[b-n], buf
	}
	return s.file.read(b, buf)
}

// fix applies the late additions of a stored column to its sealed rows
// from row first, held in values.
func (s *Series) fix(values []float64, first, column int) {
	if len(s.late) == 0 {
		return
	}
	w := s.Width()
	for i := range values {
		if d, ok := s.late[(first+i)*w+column]; ok {
			values[i] += d
		}
	}
}

// Each calls f with every row in order; the row is valid only during the
// call.
func (s *Series) Each(f func(row []float64)) {
	if s == nil {
		return
	}
	s.Scan(0, s.allColumns(), func(_ int, row []float64) bool {
		f(row)
		return true
	})
}

// allColumns returns the position of every column, in order.
func (s *Series) allColumns() []int {
	all := make([]int, len(s.Columns))
	for i := range all {
		all[i] = i
	}
	return all
}

// Err returns the first failure to read sealed rows back from the spill
// file (such rows read as NaN), or nil.
func (s *Series) Err() error {
	if s == nil {
		return nil
	}
	return s.file.failure()
}

// WriteCSV writes the series as CSV with a header row. Numbers are written
// in their shortest exact form, so the output is byte-for-byte reproducible.
func (s *Series) WriteCSV(w io.Writer) error { return s.WriteColumnsCSV(w, nil) }

// WriteColumnsCSV is WriteCSV of the given columns only (positions in Columns,
// in the order given; nil for every column). The rows are read a block at
// a time, as Scan reads them, and their numbers appended to one buffer:
// numbers never need CSV quoting, so only the header goes through the CSV
// writer.
func (s *Series) WriteColumnsCSV(w io.Writer, columns []int) error {
	if columns == nil {
		columns = s.allColumns()
	}
	buffered := bufio.NewWriterSize(w, 1<<16)
	csvWriter := csv.NewWriter(buffered)
	head := make([]string, len(columns))
	for k, c := range columns {
		head[k] = s.Columns[c]
	}
	if err := csvWriter.Write(head); err != nil {
		return err
	}
	if csvWriter.Flush(); csvWriter.Error() != nil {
		return csvWriter.Error()
	}
	var line []byte
	var err error
	s.Scan(0, columns, func(_ int, row []float64) bool {
		line = line[:0]
		for k, v := range row {
			if k > 0 {
				line = append(line, ',')
			}
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
		}
		line = append(line, '\n')
		_, err = buffered.Write(line)
		return err == nil
	})
	if err != nil {
		return err
	}
	if err := s.Err(); err != nil {
		return err
	}
	return buffered.Flush()
}

// ReadCSV reads a series written by WriteCSV.
func ReadCSV(r io.Reader) (*Series, error) {
	csvReader := csv.NewReader(r)
	head, err := csvReader.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the header: %w", err)
	}
	if head[0] != "t_s" {
		return nil, fmt.Errorf("line 1: the header starts with %q, not t_s: not a limitsim timeseries.csv", head[0])
	}
	s := &Series{Columns: slices.Clone(head)}
	csvReader.ReuseRecord = true // each record is parsed into a row at once
	last := math.Inf(-1)
	for line := 2; ; line++ {
		record, err := csvReader.Read()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		row := s.Row()[:len(record)]
		for i, v := range record {
			if row[i], err = strconv.ParseFloat(v, 64); err != nil {
				return nil, fmt.Errorf("line %d, column %s: %q is not a number", line, head[i], v)
			}
		}
		// Each row ends its interval later than the row before.
		if t := row[0]; !(t > last) || math.IsInf(t, 1) {
			return nil, fmt.Errorf("line %d, column t_s: %q is not an instant after the row before's", line, record[0])
		}
		last = row[0]
		s.Append(row)
	}
}

// Column returns a series column by name, or nil.
func (s *Series) Column(name string) []float64 {
	if i := s.Index(name); i >= 0 {
		return s.ColumnAt(i)
	}
	return nil
}

package metrics

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Series is the per-interval time series of a run (timeseries.csv): one row
// per interval, columns named in Columns. Rows are appended with Append;
// all but the last few are kept packed (see pack.go), so a long run's
// series takes a few bytes per value rather than eight.
type Series struct {
	Columns []string
	// pos is each column's place in a stored row, or -1 for a column left
	// out (see leaveOut); nil when every column is stored, in order.
	pos     []int
	width   int             // values in a stored row, when pos is set
	blocks  []block         // sealed rows, blockRows each
	open    [][]float64     // the rows after them, unpacked
	late    map[int]float64 // additions to sealed cells, by row × width + stored column
	scratch []byte          // where seal packs a block before copying it out
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
	return len(s.blocks)*blockRows + len(s.open)
}

// leaveOut marks columns as empty (NaN) in every row, before the first
// Append: their values are not stored, and rows are appended without them.
// Readers see them as NaN, as if every row held NaN there. A run that
// writes no series leaves out its hosts' columns but paused (see
// Recorder.SeriesUnread): with a thousand hosts, four fifths of every row.
func (s *Series) leaveOut(cols []int) {
	if len(cols) == 0 {
		return
	}
	if s.pos == nil {
		s.pos = make([]int, len(s.Columns))
	}
	for _, c := range cols {
		s.pos[c] = -1
	}
	s.width = 0
	for c := range s.pos {
		if s.pos[c] >= 0 {
			s.pos[c] = s.width
			s.width++
		}
	}
}

// Width returns the number of values Append takes in a row: len(Columns)
// less the columns left out.
func (s *Series) Width() int {
	if s.pos == nil {
		return len(s.Columns)
	}
	return s.width
}

// stored returns column col's place in a stored row, or -1 if it is left
// out.
func (s *Series) stored(col int) int {
	if s.pos == nil {
		return col
	}
	return s.pos[col]
}

// full returns a stored row with the columns left out put back, as NaN.
func (s *Series) full(row, into []float64) []float64 {
	into = into[:0]
	for _, k := range s.pos {
		if k < 0 {
			into = append(into, math.NaN())
		} else {
			into = append(into, row[k])
		}
	}
	return into
}

// Append adds a row (Width values: every column but those left out; the
// series keeps it).
func (s *Series) Append(row []float64) {
	s.open = append(s.open, row)
	if len(s.open) >= openRows+blockRows {
		var blk block
		blk, s.scratch = seal(s.open[:blockRows], s.Width(), s.scratch)
		s.blocks = append(s.blocks, blk)
		n := copy(s.open, s.open[blockRows:])
		clear(s.open[n:])
		s.open = s.open[:n]
	}
}

// Add adds d to row i's column col. Several additions to one sealed cell
// are summed apart and added to it at once when it is read: exact for
// whole counts, which is what late 429s are.
func (s *Series) Add(i, col int, d float64) {
	if col = s.stored(col); col < 0 {
		return // NaN plus d
	}
	sealed := len(s.blocks) * blockRows
	if i >= sealed {
		s.open[i-sealed][col] += d
		return
	}
	if s.late == nil {
		s.late = map[int]float64{}
	}
	s.late[i*s.Width()+col] += d
}

// Last returns the last row, or nil. With columns left out it is a copy
// with them put back (as NaN); otherwise the row itself.
func (s *Series) Last() []float64 {
	if len(s.open) == 0 {
		return nil
	}
	if row := s.open[len(s.open)-1]; s.pos == nil {
		return row
	} else {
		return s.full(row, nil)
	}
}

// ColumnAt returns column col of every row.
func (s *Series) ColumnAt(col int) []float64 {
	out := make([]float64, 0, s.Len())
	if col = s.stored(col); col < 0 {
		for range s.Len() {
			out = append(out, math.NaN())
		}
		return out
	}
	for k, b := range s.blocks {
		from := len(out)
		out = unpackColumn(b.cols[col], blockRows, out)
		s.fix(out[from:], k*blockRows, col)
	}
	for _, row := range s.open {
		out = append(out, row[col])
	}
	return out
}

// fix applies the late additions to stored column col of the sealed rows
// from row first held in vals.
func (s *Series) fix(vals []float64, first, col int) {
	if len(s.late) == 0 {
		return
	}
	w := s.Width()
	for i := range vals {
		if d, ok := s.late[(first+i)*w+col]; ok {
			vals[i] += d
		}
	}
}

// Each calls f with every row in order; the row is valid only during the
// call.
func (s *Series) Each(f func(row []float64)) {
	if s == nil {
		return
	}
	w := s.Width()
	var whole []float64 // a stored row with the columns left out put back
	emit := func(row []float64) {
		if s.pos == nil {
			f(row)
			return
		}
		whole = s.full(row, whole)
		f(whole)
	}
	if len(s.blocks) > 0 {
		cols := make([][]float64, w)
		row := make([]float64, w)
		for k, b := range s.blocks {
			for j := range w {
				cols[j] = unpackColumn(b.cols[j], blockRows, cols[j][:0])
				s.fix(cols[j], k*blockRows, j)
			}
			for i := range blockRows {
				for j := range w {
					row[j] = cols[j][i]
				}
				emit(row)
			}
		}
	}
	for _, row := range s.open {
		emit(row)
	}
}

// colResponses429 is the position of the run's 429s in a series row.
const colResponses429 = 4

// quotaColumn reports whether host i's rows have a quota_utilisation
// column: whether the host has a quota.
func quotaColumn(lay *Layout, i int) bool {
	return i < len(lay.Quotas) && lay.Quotas[i] != (QuotaInfo{})
}

// newSeries names the columns of a run's rows: the whole-run columns, then
// seven per limiter, then four or five per host (quota_utilisation only for
// a host with a quota), then two per tenant when the run has 2 to
// MaxListed tenants (tenantSeries). host429 gets the position of each
// host's responses_429 column.
func newSeries(lay Layout) (s *Series, host429 []int) {
	cols := []string{"t_s", "arrivals", "starts", "succeeded", "responses_429", "rejected", "timeouts",
		"in_flight", "in_system", "queue_depth", "blocked_producers", "request_p50_s", "request_p95_s", "request_p99_s"}
	for _, l := range lay.Limiters {
		cols = append(cols, l.Name+".waiting", l.Name+".usage", l.Name+".acquired", l.Name+".utilisation",
			l.Name+".wait_p50_s", l.Name+".wait_p95_s", l.Name+".wait_p99_s")
		if l.Adaptive {
			cols = append(cols, l.Name+".limit")
		}
	}
	for i, h := range lay.Hosts {
		host429 = append(host429, len(cols)+1)
		cols = append(cols, h+".starts", h+".responses_429", h+".quota_usage")
		if quotaColumn(&lay, i) {
			cols = append(cols, h+".quota_utilisation")
		}
		cols = append(cols, h+".paused")
	}
	if tenantSeries(lay) {
		for _, t := range lay.Tenants {
			cols = append(cols, t+".arrivals", t+".succeeded")
		}
	}
	return &Series{Columns: cols}, host429
}

// tenantSeries reports whether a run's rows carry per-tenant columns: with
// 2 to MaxListed tenants (beyond, tenants.csv has each one's totals).
func tenantSeries(lay Layout) bool { return len(lay.Tenants) >= 2 && len(lay.Tenants) <= MaxListed }

// WriteCSV writes the series as CSV with a header row. Numbers are written
// in their shortest exact form, so the output is byte-for-byte reproducible.
func (s *Series) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(s.Columns); err != nil {
		return err
	}
	rec := make([]string, len(s.Columns))
	var err error
	s.Each(func(row []float64) {
		if err != nil {
			return
		}
		for i, v := range row {
			rec[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		err = cw.Write(rec)
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads a series written by WriteCSV.
func ReadCSV(r io.Reader) (*Series, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the header: %w", err)
	}
	if head[0] != "t_s" {
		return nil, fmt.Errorf("line 1: the header starts with %q, not t_s: not a limitsim timeseries.csv", head[0])
	}
	s := &Series{Columns: head}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		row := make([]float64, len(rec))
		for i, v := range rec {
			if row[i], err = strconv.ParseFloat(v, 64); err != nil {
				return nil, fmt.Errorf("line %d, column %s: %q is not a number", line, head[i], v)
			}
		}
		s.Append(row)
	}
}

// Column returns a series column by name, or nil.
func (s *Series) Column(name string) []float64 {
	if s == nil {
		return nil
	}
	for i, c := range s.Columns {
		if c == name {
			return s.ColumnAt(i)
		}
	}
	return nil
}

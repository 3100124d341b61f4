package metrics

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// A packed series reads back bit for bit what was appended: whole numbers,
// decimals, percentiles in seconds, negative zero, NaN, infinities, huge
// and tiny values, long runs of one value, and additions made to rows
// already sealed (a 429 counted back into its interval). Its CSV is the
// CSV of the plain rows. It catches a value decoded to a neighbour (a
// decimal scale off by one, -0 read as 0), a run one too long or short,
// and a late addition lost or applied to the wrong cell.
func TestPackedSeriesReadsBackExactly(t *testing.T) {
	// Six columns fill part of one tile of the columns sealed together;
	// nineteen fill two tiles and part of a third.
	for _, width := range []int{6, 19} {
		packedSeriesReadsBack(t, width, 0)
	}
}

func packedSeriesReadsBack(t *testing.T, width, spillAt int) *Series {
	rng := rand.New(rand.NewPCG(7, 11))
	special := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e300, 5e-324, 0.1, 0.501, 1234.5678, -3, 1 << 52, 1<<50 - 1, 123456.123456789}
	const n = 1000
	cols := []string{"t_s", "count", "run", "decimal", "raw", "special"}
	for j := len(cols); j < width; j++ {
		cols = append(cols, cols[j%6]+strconv.Itoa(j))
	}
	var plain [][]float64
	s := NewSeries(cols)
	s.spillAt = spillAt
	for i := range n {
		six := []float64{float64(i + 1), float64(rng.IntN(5)), float64(i / 300), math.Round(rng.Float64()*1000) / 1000, rng.NormFloat64(), special[rng.IntN(len(special))]}
		row := s.Row()[:width] // rows of sealed blocks come back: none may still be read
		for j := range row {
			row[j] = six[j%6]
			if j >= 6 && j%6 == 4 {
				row[j] = rng.NormFloat64() // raw columns differ from one another
			}
		}
		plain = append(plain, append([]float64(nil), row...))
		s.Append(row)
		if i > 200 && i%17 == 0 { // a late 429, up to 150 rows back
			back := i - rng.IntN(150)
			s.Add(back, 1, 1)
			plain[back][1]++
		}
	}
	if s.Len() != n || s.sealed() == 0 {
		t.Fatalf("%d rows in %d blocks, want %d rows, some sealed", s.Len(), s.sealed(), n)
	}
	if spillAt > 0 && !s.stuck && (s.file.blocks() == 0 || len(s.blocks) > 1) {
		t.Fatalf("%d blocks in the spill file and %d in memory, want all but the last moved out", s.file.blocks(), len(s.blocks))
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for j := range width {
		got := s.ColumnAt(j)
		for i := range n {
			if !same(got[i], plain[i][j]) {
				t.Fatalf("width %d: column %s row %d: %v (bits %x), want %v (bits %x)", width, cols[j], i, got[i], math.Float64bits(got[i]), plain[i][j], math.Float64bits(plain[i][j]))
			}
		}
	}
	var packed, want bytes.Buffer
	if err := s.WriteCSV(&packed); err != nil {
		t.Fatal(err)
	}
	want.WriteString(strings.Join(cols, ",") + "\n")
	for _, row := range plain {
		rec := make([]string, width)
		for j, v := range row {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		want.WriteString(strings.Join(rec, ",") + "\n")
	}
	if packed.String() != want.String() {
		t.Error("the CSV of the packed series differs from the CSV of its rows")
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if spillAt > 0 {
		return s
	}
	var size int
	for _, b := range s.blocks {
		size += len(b)
	}
	if per := float64(size) / float64(len(s.blocks)*blockRows*width); per > 5 {
		t.Errorf("%.1f bytes a value packed, want far below the 8 of a float64", per)
	}
	return s
}

// The one-multiplication test for a decimal of up to nine places misses
// none that the search over the nine scales finds, and passes none it
// does not: over decimals of every scale and size below 10⁶, their
// neighbours one ulp away, and arbitrary floats (usage fractions, rates).
// A value packs to the same bytes as with the search alone.
func TestDecimalTestMatchesTheSearch(t *testing.T) {
	search := func(v float64) (int, bool) {
		for k := 1; k < len(pow10); k++ {
			m := math.Round(v * pow10[k])
			if math.Float64bits(m/pow10[k]) == math.Float64bits(v) && math.Abs(m) < maxExact {
				return k, true
			}
		}
		return 0, false
	}
	rng := rand.New(rand.NewPCG(13, 17))
	var vs []float64
	for range 100_000 {
		k := 1 + rng.IntN(9)
		m := rng.Int64N(int64(1e6 * pow10[k]))
		if rng.IntN(2) == 0 {
			m = rng.Int64N(1 << uint(1+rng.IntN(40)))
		}
		v := float64(m) / pow10[k]
		if rng.IntN(2) == 0 {
			v = -v
		}
		vs = append(vs, v, math.Nextafter(v, math.Inf(1)), math.Nextafter(v, math.Inf(-1)), rng.Float64()*math.Pow(10, float64(rng.IntN(12)-6)))
	}
	hits := 0
	for _, v := range vs {
		if v == 0 || math.Abs(v) >= 1e6 {
			continue
		}
		_, want := search(v)
		if got := isDecimal9(v); got != want {
			t.Fatalf("%v (bits %x): one test says %v, the search %v", v, math.Float64bits(v), got, want)
		}
		if want {
			hits++
		}
		var ref []byte
		if k, ok := search(v); ok && v != math.Trunc(v) {
			ref = binary.AppendUvarint(nil, zigzag(int64(math.Round(v*pow10[k])))<<6|uint64(k)<<2|tagDecimal)
		} else if v != math.Trunc(v) {
			ref = binary.LittleEndian.AppendUint64([]byte{tagRaw}, math.Float64bits(v))
		} else {
			continue
		}
		if got := packValue(nil, v); !bytes.Equal(got, ref) {
			t.Fatalf("%v packs to %x, want %x", v, got, ref)
		}
	}
	if hits < len(vs)/8 {
		t.Fatalf("only %d of %d values are decimals: the test does not exercise them", hits, len(vs))
	}
}

// BenchmarkSealHosts seals blocks of rows as wide as a thousand hosts'
// series (five columns each: counts, usage and utilisation fractions, a
// paused share that is mostly zero), the work a run of that scale does at
// every blockRows-th interval.
func BenchmarkSealHosts(b *testing.B) {
	const hosts = 1000
	rng := rand.New(rand.NewPCG(3, 5))
	rows := make([][]float64, blockRows)
	for i := range rows {
		row := make([]float64, 5*hosts)
		for h := range hosts {
			row[5*h] = float64(rng.IntN(3))             // starts
			row[5*h+1] = float64(rng.IntN(40) / 39)     // 429s, seldom
			row[5*h+2] = rng.Float64()                  // quota usage
			row[5*h+3] = float64(row[5*h]) / 1.2        // utilisation
			row[5*h+4] = float64(rng.IntN(50)/49) * 0.5 // paused share
		}
		rows[i] = row
	}
	s := NewSeries(make([]string, 5*hosts))
	for range openRows {
		s.Append(rows[0])
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range rows { // the last of them seals a block
			s.Append(r)
		}
		if len(s.blocks) != 1 {
			b.Fatalf("%d blocks sealed", len(s.blocks))
		}
		s.blocks, s.held, s.spare = s.blocks[:0], 0, s.spare[:0]
	}
}

// A series with columns left out reads as one that stores NaN in them:
// through sealed blocks and open rows, with late additions to sealed
// cells of the stored columns (and to a left-out one, which stays NaN),
// by Each, ColumnAt, Column, Last, Len and WriteCSV. It catches a column
// read from the wrong stored place, late additions keyed by the wrong row
// width, rows handed out without the left-out columns, and a left-out
// column read with the wrong length.
func TestLeftOutColumnsReadAsNaN(t *testing.T) {
	cols := []string{"t_s", "a", "b", "c", "d", "e", "f"}
	out := []int{1, 4}
	full := NewSeries(cols)
	part := NewSeries(cols)
	part.leaveOut(out)
	if part.Width() != len(cols)-len(out) || full.Width() != len(cols) {
		t.Fatalf("widths %d and %d", part.Width(), full.Width())
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const rows = 2*blockRows + openRows + 7
	added := map[[2]int]float64{{3, 2}: 3, {blockRows + 9, 6}: 0.5, {rows - 2, 3}: 1} // cell → what Add adds
	want := map[[2]int]float64{}
	for i := range rows {
		whole := make([]float64, len(cols))
		var stored []float64
		for j := range whole {
			v := float64(i)
			if j > 0 {
				v = float64(rng.IntN(4)) * 0.25 // runs and short decimals
			}
			if j == 1 || j == 4 {
				v = math.NaN()
			} else {
				stored = append(stored, v)
			}
			whole[j] = v
			if d, ok := added[[2]int{i, j}]; ok {
				want[[2]int{i, j}] = v + d
			}
		}
		full.Append(whole)
		part.Append(stored)
	}
	for _, s := range []*Series{full, part} {
		s.Add(3, 2, 1)             // a sealed cell, stored
		s.Add(3, 2, 2)             // the same cell again
		s.Add(blockRows+9, 6, 0.5) // a sealed cell of the second block
		s.Add(rows-2, 3, 1)        // an open row
		s.Add(5, 4, 7)             // a left-out column
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	if full.Len() != rows || part.Len() != rows {
		t.Fatalf("lengths %d and %d, want %d", full.Len(), part.Len(), rows)
	}
	for j, c := range cols {
		a, b := full.ColumnAt(j), part.Column(c)
		if len(a) != rows || len(b) != rows {
			t.Fatalf("column %s: %d and %d values", c, len(a), len(b))
		}
		for i := range a {
			if !same(a[i], b[i]) {
				t.Fatalf("column %s row %d: %v stored, %v left out", c, i, a[i], b[i])
			}
		}
	}
	var fullRows, partRows [][]float64
	full.Each(func(row []float64) { fullRows = append(fullRows, append([]float64(nil), row...)) })
	part.Each(func(row []float64) { partRows = append(partRows, append([]float64(nil), row...)) })
	if len(fullRows) != rows || len(partRows) != rows {
		t.Fatalf("Each gave %d and %d rows", len(fullRows), len(partRows))
	}
	for i := range fullRows {
		for j := range cols {
			if !same(fullRows[i][j], partRows[i][j]) {
				t.Fatalf("row %d column %s: %v and %v", i, cols[j], fullRows[i][j], partRows[i][j])
			}
		}
	}
	for cell, v := range want {
		if got := part.ColumnAt(cell[1])[cell[0]]; got != v {
			t.Fatalf("row %d column %s: %v after the additions, want %v", cell[0], cols[cell[1]], got, v)
		}
	}
	a, b := full.Last(), part.Last()
	for j := range cols {
		if !same(a[j], b[j]) {
			t.Fatalf("last row column %s: %v and %v", cols[j], a[j], b[j])
		}
	}
	var x, y bytes.Buffer
	if err := full.WriteCSV(&x); err != nil {
		t.Fatal(err)
	}
	if err := part.WriteCSV(&y); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x.Bytes(), y.Bytes()) {
		t.Fatal("the CSV differs with columns left out")
	}
}

// A series that moved its sealed rows to the spill file reads back the
// same bits as one that kept them (through ColumnAt, Each, Scan from any
// row, and WriteCSV, late additions included), leaves no file behind in
// the temporary folder, and lets go of it on Close (a read after it is
// an error, not rows from elsewhere). It catches a block
// read from the wrong place of the file (an end taken for a start), rows
// lost between two spills, a header read as data, and a recycled row
// still read as an open one.
func TestSpilledSeriesReadsBackExactly(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	for _, width := range []int{6, 40} {
		s := packedSeriesReadsBack(t, width, 1)
		if names, _ := filepath.Glob(filepath.Join(dir, "limitsim-series-*")); runtime.GOOS == "linux" && len(names) > 0 {
			t.Errorf("%v left in the temporary folder while the series is open", names)
		}
		kept := packedSeriesReadsBack(t, width, 0)
		cols := []int{width - 1, 0, 3}
		for _, from := range []int{0, 1, blockRows - 1, blockRows, 3*blockRows + 5, s.Len() - 1, s.Len()} {
			var got, want [][]float64
			s.Scan(from, cols, func(i int, vals []float64) bool {
				got = append(got, append([]float64{float64(i)}, vals...))
				return true
			})
			kept.Scan(from, cols, func(i int, vals []float64) bool {
				want = append(want, append([]float64{float64(i)}, vals...))
				return true
			})
			if len(got) != s.Len()-from || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("width %d: a scan from row %d gave %d rows unlike the series kept in memory", width, from, len(got))
			}
		}
		stops := 0
		s.Scan(blockRows+3, []int{0}, func(i int, vals []float64) bool {
			stops++
			if i != blockRows+3 || vals[0] != float64(blockRows+4) {
				t.Fatalf("first row scanned: %d with t_s %v", i, vals[0])
			}
			return false
		})
		if stops != 1 {
			t.Fatalf("a scan went on %d rows after f returned false", stops-1)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if !s.file.closed {
			t.Fatal("the spill file is still held after Close")
		}
		if v := s.ColumnAt(0)[0]; !math.IsNaN(v) || s.Err() == nil || s.Close() != nil {
			t.Fatalf("after Close the first row reads %v with error %v, want NaN and an error (and a second Close a no-op)", v, s.Err())
		}
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "limitsim-series-*")); len(names) > 0 {
		t.Errorf("%v left in the temporary folder", names)
	}
}

// A series whose spill file cannot be made keeps its blocks in memory and
// reads back as before.
func TestSeriesKeepsBlocksWhenItCannotSpill(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	s := packedSeriesReadsBack(t, 6, 1)
	if s.file != nil || !s.stuck || s.sealed() == 0 || len(s.blocks) != s.sealed() {
		t.Fatalf("file %v, stuck %v, %d of %d blocks in memory", s.file, s.stuck, len(s.blocks), s.sealed())
	}
}

package report

import (
	"math"

	"github.com/limitsim/limitsim/report/metrics"
)

// column is one line of a time chart as read from a run's series: f of
// the values of the columns named in cols, row by row.
type column struct {
	cols []string
	f    func(v []float64) float64
}

// rate is a count column per second (a count per interval ÷ the interval).
func rate(r *metrics.Results, name string) column {
	return column{[]string{name}, func(v []float64) float64 { return v[0] / r.IntervalS }}
}

// plain is a column as it is.
func plain(name string) column {
	return column{[]string{name}, func(v []float64) float64 { return v[0] }}
}

// timeLines is what a time chart draws of some columns of a run's series:
// x, the start of each drawn interval (see drawnRows), and each column's ys.
// A run of more than thinAbove drawn intervals is read thinned, as thin
// would thin it: x is then each of thinColumns columns' mean x, ys their
// means and lo, hi the bands from their minimums to their maximums. So a
// chart holds a bounded number of points whatever the run's length, and
// the series is read a block at a time, never a whole column.
//
// What a chart decides from the whole of a line stays exact when it is
// thinned: each line's peak (the largest value of every row, the one after
// the drawn ones included, as in a whole column) and how far apart each two
// lines come (the largest difference between them in any row, +Inf where
// one has a gap and the other not), which unhide compares.
type timeLines struct {
	x      []float64
	ys     [][]float64 // nil for a line with a column the series does not have
	lo, hi [][]float64 // nil unless thinned
	peaks  []float64   // thinned: each line's peak (0 if none)
	apart  [][]float64 // thinned: apart[k][j], j < k, how far lines k and j come apart
}

// line returns line k as a chart series.
func (t *timeLines) line(k int, name string, dashed bool) series {
	sr := series{name: name, ys: t.ys[k], dashed: dashed}
	if t.lo != nil {
		sr.lo, sr.hi = t.lo[k], t.hi[k]
		sr.from, sr.at = t, k
	}
	return sr
}

// peakOf folds y into a running peak as a whole column's is taken: the
// largest value that is not NaN, from 0.
func peakOf(top, y float64) float64 {
	if !math.IsNaN(y) {
		return math.Max(top, y)
	}
	return top
}

// apartBy folds the values of two lines in one row into how far apart
// they come (see timeLines), as coincide compares two columns.
func apartBy(d, a, b float64) float64 {
	if math.IsNaN(a) != math.IsNaN(b) {
		return math.Inf(1)
	}
	if g := math.Abs(a - b); g > d { // NaN (two gaps, or two equal infinities) is no difference
		return g
	}
	return d
}

// drawnRows returns how many of s's rows the time charts draw: all but a
// last interval that the run ended inside, whose counts cover part of it
// and which as a rate would fall off a cliff that never happened. A chart
// draws each row at its interval's start (the series stores ends).
func drawnRows(r *metrics.Results, s *metrics.Series) int {
	if s.Index("t_s") < 0 {
		return 0
	}
	n := s.Len()
	if n > 1 {
		s.ScanNamed(n-1, []string{"t_s"}, func(_ int, t []float64) bool {
			if t[0] > r.ElapsedS+1e-9 {
				n--
			}
			return false
		})
	}
	return n
}

// readLines reads cs from s (see timeLines). Short, each line has a value
// for every row, the one after the drawn ones included, as a column has.
func readLines(r *metrics.Results, s *metrics.Series, cs ...column) timeLines {
	drawn := drawnRows(r, s)
	thinned := drawn > thinAbove
	names, idx, have := scannedColumns(s, cs)
	t := timeLines{ys: make([][]float64, len(cs))}
	var row []float64 // thinned: the lines' values in the row read
	if thinned {
		row = make([]float64, len(cs))
		t.startThinned(len(cs))
	}
	args := make([][]float64, len(cs))
	for k := range cs {
		args[k] = make([]float64, len(idx[k]))
	}
	per := (drawn + thinColumns - 1) / max(1, thinColumns)
	var sx float64
	bins := make([]bin, len(cs))
	for k := range bins {
		bins[k].reset()
	}
	s.ScanNamed(0, names, func(i int, v []float64) bool {
		x := v[0] - r.IntervalS
		if !thinned && i < drawn {
			t.x = append(t.x, x)
		}
		for k, c := range cs {
			if !have[k] {
				continue
			}
			for j, p := range idx[k] {
				args[k][j] = v[p]
			}
			y := c.f(args[k])
			if !thinned {
				t.ys[k] = append(t.ys[k], y)
				continue
			}
			row[k] = y
			t.peaks[k] = peakOf(t.peaks[k], y)
			for j := range k {
				if have[j] {
					t.apart[k][j] = apartBy(t.apart[k][j], y, row[j])
				}
			}
			if i < drawn {
				bins[k].add(y)
			}
		}
		if !thinned || i >= drawn {
			return true
		}
		sx += x
		if a := i - i%per; i == min(a+per, drawn)-1 { // the column's last point
			t.x = append(t.x, sx/float64(i+1-a))
			sx = 0
			for k := range cs {
				if have[k] {
					t.ys[k], t.lo[k], t.hi[k] = bins[k].emit(t.ys[k], t.lo[k], t.hi[k])
				}
				bins[k].reset()
			}
		}
		return true
	})
	for k := range cs {
		if !have[k] {
			t.ys[k] = nil
			if thinned {
				t.lo[k], t.hi[k] = nil, nil
			}
		}
	}
	return t
}

// scannedColumns lists the series' columns that the lines cs read, "t_s"
// first and each once, with each line's columns' places in a scanned row
// (idx) and whether the series has all of a line's columns (have).
func scannedColumns(s *metrics.Series, cs []column) (names []string, idx [][]int, have []bool) {
	names = []string{"t_s"}
	at := map[string]int{"t_s": 0}
	idx = make([][]int, len(cs))
	have = make([]bool, len(cs))
	for k, c := range cs {
		have[k] = true
		for _, n := range c.cols {
			if s.Index(n) < 0 {
				have[k] = false
				break
			}
			if _, ok := at[n]; !ok {
				at[n] = len(names)
				names = append(names, n)
			}
			idx[k] = append(idx[k], at[n])
		}
	}
	return names, idx, have
}

// startThinned makes room for n thinned lines' bands, peaks and distances
// apart.
func (t *timeLines) startThinned(n int) {
	t.lo, t.hi = make([][]float64, n), make([][]float64, n)
	t.peaks, t.apart = make([]float64, n), make([][]float64, n)
	for k := range t.apart {
		t.apart[k] = make([]float64, k)
	}
}

// bin gathers the finite values of one thinned column of one line.
type bin struct {
	sum, lo, hi float64
	n           int
}

func (b *bin) reset() { *b = bin{lo: math.Inf(1), hi: math.Inf(-1)} }

func (b *bin) add(y float64) {
	if !math.IsNaN(y) && !math.IsInf(y, 0) {
		b.sum += y
		b.n++
		b.lo, b.hi = math.Min(b.lo, y), math.Max(b.hi, y)
	}
}

// emit appends the column's mean, minimum and maximum: NaN in all three
// (a gap) when it had no finite value.
func (b *bin) emit(mean, lo, hi []float64) ([]float64, []float64, []float64) {
	if b.n == 0 {
		return append(mean, math.NaN()), append(lo, math.NaN()), append(hi, math.NaN())
	}
	return append(mean, b.sum/float64(b.n)), append(lo, b.lo), append(hi, b.hi)
}

// anyValue reports whether column name of s holds a value other than 0
// (and, with gaps, other than NaN: no data either); false for a missing
// column.
func anyValue(s *metrics.Series, name string, gaps bool) bool {
	return anyValues(s, []string{name}, gaps)[0]
}

// anyValues is anyValue of each of names, in one pass over s.
func anyValues(s *metrics.Series, names []string, gaps bool) []bool {
	found := make([]bool, len(names))
	var cols, of []int // the columns s has, and their places in names
	for k, n := range names {
		if c := s.Index(n); c >= 0 {
			cols, of = append(cols, c), append(of, k)
		}
	}
	left := len(cols)
	s.Scan(0, cols, func(_ int, v []float64) bool {
		for j, x := range v {
			if k := of[j]; !found[k] && x != 0 && !(gaps && math.IsNaN(x)) {
				found[k] = true
				left--
			}
		}
		return left > 0
	})
	return found
}

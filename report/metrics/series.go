package metrics

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// Series is the per-interval time series of a run (timeseries.csv): one row
// per interval, columns named in Columns.
type Series struct {
	Columns []string
	Rows    [][]float64
}

// Fixed column positions of a series row: the whole-run columns first,
// then three per limiter, then four per host.
const (
	colResponses429  = 4
	firstLimiterCol  = 11
	colsPerLimiter   = 3
	colsPerHost      = 4
	hostResponses429 = 1 // within a host's columns
)

// hostColumn is the first column of host in a layout with lims limiters.
func hostColumn(lims, host int) int {
	return firstLimiterCol + colsPerLimiter*lims + colsPerHost*host
}

func newSeries(lay Layout) *Series {
	cols := []string{"t_s", "arrivals", "starts", "succeeded", "responses_429", "rejected", "timeouts",
		"in_flight", "in_system", "queue_depth", "blocked_producers"}
	for _, l := range lay.Limiters {
		cols = append(cols, l.Name+".waiting", l.Name+".usage", l.Name+".acquired")
	}
	for _, h := range lay.Hosts {
		cols = append(cols, h+".starts", h+".responses_429", h+".quota_usage", h+".paused")
	}
	return &Series{Columns: cols}
}

// WriteCSV writes the series as CSV with a header row. Numbers are written
// in their shortest exact form, so the output is byte-for-byte reproducible.
func (s *Series) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(s.Columns); err != nil {
		return err
	}
	rec := make([]string, len(s.Columns))
	for _, row := range s.Rows {
		for i, v := range row {
			rec[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
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
		s.Rows = append(s.Rows, row)
	}
}

// Column returns a series column by name, or nil.
func (s *Series) Column(name string) []float64 {
	if s == nil {
		return nil
	}
	for i, c := range s.Columns {
		if c == name {
			out := make([]float64, len(s.Rows))
			for j, row := range s.Rows {
				out[j] = row[i]
			}
			return out
		}
	}
	return nil
}

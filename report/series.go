package report

import (
	"encoding/csv"
	"io"
	"strconv"
)

// Series is the per-interval time series of a run (timeseries.csv): one row
// per interval, columns named in Columns.
type Series struct {
	Columns []string
	Rows    [][]float64
}

func newSeries(lay Layout) *Series {
	cols := []string{"t_s", "arrivals", "starts", "succeeded", "responses_429", "rejected", "timeouts",
		"in_flight", "in_system", "queue_depth", "blocked_producers"}
	for _, l := range lay.Limiters {
		cols = append(cols, l.Name+".waiting", l.Name+".usage", l.Name+".acquired")
	}
	for _, h := range lay.Hosts {
		cols = append(cols, h+".responses_429", h+".quota_usage", h+".paused")
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

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

// colResponses429 is the position of the run's 429s in a series row.
const colResponses429 = 4

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
		if i < len(lay.Quotas) && lay.Quotas[i] != (QuotaInfo{}) {
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

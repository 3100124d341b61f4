package metrics

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
)

// A run's output folder lists every tenant and every scope in metrics.json
// up to MaxListed of them; beyond, metrics.json lists the ListedWorst with
// the longest p99 wait (TenantsTotal and ScopesTotal say how many there
// are) and the complete lists are in tenants.csv and scopes.csv, which are
// written whenever there is more than one tenant or a scoped limiter.
const (
	MaxListed   = 100
	ListedWorst = 20
)

// ByWait ranks tenants by p99 wait, longest first, then by success rate,
// lowest first.
func ByWait(a, b TenantStats) int {
	if c := cmp.Compare(b.WaitS.P99, a.WaitS.P99); c != 0 {
		return c
	}
	return cmp.Compare(a.SuccessRate, b.SuccessRate)
}

// ByThrottled ranks hosts by 429s, most first, then by attempts.
func ByThrottled(a, b UpstreamStats) int {
	if c := cmp.Compare(b.Throttled, a.Throttled); c != 0 {
		return c
	}
	return cmp.Compare(b.Attempts, a.Attempts)
}

// ShownHosts returns the hosts that reports, charts and the listed
// timeseries.csv detail: every host, in the scenario's order, up to
// ListedWorst of them; otherwise the ListedWorst with the most 429s (then
// the most attempts), in the scenario's order.
func ShownHosts(r *Results) []UpstreamStats {
	if len(r.Upstreams) <= ListedWorst {
		return r.Upstreams
	}
	keep := map[string]bool{}
	for _, u := range Worst(r.Upstreams, ListedWorst, ByThrottled) {
		keep[u.Host] = true
	}
	var out []UpstreamStats
	for _, u := range r.Upstreams {
		if keep[u.Host] {
			out = append(out, u)
		}
	}
	return out
}

// ListedColumns returns the columns of s that an output folder's
// timeseries.csv holds, in order: with more than MaxListed hosts, the
// per-host columns of the hosts ShownHosts leaves out are not among them
// (the run-wide columns still count every host); nil means every column.
func ListedColumns(r *Results, s *Series) []int {
	if len(r.Upstreams) <= MaxListed || s == nil {
		return nil
	}
	shown := map[string]bool{}
	for _, u := range ShownHosts(r) {
		shown[u.Host] = true
	}
	drop := map[string]bool{}
	for _, u := range r.Upstreams {
		if !shown[u.Host] {
			for _, suffix := range hostColumnSuffixes {
				drop[u.Host+suffix] = true
			}
		}
	}
	keep := []int{}
	for i, c := range s.Columns {
		if !drop[c] {
			keep = append(keep, i)
		}
	}
	return keep
}

// scopeByWait ranks scopes by p99 wait, longest first, then by
// utilisation, highest first.
func scopeByWait(a, b ScopeStats) int {
	if c := cmp.Compare(b.WaitS.P99, a.WaitS.P99); c != 0 {
		return c
	}
	return cmp.Compare(b.Utilisation, a.Utilisation)
}

// Worst returns the n first of xs by rank (ties in their order), or xs
// itself when it holds at most n.
func Worst[T any](xs []T, n int, rank func(a, b T) int) []T {
	if len(xs) <= n {
		return xs
	}
	if n <= 0 {
		return nil
	}
	// A selection, not a sort: keep the n first seen so far in rank order;
	// most elements rank after the last kept and cost one comparison.
	top := make([]T, 0, n+1)
	for _, x := range xs {
		if len(top) == n && rank(x, top[n-1]) >= 0 {
			continue
		}
		// After every kept element that ranks at or before x: ties stay in
		// their order.
		i := sort.Search(len(top), func(i int) bool { return rank(x, top[i]) < 0 })
		top = slices.Insert(top, i, x)
		if len(top) > n {
			top = top[:n]
		}
	}
	return top
}

// Listed returns the results as an output folder's metrics.json holds them:
// a copy whose tenant and scope lists are cut to the ListedWorst by p99
// wait when they are longer than MaxListed. r is not changed.
func Listed(r *Results) *Results {
	out := *r
	if len(r.Tenants) > MaxListed {
		out.Tenants = Worst(r.Tenants, ListedWorst, ByWait)
	}
	out.Limiters = slices.Clone(r.Limiters)
	for i := range out.Limiters {
		if l := &out.Limiters[i]; len(l.Scopes) > MaxListed {
			l.Scopes = Worst(l.Scopes, ListedWorst, scopeByWait)
		}
	}
	return &out
}

var distColumns = []string{"wait_count", "wait_mean_s", "wait_p50_s", "wait_p90_s", "wait_p99_s", "wait_max_s"}

func distCells(d Dist) []string {
	return []string{strconv.FormatInt(d.Count, 10), num(d.Mean), num(d.P50), num(d.P90), num(d.P99), num(d.Max)}
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// WriteTenantsCSV writes every tenant, in the scenario's order (tenants.csv).
func WriteTenantsCSV(w io.Writer, r *Results) error {
	csvWriter := csv.NewWriter(w)
	head := append([]string{"tenant", "arrived", "succeeded", "arrival_share", "admitted_share", "success_rate"}, distColumns...)
	if err := csvWriter.Write(head); err != nil {
		return err
	}
	for _, t := range r.Tenants {
		row := append([]string{t.Name, strconv.FormatInt(t.Arrived, 10), strconv.FormatInt(t.Succeeded, 10),
			num(t.ArrivalShare), num(t.Share), num(t.SuccessRate)}, distCells(t.WaitS)...)
		if err := csvWriter.Write(row); err != nil {
			return err
		}
	}
	csvWriter.Flush()
	return csvWriter.Error()
}

// WriteScopesCSV writes every scope of every scoped limiter (scopes.csv).
func WriteScopesCSV(w io.Writer, r *Results) error {
	csvWriter := csv.NewWriter(w)
	head := append(append([]string{"limiter", "scope", "acquired", "rejected", "timeouts", "p_wait"}, distColumns...), "utilisation")
	if err := csvWriter.Write(head); err != nil {
		return err
	}
	for _, l := range r.Limiters {
		for _, s := range l.Scopes {
			row := append(append([]string{l.Name, s.Key, strconv.FormatInt(s.Acquired, 10), strconv.FormatInt(s.Rejected, 10),
				strconv.FormatInt(s.Timeouts, 10), num(s.PWait)}, distCells(s.WaitS)...), num(s.Utilisation))
			if err := csvWriter.Write(row); err != nil {
				return err
			}
		}
	}
	csvWriter.Flush()
	return csvWriter.Error()
}

// HasEntities reports whether a run's folder gets tenants.csv (more than
// one tenant) and scopes.csv (a scoped limiter).
func HasEntities(r *Results) (tenants, scopes bool) {
	for _, l := range r.Limiters {
		scopes = scopes || len(l.Scopes) > 0
	}
	return len(r.Tenants) > 1, scopes
}

// cells reads a CSV with the expected header and hands each row's cells to
// row, naming the line of any error.
func cells(in io.Reader, head []string, row func(record []string, f func(i int) float64, n func(i int) int64) error) error {
	csvReader := csv.NewReader(in)
	got, err := csvReader.Read()
	if err != nil {
		return fmt.Errorf("reading the header: %w", err)
	}
	if !slices.Equal(got, head) {
		return fmt.Errorf("header %v, want %v", got, head)
	}
	for line := 2; ; line++ {
		record, err := csvReader.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var bad error
		f := func(i int) float64 {
			v, err := strconv.ParseFloat(record[i], 64)
			if err != nil && bad == nil {
				bad = fmt.Errorf("line %d, column %s: %q is not a number", line, head[i], record[i])
			}
			return v
		}
		n := func(i int) int64 {
			v, err := strconv.ParseInt(record[i], 10, 64)
			if err != nil && bad == nil {
				bad = fmt.Errorf("line %d, column %s: %q is not a whole number", line, head[i], record[i])
			}
			return v
		}
		if err := row(record, f, n); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if bad != nil {
			return bad
		}
	}
}

func readDist(f func(int) float64, n func(int) int64, at int) Dist {
	return Dist{Count: n(at), Mean: f(at + 1), P50: f(at + 2), P90: f(at + 3), P99: f(at + 4), Max: f(at + 5)}
}

// ReadTenantsCSV replaces r's tenants with those of tenants.csv.
func ReadTenantsCSV(in io.Reader, r *Results) error {
	head := append([]string{"tenant", "arrived", "succeeded", "arrival_share", "admitted_share", "success_rate"}, distColumns...)
	var tenants []TenantStats
	err := cells(in, head, func(record []string, f func(int) float64, n func(int) int64) error {
		tenants = append(tenants, TenantStats{Name: record[0], Arrived: n(1), Succeeded: n(2), ArrivalShare: f(3), Share: f(4), SuccessRate: f(5), WaitS: readDist(f, n, 6)})
		return nil
	})
	if err != nil {
		return err
	}
	r.Tenants = tenants
	return nil
}

// ReadScopesCSV replaces the scopes of r's limiters with those of
// scopes.csv.
func ReadScopesCSV(in io.Reader, r *Results) error {
	head := append(append([]string{"limiter", "scope", "acquired", "rejected", "timeouts", "p_wait"}, distColumns...), "utilisation")
	byName := map[string][]ScopeStats{}
	err := cells(in, head, func(record []string, f func(int) float64, n func(int) int64) error {
		byName[record[0]] = append(byName[record[0]], ScopeStats{Key: record[1], Acquired: n(2), Rejected: n(3), Timeouts: n(4), PWait: f(5),
			WaitS: readDist(f, n, 6), Utilisation: f(12)})
		return nil
	})
	if err != nil {
		return err
	}
	for i := range r.Limiters {
		if s, ok := byName[r.Limiters[i].Name]; ok {
			r.Limiters[i].Scopes = s
		}
	}
	return nil
}

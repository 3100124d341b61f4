package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/limitsim/limitsim/report/metrics"
)

// secs renders seconds compactly with a unit that suits the magnitude.
func secs(s float64) string {
	if s == 0 {
		return "0"
	}
	// The unit is chosen by the value as printed, three significant
	// digits: 0.9998s is 1s, not 1e+03ms.
	for _, u := range []struct {
		scale float64
		name  string
	}{{1e6, "µs"}, {1e3, "ms"}} {
		if v := s * u.scale; roundedBelow(v, 1000) {
			return human(v, 3) + u.name
		}
	}
	if roundedBelow(s, 1000) {
		return human(s, 3) + "s"
	}
	return human(s, 4) + "s" // 40,000s, not 4e+04s
}

// roundedBelow reports whether |v|, rounded to three significant digits
// as human rounds it, is below limit.
func roundedBelow(v, limit float64) bool {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(math.Abs(v), 'g', 3, 64), 64)
	return r < limit
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// human renders a number for people: sig significant digits, never in
// scientific notation, thousands grouped with commas from 1,000 up (as
// Grouped writes counts, so that one table never mixes 17296 and 15,777),
// and values below a billionth as 0.
func human(x float64, sig int) string {
	a := math.Abs(x)
	switch {
	case a < 1e-9 || math.IsNaN(x):
		return "0"
	case a >= 1e3:
		return Grouped(int64(math.Round(x)))
	}
	decimals := max(0, sig-1-int(math.Floor(math.Log10(a))))
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Grouped writes n with commas between groups of three digits (15,777).
func Grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// utilText is a limiter's utilisation, with its busiest scope's when that
// differs.
func utilText(l metrics.LimiterStats) string {
	if l.Scope == "global" || l.UtilisationMax == l.Utilisation {
		return pct(l.Utilisation)
	}
	return pct(l.Utilisation) + " (max " + pct(l.UtilisationMax) + ")"
}

// overridesText lists a fix's overrides, sorted by key: KEY = VALUE, or
// "KEY removed".
func overridesText(f metrics.Fix) string {
	keys := make([]string, 0, len(f.Set))
	for k := range f.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		switch v := f.Set[k].(type) {
		case nil:
			parts[i] = k + " removed"
		default:
			parts[i] = k + " = " + metrics.SetValue(v)
		}
	}
	return strings.Join(parts, ", ")
}

// SetArgs writes overrides as the KEY=VALUE arguments of --set that apply
// them, in key order: a string as it is, an empty value to remove a key,
// anything else as TOML.
func SetArgs(set map[string]any) []string {
	keys := slices.Sorted(maps.Keys(set))
	args := make([]string, len(keys))
	for i, k := range keys {
		v := ""
		switch x := set[k].(type) {
		case nil:
		case string:
			v = x
		default:
			v = metrics.SetValue(x)
		}
		args[i] = k + "=" + v
	}
	return args
}

// SetFlags writes overrides as the --set flags that apply them, in key
// order, each quoted for a POSIX shell where it needs to be.
func SetFlags(set map[string]any) string {
	args := SetArgs(set)
	for i, arg := range args {
		if strings.ContainsAny(arg, " \"'[]$`*?;&|<>(){}!#~") {
			arg = "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
		}
		args[i] = "--set " + arg
	}
	return strings.Join(args, " ")
}

// quotaText is a host's quota utilisation, or n/a without a quota.
func quotaText(u metrics.UpstreamStats) string {
	if u.QuotaUtilisation == nil {
		return "n/a"
	}
	return pct(*u.QuotaUtilisation)
}

// WriteText prints the human summary of a run.
func WriteText(w io.Writer, r *metrics.Results) error {
	var b strings.Builder
	h := Headline(r)
	fmt.Fprintf(&b, "%s\n%s\n\n", h[0], h[1])
	writeHeader(&b, r)
	writeTables(&b, r)
	writeLevels(&b, r)
	writeLittle(&b, r)
	writeInstances(&b, r)
	writeTenants(&b, r)
	writeFindings(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// table writes a right-aligned table: a header row, then rows (cells
// separated by tabs, each row ending in a tab).
func table(b *strings.Builder, header string, rows func(tw io.Writer)) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, header)
	rows(tw)
	tw.Flush() // writes to a strings.Builder: cannot fail
}

func writeHeader(b *strings.Builder, r *metrics.Results) {
	status := "complete"
	if !r.Complete {
		status = "INCOMPLETE (" + r.Stop.Text + ")"
	}
	fmt.Fprintf(b, "%s (seed %d): %s\n", r.Scenario, r.Seed, status)
	fmt.Fprintf(b, "  %s requests over %s simulated, %s events\n", Grouped(r.Requests.Arrived), secs(r.ElapsedS), Grouped(int64(r.Events)))
	t := r.Throughput
	if noSteadyWindow(r) {
		fmt.Fprintf(b, "  steady state after %s: none, the run ended first\n", secs(r.WarmupS))
	} else {
		fmt.Fprintf(b, "  steady state after %s (%s): offered %s/s, started %s/s, goodput %s/s, 429s %s/s\n",
			secs(r.WarmupS), secs(t.WindowS), human(t.OfferedRPS, 4), human(t.StartedRPS, 4), human(t.GoodputRPS, 4), human(t.Rate429RPS, 4))
	}
	q := r.Requests
	g := func(n int64) string { return Grouped(n) }
	fmt.Fprintf(b, "  outcomes (whole run): ok %s, 429 %s, rejected %s (ingest %s, limiter %s), acquire timeouts %s, timed out %s",
		g(q.Succeeded), g(q.Throttled429), g(q.Rejected), g(q.RejectedIngest), g(q.RejectedLimiter), g(q.AcquireTimeouts), g(q.TimedOut))
	if q.Failed > 0 { // refusals the client does not treat as 429s
		fmt.Fprintf(b, ", failed %s (refusals not treated as 429s)", g(q.Failed))
	}
	if q.InProgress > 0 {
		fmt.Fprintf(b, ", still in progress %s", g(q.InProgress))
	}
	fmt.Fprintf(b, "; attempts %s, retries %s\n", g(q.Attempts), g(q.Retries))
	e := r.RequestS
	fmt.Fprintf(b, "  end to end (steady state, ok requests): p50 %s, p90 %s, p99 %s, max %s; %s\n\n",
		secs(e.P50), secs(e.P90), secs(e.P99), secs(e.Max), successText(r))
}

// writeTables writes the limiters and the upstreams, aligned as one table.
func writeTables(b *strings.Builder, r *metrics.Results) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(r.Limiters) > 0 {
		fmt.Fprintln(tw, "limiter\tkind\tacquired\trejected\ttimeouts\tp_wait\twait p50\tp99\tmax\tmean waiting\tpeak\tutilisation\tsaturation\t")
		for _, l := range r.Limiters {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", l.Name, l.Kind+"/"+l.Scope,
				Grouped(l.Acquired), Grouped(l.Rejected), Grouped(l.Timeouts), pct(l.PWait), secs(l.WaitS.P50), secs(l.WaitS.P99), secs(l.WaitS.Max),
				human(l.MeanWaiting, 3), Grouped(l.MaxWaiting), utilText(l), pct(l.Saturation))
		}
		fmt.Fprintln(tw, "\t")
	}
	fmt.Fprintln(tw, "upstream\tattempts\tok\t429\t429 rate\t429/min\tpauses\tlatency p50\tp99\tquota used\t")
	for _, u := range metrics.ShownHosts(r) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", u.Host, Grouped(u.Attempts), Grouped(u.OK), Grouped(u.Throttled),
			pct(u.Rate429), human(u.PerMinute429, 3), Grouped(u.Pauses), secs(u.LatencyS.P50), secs(u.LatencyS.P99), quotaText(u))
	}
	fmt.Fprintln(tw, "\t")
	tw.Flush() // writes to a strings.Builder: cannot fail
	if note := hostsNote(r); note != "" {
		b.WriteString(note + "\n")
	}
	if note := storeNote(r); note != "" {
		b.WriteString(note + "\n")
	}
	for _, note := range quotaNotes(r) {
		b.WriteString(note + "\n")
	}
	b.WriteString(windowsNote + "\n\n")
}

// quotaNotes says, for each shown host with several quotas or a cost,
// which quota refused its 429s and what its requests cost against the
// quota that counts cost; for a host paused, what its pauses count; and
// why a limiter's or a quota's utilisation is over 100%; and what each
// quota shared by several hosts admitted and refused.
func quotaNotes(r *metrics.Results) []string {
	var out []string
	for _, l := range r.Limiters {
		if o := overFull(l.UtilisationMax); o != "" {
			out = append(out, fmt.Sprintf("%s: utilisation %s%s (it grants at most its rate × the window plus its burst)", l.Name, pct(l.UtilisationMax), o))
		}
	}
	for _, u := range metrics.ShownHosts(r) {
		if n := pauseNote(u); n != "" {
			out = append(out, n)
		}
		if u.QuotaUtilisation != nil && overFull(*u.QuotaUtilisation) != "" {
			why := "the quota admits its burst on top of its rate"
			if u.Cost != nil && u.Cost.QuotaPerS > 0 {
				why = "a quota counting cost is read over the whole run, and its burst at the start and the responses' cost charged when they complete come on top of its rate"
			}
			out = append(out, fmt.Sprintf("%s: quota used %s: over 100%% because %s", u.Host, pct(*u.QuotaUtilisation), why))
		}
		if len(u.RejectedBy) > 0 && u.Throttled > 0 {
			parts := make([]string, len(u.RejectedBy))
			for i, q := range u.RejectedBy {
				parts[i] = fmt.Sprintf("%s %s", quotaName(q.Quota), Grouped(q.Count))
			}
			out = append(out, fmt.Sprintf("%s: 429s by quota (whole run): %s", u.Host, strings.Join(parts, ", ")))
		}
		c := u.Cost
		if c == nil || c.Request.Count == 0 {
			continue
		}
		n := fmt.Sprintf("%s: a request costs p50 %s, p90 %s, p99 %s (mean %s)", u.Host,
			human(c.Request.P50, 4), human(c.Request.P90, 4), human(c.Request.P99, 4), human(c.Request.Mean, 4))
		if c.Response.Count > 0 {
			n += fmt.Sprintf(", its response p50 %s, p90 %s, p99 %s (mean %s)",
				human(c.Response.P50, 4), human(c.Response.P90, 4), human(c.Response.P99, 4), human(c.Response.Mean, 4))
		}
		n += fmt.Sprintf("; admitted %s/s", human(c.ChargedPerS, 4))
		if c.QuotaPerS > 0 {
			n += fmt.Sprintf(" against the cost quota's %s/s (burst %s)", human(c.QuotaPerS, 4), human(c.QuotaBurst, 4))
		}
		out = append(out, n)
	}
	for _, q := range r.Quotas {
		n := fmt.Sprintf("quota %s, shared by %s: admitted %s, refused %s (whole run)", q.Name, strings.Join(q.Upstreams, ", "), Grouped(q.Admitted), Grouped(q.Refused))
		if q.Unit == "cost" {
			n += fmt.Sprintf(", took %s in cost", Grouped(q.Taken))
		}
		if q.QuotaRPS != nil {
			n += fmt.Sprintf("; admits %s/s", human(*q.QuotaRPS, 4))
		}
		out = append(out, n)
	}
	return out
}

// pauseNote says what a host's pause count counts: episodes in which an
// instance held off the host, each begun by a 429's Retry-After or by
// the rate-limit headers at zero remaining. With no 429 every pause came
// from the headers; with 429s, those answered during a pause extend it,
// so many 429s can make few pauses.
func pauseNote(u metrics.UpstreamStats) string {
	switch {
	case u.Pauses == 0:
		return ""
	case u.Throttled == 0:
		return fmt.Sprintf("%s: %s pauses with no 429: the client paused on the rate-limit headers at zero remaining, until the reset they named, before the quota refused anything",
			u.Host, Grouped(u.Pauses))
	}
	return fmt.Sprintf("%s: %s pauses are pause episodes, each begun by a 429's Retry-After (or the rate-limit headers at zero remaining); a 429 answered while a pause runs extends it, so %s 429s made %s pauses",
		u.Host, Grouped(u.Pauses), Grouped(u.Throttled), Grouped(u.Pauses))
}

// storeNote counts the calls cluster limiters made to their shared store:
// the round trips a sync interval saves.
func storeNote(r *metrics.Results) string {
	var parts []string
	for _, l := range r.Limiters {
		if l.Store == nil {
			continue
		}
		p := fmt.Sprintf("limiter %s made %s calls to its shared store", l.Name, Grouped(l.Store.Calls))
		if l.Acquired > 0 {
			p += fmt.Sprintf(" (%s per acquisition)", human(float64(l.Store.Calls)/float64(l.Acquired), 3))
		}
		if l.Store.Failed > 0 {
			p += fmt.Sprintf(", %s of them failed", Grouped(l.Store.Failed))
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "."
}

// windowsNote says which window the tables' columns cover.
const windowsNote = "counts (acquired, rejected, timeouts, attempts, ok, 429) cover the whole run; waits, rates, levels and utilisation the steady state"

func writeLevels(b *strings.Builder, r *metrics.Results) {
	fmt.Fprintf(b, "steady state: in flight mean %s, peak %s", human(r.InFlight.Mean, 3), Grouped(r.InFlight.Max))
	if r.Queue.Kind == "queue" {
		fmt.Fprintf(b, "; ingest queue: mean depth %s, peak %s, wait p99 %s, peak blocked producers %s", human(r.Queue.MeanDepth, 3), Grouped(r.Queue.MaxDepth), secs(r.Queue.WaitS.P99), Grouped(r.Queue.MaxBlocked))
	}
	b.WriteString("\n\n")
}

func writeLittle(b *strings.Builder, r *metrics.Results) {
	table(b, "Little's Law (whole run)\tL (time avg)\tλ (/s)\tW\tλ×W\trel error\t", func(tw io.Writer) {
		for _, l := range r.Little {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", l.Stage, human(l.L, 4), human(l.Lambda, 4), secs(l.W), human(l.Lambda*l.W, 4), human(l.RelError, 2))
		}
	})
}

func writeInstances(b *strings.Builder, r *metrics.Results) {
	if len(r.PerInstance) == 0 {
		return
	}
	b.WriteString("\n")
	table(b, strings.Join(instanceHeader(), "\t")+"\t", func(tw io.Writer) {
		for _, row := range instanceRows(r) {
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	})
}

func writeTenants(b *strings.Builder, r *metrics.Results) {
	if len(r.Tenants) == 0 {
		return
	}
	b.WriteString("\n")
	table(b, strings.Join(tenantHeader(), "\t")+"\t", func(tw io.Writer) {
		for _, row := range tenantRows(r) {
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	})
	if note := tenantsNote(r); note != "" {
		b.WriteString(note + "\n")
	}
}

// writeFindings writes the spread over replications, the verdicts, the
// diagnoses and the warnings.
func writeFindings(b *strings.Builder, r *metrics.Results) {
	if rp := r.Replications; rp != nil {
		fmt.Fprintf(b, "\n%d replications: goodput %s ± %s /s, 429s %s ± %s /s (95%% CI)\n", rp.N, human(rp.GoodputRPS.Mean, 4), human(rp.GoodputRPS.CI95, 2), human(rp.Rate429RPS.Mean, 4), human(rp.Rate429RPS.CI95, 2))
		if rp.StormShare != nil {
			fmt.Fprintf(b, "storm_share %s: %.0f of %d replications in a metastable failure after the trigger\n", human(*rp.StormShare, 3), *rp.StormShare*float64(rp.N), rp.N)
		}
	}
	if len(r.Verdicts) > 0 {
		b.WriteString("\n")
		for _, v := range r.Verdicts {
			fmt.Fprintf(b, "%s: %s (%s)\n", v.Limiter, v.Verdict, v.Why)
		}
	}
	for _, d := range r.Diagnoses {
		fmt.Fprintf(b, "\n%s: %s\n  seen: %s\n  cause: %s\n  fix: %s\n", strings.ToUpper(d.Severity), d.Title, d.Evidence, d.Cause, d.Fix)
		if o := overridesText(d.Fix); o != "" {
			if part := PartOfFix(r, d); part != "" {
				o += " (" + part + ")"
			}
			fmt.Fprintf(b, "  overrides: %s\n", o)
		}
	}
	if lines := FixLines(r); lines != nil {
		fmt.Fprintf(b, "\n%s\n", strings.ToUpper(lines[0][:1])+lines[0][1:])
		for _, l := range lines[1:] {
			fmt.Fprintf(b, "  %s\n", l)
		}
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(b, "\nwarning: %s", w)
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n")
	}
}

// Number is a number for people, as every report writes it: sig
// significant digits, thousands grouped from 1,000, never in scientific
// notation (the one formatting layer; see human).
func Number(x float64, sig int) string { return human(x, sig) }

// Seconds is a duration in seconds for people: 250ms, 2µs, 1.5s, 1,234s.
func Seconds(s float64) string { return secs(s) }

// longNumber is a number written with more digits than a person reads.
var longNumber = regexp.MustCompile(`[0-9]+\.[0-9]{4,}`)

// quotaName is a quota's name (metrics.QuotaRejections.Quota, which keeps
// the scenario's numbers as written, to be selected by) as prose gives it:
// "token_bucket 2,667/s cost", not "token_bucket 2666.666667/s cost".
func quotaName(name string) string {
	return longNumber.ReplaceAllStringFunc(name, func(n string) string {
		v, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return n
		}
		return human(v, 4)
	})
}

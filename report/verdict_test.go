package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// Verdicts follow the limiter's kind and its utilisation, not the token
// level: a pinned semaphore is saturated on permits, a pinned bucket on
// its quota, a scoped limiter binds where its busiest scope does, and a
// 429 rate over 1% blames a rate limiter, never a semaphore.
func TestVerdictsByKindAndUtilisation(t *testing.T) {
	lim := func(kind string, releases bool, util, utilMax, p99 float64) metrics.LimiterStats {
		scope := "global"
		if utilMax != util {
			scope = "host"
		}
		return metrics.LimiterStats{Name: kind, Kind: kind, Scope: scope, Releases: releases,
			Utilisation: util, UtilisationMax: utilMax, Saturation: 0.03, WaitS: metrics.Dist{P99: p99}}
	}
	cases := []struct {
		name    string
		l       metrics.LimiterStats
		rate429 float64
		want    string
	}{
		{"semaphore pinned", lim("semaphore", true, 0.99, 0.99, 2), 0, "saturated: demand exceeds permits"},
		{"bucket pinned, token level low", lim("token_bucket", false, 0.97, 0.97, 0.5), 0, "demand exceeds quota"},
		{"bucket at 50%, no wait", lim("token_bucket", false, 0.5, 0.5, 0), 0, "not binding"},
		{"bucket at 89%, no wait", lim("token_bucket", false, 0.89, 0.89, 0.0005), 0, "binding"},
		{"busiest host pinned", lim("semaphore", true, 0.4, 0.97, 1), 0, "saturated: demand exceeds permits"},
		{"429s blame the rate limiter", lim("token_bucket", false, 0.5, 0.5, 0), 0.05, "local limit set too high"},
		{"429s do not blame a semaphore", lim("semaphore", true, 0.3, 0.3, 0), 0.05, "not binding"},
	}
	for _, c := range cases {
		r := &metrics.Results{Rate429: c.rate429, Limiters: []metrics.LimiterStats{c.l}}
		v := Verdicts(r)[0]
		if v.Verdict != c.want {
			t.Errorf("%s: %q (%s), want %q", c.name, v.Verdict, v.Why, c.want)
		}
		if v.Utilisation != c.l.UtilisationMax || v.Rate429 != c.rate429 {
			t.Errorf("%s: verdict quotes utilisation %v and 429 rate %v", c.name, v.Utilisation, v.Rate429)
		}
	}
}

// An interval without data breaks a line instead of being bridged: the
// 429 rate of bursts shows as bursts, not a plateau.
func TestLineBreaksAtMissingData(t *testing.T) {
	nan := math.NaN()
	segs := segments([]float64{0, 1, 2, 3, 4, 5, 6}, []float64{1, 2, nan, nan, 3, 4, math.Inf(1)})
	if len(segs) != 2 || len(segs[0]) != 2 || len(segs[1]) != 2 || segs[1][0].X != 4 {
		t.Fatalf("segments %v, want [0 1] and [4 5]", segs)
	}
}

// Numbers for people: no scientific notation, thousands grouped from
// 1,000 (as counts are), a rounding error shown as 0.
func TestHumanNumbers(t *testing.T) {
	for _, c := range []struct {
		x    float64
		sig  int
		want string
	}{{15800, 3, "15,800"}, {3700, 3, "3,700"}, {999.4, 3, "999"}, {1000, 4, "1,000"}, {2.5e-16, 2, "0"}, {0.00123, 2, "0.0012"}, {12.59, 3, "12.6"},
		{1234567, 4, "1,234,567"}, {-12345, 3, "-12,345"}, {0.5, 3, "0.5"}, {100, 3, "100"}} {
		if got := human(c.x, c.sig); got != c.want {
			t.Errorf("human(%v, %d) = %q, want %q", c.x, c.sig, got, c.want)
		}
	}
}

// Durations for people: long runs in grouped seconds, never 4e+04s, and
// a value that rounds up to the next unit printed in it, never 1e+03ms.
func TestSecsForPeople(t *testing.T) {
	for s, want := range map[float64]string{40001: "40,001s", 1234: "1,234s", 120: "120s", 0.25: "250ms", 2e-6: "2µs", 0: "0",
		0.9998: "1s", 0.9994: "999ms", 0.99996e-3: "1ms", 0.0009994: "999µs", 999.4: "999s", 999.7: "999.7s", 1.5: "1.5s",
		-0.9998: "-1s", -0.25: "-250ms", 3e-10: "0.0003µs", 0.00123456: "1.23ms"} {
		if got := secs(s); got != want {
			t.Errorf("secs(%v) = %q, want %q", s, got, want)
		}
	}
	if got := Grouped(6000000); got != "6,000,000" {
		t.Errorf("Grouped(6000000) = %q", got)
	}
}

// A drained run whose stage breaks Little's Law by over 1% gets the
// littles_law diagnosis naming the stage; rounding, or requests still
// inside (L and λ × W rightly differ), do not.
func TestLittlesLawDiagnosis(t *testing.T) {
	stage := func(rel float64) []metrics.Little {
		return []metrics.Little{{Stage: "system", L: 1, Lambda: 10, W: 0.1, RelError: 1e-12},
			{Stage: "limiter bucket", L: 2, Lambda: 10, W: 0.2 * (1 - rel), RelError: rel}}
	}
	for _, c := range []struct {
		rel      float64
		complete bool
		inside   int64
		want     bool
	}{{0.05, true, 0, true}, {0.005, true, 0, false}, {0.05, false, 0, false}, {0.05, true, 3, false}} {
		r := &metrics.Results{Complete: c.complete, Little: stage(c.rel), IntervalS: 1}
		r.Requests.InProgress = c.inside
		var got *metrics.Diagnosis
		for _, d := range Diagnose(r, &metrics.Series{}) {
			if d.Code == "littles_law" {
				got = &d
			}
		}
		if (got != nil) != c.want {
			t.Errorf("%+v: diagnosis %v", c, got)
		}
		if got != nil && !strings.Contains(got.Evidence, "stage limiter bucket") {
			t.Errorf("evidence %q does not name the stage", got.Evidence)
		}
	}
}

// legendRoom lifts the top of the axis above the highest point by room
// for each legend line, from zero, and leaves an empty axis alone.
func TestLegendRoom(t *testing.T) {
	p := newPlot("t", "x", "y")
	if err := line(p, []float64{0, 1, 2}, []float64{4, 10, 6}, "a", 0, false); err != nil {
		t.Fatal(err)
	}
	legendRoom(p, 2)
	if p.Y.Min != 0 || p.Y.Max < 12.2 || p.Y.Max > 13 {
		t.Errorf("axis %v..%v, want 0..about 12.2", p.Y.Min, p.Y.Max)
	}
	empty := newPlot("t", "x", "y")
	lo, hi := empty.Y.Min, empty.Y.Max
	legendRoom(empty, 3)
	if empty.Y.Min != lo || empty.Y.Max != hi {
		t.Errorf("an empty axis moved to %v..%v", empty.Y.Min, empty.Y.Max)
	}
}

// Tick labels read as numbers for people, never 500.00, 2500.00 or 1e+04,
// and an axis carries four to six of them on a round step (gonum's default
// gave two or three: 0 and 250 alone; 0, 80 and 160 on a 184 s run).
func TestHumanTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string // every label, in order
	}{
		{0, 2500, "0 500 1,000 1,500 2,000 2,500"},
		{0, 0.3, "0 0.1 0.2 0.3"},
		{0, 25000, "0 5,000 10,000 15,000 20,000 25,000"},
		{0, 184, "0 50 100 150"},
		{0, 250, "0 50 100 150 200 250"},
		{0, 2.5, "0 0.5 1 1.5 2 2.5"},
		{0, 1.2, "0 0.25 0.5 0.75 1"},
		{-30, 30, "-20 0 20"}, // step 10 gives 7 labels: 20 it is
		{3, 97, "20 40 60 80"},
	} {
		var labels []string
		for _, tk := range (humanTicks{}).Ticks(c.lo, c.hi) {
			if tk.Label == "" {
				continue
			}
			labels = append(labels, tk.Label)
			if strings.Contains(tk.Label, ".") && strings.HasSuffix(tk.Label, "0") || strings.Contains(tk.Label, "e") {
				t.Errorf("%v..%v: label %q", c.lo, c.hi, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != c.want {
			t.Errorf("%v..%v: labels %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	for hi := 0.7; hi < 5e6; hi *= 1.37 { // every span: 3 to 6 labels
		n := 0
		for _, tk := range (humanTicks{}).Ticks(0, hi) {
			if tk.Label != "" {
				n++
			}
		}
		if n < 3 || n > maxLabelledTicks {
			t.Errorf("0..%v: %d labelled ticks", hi, n)
		}
	}
}

// A log axis labels 1, 2 and 5 per decade (the powers of ten alone when
// its labels would run into each other), every digit when that gives fewer than three
// labels, and evenly spaced ticks inside one step.
func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var l []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				l = append(l, tk.Label)
			}
		}
		return l
	}
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{4, 80, []string{"5", "10", "20", "50"}},
		{0.001, 10, []string{"0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10"}},
		{2.5, 4.5, []string{"3", "4"}},
		{0.0001, 10.5, []string{"0.0001", "0.001", "0.01", "0.1", "1", "10"}},              // 6-character labels over 5 decades: powers of ten
		{0.000001, 0.1, []string{"0.000001", "0.00001", "0.0001", "0.001", "0.01", "0.1"}}, // 8 characters over 5 decades
		{1, 5000, []string{"1", "2", "5", "10", "20", "50", "100", "200", "500", "1,000", "2,000", "5,000"}},
	} {
		if got := labels(c.lo, c.hi); !slices.Equal(got, c.want) {
			t.Errorf("%v..%v: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	if got := labels(12, 18); len(got) < 2 {
		t.Errorf("12..18: %q, want at least two labels", got)
	}
}

// Series whose peaks differ by more than ten times go to two panels, the
// small ones on their own scale; closer ones share one panel.
func TestTimePanelsSplitByScale(t *testing.T) {
	r := &metrics.Results{IntervalS: 1}
	x := []float64{0, 1, 2}
	empty := metrics.NewSeries([]string{"t_s", "arrivals"})
	split := timePanels(r, empty, x, "T", "y", []series{{name: "big", ys: []float64{0, 1000, 900}, dashed: false}, {name: "small", ys: []float64{2, 5, math.NaN()}, dashed: true}})
	if len(split) != 2 || !strings.Contains(split[1].Title.Text, "own scale") || split[1].Y.Max > 20 {
		t.Fatalf("peaks 1000 and 5: %d panels, second to %v", len(split), split[len(split)-1].Y.Max)
	}
	if one := timePanels(r, empty, x, "T", "y", []series{{name: "a", ys: []float64{100, 80, 90}, dashed: false}, {name: "b", ys: []float64{20, 15, 12}, dashed: false}}); len(one) != 1 {
		t.Fatalf("peaks 100 and 20: %d panels, want 1", len(one))
	}
	png, svg, err := renderPanels(split, "footer")
	if err != nil || len(png) == 0 || strings.Count(string(svg), "footer") != 1 {
		t.Fatalf("two panels render: %v", err)
	}
}

// Bar charts keep their first and last bars inside the frame: the
// category axis reaches half a category past each end.
func TestBarsInsideTheFrame(t *testing.T) {
	p := newPlot("t", "", "y")
	if reason := pairedBars(p, []string{"a", "b", "c"}, []float64{1, 2, 3}, []float64{3, 2, 1}, "x", "y", 0, 1); reason != "" {
		t.Fatal(reason)
	}
	if p.X.Min > -0.5 || p.X.Max < 2.5 {
		t.Errorf("category axis %v..%v cuts the end bars (want beyond -0.5..2.5)", p.X.Min, p.X.Max)
	}
	if p.Y.Max <= 3 {
		t.Errorf("the tallest bar touches the frame at %v", p.Y.Max)
	}
}

// token_limit_binds fires when a quota counting cost refused at least half
// of a host's 429s, not when the request limit refused most of them or 429s
// are rare; its fix turns the global token bucket into one counting cost
// at the limit × 0.9 ÷ instances with a p90 reservation, and it displaces
// sustained_429.
func TestTokenLimitBindsDiagnosis(t *testing.T) {
	for _, c := range []struct {
		costRej, reqRej int64
		rate429         float64
		want            bool
	}{{600, 0, 0.3, true}, {300, 300, 0.3, true}, {200, 400, 0.3, false}, {600, 0, 0.005, false}} {
		r := &metrics.Results{IntervalS: 1, Rate429: c.rate429, Instances: 2,
			Limiters: []metrics.LimiterStats{{Name: "rpm", Kind: "token_bucket", Family: "rate", Scope: "global", Capacity: 7.5}}}
		r.Throughput.OfferedRPS = 2
		quota := 1.0
		r.Upstreams = []metrics.UpstreamStats{{Host: "llm", Attempts: 2000, Throttled: c.costRej + c.reqRej, Rate429: c.rate429, QuotaRPS: &quota,
			RejectedBy: []metrics.QuotaRejections{{Quota: "token_bucket 8.33/s", Unit: "requests", Count: c.reqRej}, {Quota: "token_bucket 2000/s cost", Unit: "cost", Count: c.costRej}},
			LatencyS:   metrics.Dist{Count: 100, Mean: 4},
			Cost: &metrics.CostStats{QuotaPerS: 2000, QuotaBurst: 120000, Request: metrics.Dist{Count: 1000, Mean: 1700, P50: 1200, P90: 3500, Max: 20000},
				Response: metrics.Dist{Count: 800, Mean: 300, P90: 660}}}}
		th := make([]float64, 20)
		for i := range th {
			th[i] = 5
		}
		s := &metrics.Series{Columns: []string{"t_s", "responses_429"}}
		for i := range th {
			s.Append([]float64{float64(i + 1), th[i]})
		}
		var got *metrics.Diagnosis
		codes := map[string]bool{}
		for _, d := range Diagnose(r, s) {
			codes[d.Code] = true
			if d.Code == "token_limit_binds" {
				got = &d
			}
		}
		if (got != nil) != c.want {
			t.Errorf("%+v: diagnosis %v", c, got)
			continue
		}
		if got == nil {
			continue
		}
		if codes["sustained_429"] {
			t.Errorf("%+v: sustained_429 reported beside token_limit_binds", c)
		}
		// 2000/s × 0.9 ÷ 2 instances; burst the larger of 120,000 × 0.9 ÷ 2 and the largest request plus a p90 response.
		if got.Fix.Set["client.limiter.rpm.rate"] != 900.0 || got.Fix.Set["client.limiter.rpm.burst"] != 54000.0 ||
			got.Fix.Set["client.reserve.estimate"] != "p90" || got.Fix.Set["client.reserve.fixed"] != int64(660) {
			t.Errorf("%+v: fix %v", c, got.Fix.Set)
		}
		if !strings.Contains(got.Evidence, "fits 1 requests a second") || !strings.Contains(got.Fix.Text, "cap concurrency at 2") {
			t.Errorf("%+v: evidence %q / fix %q: want 2000 ÷ 2000 = 1 request a second, and 1 × 0.9 ÷ 2 × 4 s = 1.8 → 2 at once", c, got.Evidence, got.Fix.Text)
		}
	}
}

// quotaNotes names which quota refused a host's 429s and what its requests
// cost against the quota counting cost; a host with one quota and no cost
// gets none, nor does a host whose several quotas refused nothing.
func TestQuotaNotes(t *testing.T) {
	r := &metrics.Results{Upstreams: []metrics.UpstreamStats{
		{Host: "llm", Attempts: 10, Throttled: 4,
			RejectedBy: []metrics.QuotaRejections{{Quota: "token_bucket 8/s", Unit: "requests", Count: 1}, {Quota: "token_bucket 2000/s cost", Unit: "cost", Count: 3}},
			Cost: &metrics.CostStats{QuotaPerS: 2000, QuotaBurst: 120000, ChargedPerS: 1990.5,
				Request: metrics.Dist{Count: 10, Mean: 1700, P50: 1200, P90: 3500, P99: 7000}, Response: metrics.Dist{Count: 6, Mean: 300, P50: 250, P90: 660, P99: 1500}}},
		{Host: "quiet", Attempts: 10, RejectedBy: []metrics.QuotaRejections{{Quota: "a", Count: 0}, {Quota: "b", Count: 0}}},
		{Host: "plain", Attempts: 10, Throttled: 2},
	}}
	want := []string{
		"llm: 429s by quota (whole run): token_bucket 8/s 1, token_bucket 2000/s cost 3",
		"llm: a request costs p50 1,200, p90 3,500, p99 7,000 (mean 1,700), its response p50 250, p90 660, p99 1,500 (mean 300); admitted 1,991/s against the cost quota's 2,000/s (burst 120,000)",
	}
	if got := quotaNotes(r); !slices.Equal(got, want) {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A limiter near its limit that made no acquisition wait is binding (it
// is the one a burst would meet) but does not claim waits: its reason
// says none waited, where one with waits gives their share and p99.
func TestBindingWithoutWaitsSaysSo(t *testing.T) {
	r := &metrics.Results{ElapsedS: 100, WarmupS: 10}
	near := metrics.LimiterStats{Name: "quota", Scope: "global", UtilisationMax: 0.88, Utilisation: 0.88}
	waited := near
	waited.PWait, waited.WaitS.P99 = 0.2, 0.0005
	refusing := near // max_waiting = 0: it refuses instead of queueing
	refusing.Rejected = 1200
	for _, c := range []struct {
		l    metrics.LimiterStats
		want string
	}{
		{near, "no acquisition waited, but utilisation 88% is close to the limit (from 80%): more load or a burst would wait"},
		{refusing, "no acquisition waited, but utilisation 88% is close to the limit (from 80%): it refused 1,200 acquisitions at once"},
		{waited, "waits at times: 20% of acquisitions, p99 500µs; utilisation 88%"},
	} {
		v := verdict(r, c.l)
		if v.Verdict != verdictBinding || !strings.Contains(v.Why, c.want) {
			t.Errorf("%+v: %s (%s), want binding (%s…)", c.l, v.Verdict, v.Why, c.want)
		}
	}
}

// 429s that all came in the burst at the start (a full bucket spent at
// once) do not make the bucket "set too high": its rate is fine, its
// start is not, and lowering the rate would be the wrong advice. The
// same 429 rate sustained through the run does.
func TestStartBurst429sDoNotMakeALimitTooHigh(t *testing.T) {
	l := metrics.LimiterStats{Name: "bucket", Scope: "global", UtilisationMax: 0.9, Utilisation: 0.9}
	r := &metrics.Results{ElapsedS: 100, Rate429: 0.013, Diagnoses: []metrics.Diagnosis{{Code: "burst_at_start"}}}
	if v := verdict(r, l); v.Verdict == verdictTooHigh {
		t.Errorf("429s only at the start: %s (%s)", v.Verdict, v.Why)
	}
	r.Diagnoses = append(r.Diagnoses, metrics.Diagnosis{Code: "sustained_429"})
	if v := verdict(r, l); v.Verdict != verdictTooHigh {
		t.Errorf("429s sustained as well: %s (%s), want %s", v.Verdict, v.Why, verdictTooHigh)
	}
	r.Diagnoses = nil
	if v := verdict(r, l); v.Verdict != verdictTooHigh {
		t.Errorf("429s with no start burst: %s (%s), want %s", v.Verdict, v.Why, verdictTooHigh)
	}
}

// The headline names the limiter that binds hardest by its verdict, not
// its use alone: a bucket set above the real limit (the upstream binds
// through it) before a busier semaphore that is the bottleneck. Without
// one, a limiter near its limit that made no one wait is not "binding":
// composed-limits' per-tenant bucket (83% used, no wait) beside its
// per-host semaphore (63%, waited on at times) is named as each is.
func TestHeadlineNamesTheLimiterThatBindsHardest(t *testing.T) {
	r := &metrics.Results{ElapsedS: 100, Rate429: 0.05, Limiters: []metrics.LimiterStats{
		{Name: "conns", Scope: "global", Releases: true, UtilisationMax: 0.6, Utilisation: 0.6, PWait: 0.7, WaitS: metrics.Dist{P99: 0.5}},
		{Name: "bucket", Scope: "global", UtilisationMax: 0.5, Utilisation: 0.5},
	}}
	r.Verdicts = Verdicts(r)
	if got := bindingText(r); !strings.HasPrefix(got, ", binding: bucket (local limit set too high") {
		t.Errorf("too high beside a bottleneck: %q", got)
	}
	r = &metrics.Results{ElapsedS: 100, Limiters: []metrics.LimiterStats{
		{Name: "per_tenant", Scope: "tenant", UtilisationMax: 0.826, Utilisation: 0.82},
		{Name: "per_host", Scope: "host", Releases: true, UtilisationMax: 0.627, Utilisation: 0.44, PWait: 0.02, WaitS: metrics.Dist{P99: 0.0257}},
	}}
	r.Verdicts = Verdicts(r)
	want := ", binding at times: per_host (utilisation 62.7%); near its limit, no wait yet: per_tenant (utilisation 82.6%)"
	if got := bindingText(r); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// The burst-at-start fix sets what a key can set (initial_fill) and names
// staggered starts only for several instances, and only as production
// advice: no key staggers them, so a fix must not promise it.
func TestBurstFixPromisesOnlyWhatItSets(t *testing.T) {
	r := &metrics.Results{Instances: 1, Limiters: []metrics.LimiterStats{{Name: "bucket", Kind: "token_bucket"}}}
	if f := burstFix(r); strings.Contains(f.Text, "stagger") || f.Set["client.limiter.bucket.initial_fill"] != 0.1 {
		t.Errorf("one instance: %+v", f)
	}
	r.Instances = 3
	if f := burstFix(r); !strings.Contains(f.Text, "in production, stagger the instances' starts too") {
		t.Errorf("three instances: %q", f.Text)
	}
}

package report

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// A time axis reads in the unit that suits the run: seconds up to ten
// minutes, minutes up to ten hours, hours beyond; each bound belongs to
// the smaller unit (a bound taken with < instead of <= moves it).
func TestTimeUnitFor(t *testing.T) {
	for _, c := range []struct {
		elapsed float64
		want    string
	}{{0, "s"}, {59, "s"}, {600, "s"}, {600.5, "min"}, {3 * 3600, "min"}, {36000, "min"}, {36001, "h"}, {200 * 3600, "h"}} {
		if got := timeUnitFor(c.elapsed); got.name != c.want {
			t.Errorf("a run of %vs reads in %s, want %s", c.elapsed, got.name, c.want)
		}
	}
	if u := timeUnitFor(3 * 3600); u.seconds != 60 || u.label() != "time (min)" {
		t.Errorf("minutes: %+v %q", u, u.label())
	}
	// Ticks at round minutes, placed on data in seconds.
	var labels []string
	for _, tk := range (timeUnit{"min", 60}).Ticks(0, 3*3600) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
			if v, err := strconv.ParseFloat(strings.ReplaceAll(tk.Label, ",", ""), 64); err != nil || v*60 != tk.Value {
				t.Errorf("tick %q at %v s", tk.Label, tk.Value)
			}
		}
	}
	if len(labels) < 3 || slices.Contains(labels, "5000") || slices.Contains(labels, "10,000") {
		t.Errorf("a three-hour axis in minutes is labelled %q", labels)
	}
}

// onsetSeries is ten one-second intervals with the given 429s, attempts,
// timeouts, requests in the system and successes in each.
func onsetSeries(r429, starts, timeouts, inSystem, succeeded []float64) *metrics.Series {
	s := metrics.NewSeries([]string{"t_s", "responses_429", "starts", "timeouts", "in_system", "succeeded", "arrivals"})
	for i := range r429 {
		s.Append([]float64{float64(i + 1), r429[i], starts[i], timeouts[i], inSystem[i], succeeded[i], 10})
	}
	return s
}

// A finding is marked where it set in: the first interval after the
// warm-up whose 429s reach 1% of its attempts (not the first 429, not
// one during the warm-up, and 1% itself counts), the first timeout, where
// the requests in the system reach half their peak, the last completion
// of a deadlock; a finding about the whole run has no onset.
func TestFindingOnset(t *testing.T) {
	zeros := make([]float64, 10)
	r429 := []float64{50, 0, 0, 0.5, 1, 3, 5, 5, 5, 5} // a spike in the warm-up; 0.5% at 3 s; 1% at 4 s
	starts := []float64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	timeouts := []float64{0, 0, 0, 0, 0, 0, 2, 0, 1, 0}
	inSystem := []float64{1, 2, 4, 8, 16, 31, 32, 40, 60, 80}
	succeeded := []float64{9, 9, 9, 9, 9, 0, 0, 0, 0, 0}
	s := onsetSeries(r429, starts, timeouts, inSystem, succeeded)
	r := &metrics.Results{IntervalS: 1, WarmupS: 2, ElapsedS: 10}
	for _, c := range []struct {
		code string
		want float64
		ok   bool
	}{
		{"sustained_429", 4, true}, {"quota_exhausted", 4, true}, {"thundering_herd", 4, true},
		{"request_timeouts", 6, true}, {"acquire_timeouts", 6, true},
		{"memory_growth", 7, true}, // 40 ≥ 80/2 in the interval from 7 s to 8 s
		{"deadlock", 5, true},      // the last success ends at 5 s
		{"burst_at_start", 0, true},
		{"littles_law", 0, false}, {"serialised", 0, false}, {"tenant_starvation", 0, false},
	} {
		got, ok := findingOnset(c.code, r, s)
		if ok != c.ok || (ok && math.Abs(got-c.want) > 1e-9) {
			t.Errorf("%s: onset %v (%v), want %v (%v)", c.code, got, ok, c.want, c.ok)
		}
	}
	// No 429 at all after the warm-up: no onset rather than a guess.
	if _, ok := findingOnset("sustained_429", r, onsetSeries(zeros, starts, zeros, inSystem, succeeded)); ok {
		t.Error("an onset for 429s with no 429")
	}
}

// Overlapping and touching pauses of several hosts become one strip each.
func TestMergeRanges(t *testing.T) {
	got := mergeRanges([][2]float64{{5, 6}, {1, 2}, {2, 3}, {1.5, 2.5}, {8, 9}})
	want := [][2]float64{{1, 3}, {5, 6}, {8, 9}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// A wait CDF is drawn from the bins' true edges: it starts at the lower
// edge of the first bin with a wait, at the share that did not wait, steps
// to each bin's upper edge, and ends at the longest wait, not at the upper
// edge of the last bin (waits of 1.0003 s in the bin up to 1.26 s).
func TestWaitCDFAtTheBinsEdges(t *testing.T) {
	l := metrics.LimiterStats{
		WaitHist: []metrics.Bucket{{LE: 0, Count: 50}, {LE: 0.1, Count: 25}, {LE: 1.2589254117941673, Count: 25}},
		WaitS:    metrics.Dist{Max: 1.0003},
	}
	xs, ys := waitCDFPoints(l)
	wantX := []float64{0.1 / binWidth, 0.1, 1.0003}
	wantY := []float64{0.5, 0.75, 1}
	if len(xs) != 3 {
		t.Fatalf("points %v %v", xs, ys)
	}
	for i := range wantX {
		if math.Abs(xs[i]-wantX[i]) > 1e-12 || ys[i] != wantY[i] {
			t.Errorf("point %d: (%v, %v), want (%v, %v)", i, xs[i], ys[i], wantX[i], wantY[i])
		}
	}
	// The longest wait at a bin's upper edge leaves it there; none
	// waited: no points.
	l.WaitS.Max = 1.2589254117941673
	if xs, _ := waitCDFPoints(l); xs[2] != 1.2589254117941673 {
		t.Errorf("last edge %v", xs[2])
	}
	if xs, _ := waitCDFPoints(metrics.LimiterStats{WaitHist: []metrics.Bucket{{LE: 0, Count: 9}}}); xs != nil {
		t.Errorf("nothing waited, yet %v", xs)
	}
}

// A run that stalled without a wait-for cycle is marked at its last
// completion, though no diagnosis names the stall.
func TestTimelineMarksAStall(t *testing.T) {
	zeros := make([]float64, 10)
	starts := []float64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	succeeded := []float64{9, 9, 9, 0, 0, 0, 0, 0, 0, 0}
	s := onsetSeries(zeros, starts, zeros, zeros, succeeded)
	r := &metrics.Results{IntervalS: 1, ElapsedS: 10, Stop: metrics.StallStop("no events remain", false)}
	ms := timelineMarkers(r, s)
	if len(ms) == 0 || ms[0].atS != 3 || !strings.Contains(ms[0].label, "stalled") {
		t.Fatalf("markers %+v, want the stall at 3 s", ms)
	}
	r.Stop = metrics.Stop{}
	for _, m := range timelineMarkers(r, s) {
		if strings.Contains(m.label, "stalled") {
			t.Errorf("a run that did not stall is marked %q", m.label)
		}
	}
}

// The findings the timeline used to leave unmarked set in where their own
// evidence does: the token limit's 429s as any 429 finding, unhandled
// refusals at the first failed request after the warm-up, a retry storm
// at the trigger it outlives; without a storm reading, no onset. Marker
// times read in the axis's unit.
func TestFindingOnsetOfLaterFindings(t *testing.T) {
	s := metrics.NewSeries([]string{"t_s", "responses_429", "starts", "failed", "arrivals"})
	for i, row := range [][3]float64{{9, 10, 3}, {0, 10, 0}, {0, 10, 0}, {2, 10, 0}, {0, 10, 4}, {0, 10, 1}} {
		s.Append([]float64{float64(i + 1), row[0], row[1], row[2], 10})
	}
	r := &metrics.Results{IntervalS: 1, WarmupS: 2, ElapsedS: 6}
	for _, c := range []struct {
		code string
		want float64
		ok   bool
	}{
		{"token_limit_binds", 3, true},  // 2 of 10 from 3 s to 4 s; the warm-up's 9 do not count
		{"unhandled_refusals", 4, true}, // the warm-up's 3 failures do not count
		{"retry_storm", 0, false},       // no storm reading
	} {
		got, ok := findingOnset(c.code, r, s)
		if ok != c.ok || (ok && math.Abs(got-c.want) > 1e-9) {
			t.Errorf("%s: onset %v (%v), want %v (%v)", c.code, got, ok, c.want, c.ok)
		}
	}
	r.Storm = &metrics.Storm{Detected: true, TriggerStartS: 4.5, TriggerEndS: 5}
	if got, ok := findingOnset("retry_storm", r, s); !ok || got != 4.5 {
		t.Errorf("retry_storm: onset %v (%v), want the trigger's start 4.5", got, ok)
	}
	for _, c := range []struct {
		elapsed, at float64
		want        string
	}{{120, 33, "33s"}, {7200, 1980, "33 min"}, {86400, 9000, "2.5 h"}} {
		if got := timeUnitFor(c.elapsed).text(c.at); got != c.want {
			t.Errorf("%vs on a run of %vs: %q, want %q", c.at, c.elapsed, got, c.want)
		}
	}
}

// A time chart spans the whole run even when its lines stop early (no
// request succeeded in the last intervals: an outage shows as a gap).
func TestTimeAxisSpansTheRun(t *testing.T) {
	p := newTimePlotFor(184, "t", "y")
	if p.X.Min != 0 || p.X.Max != 184 {
		t.Fatalf("x axis %v..%v, want 0..184", p.X.Min, p.X.Max)
	}
}

// The throughput chart's quota line is what the quotas admit together,
// as the diagnoses read it: a shared quota over two hosts caps their own
// quotas' sum (github-style-points drew 13.6/s, the hosts' sum, beside an
// hourly 1.39/s that binds); a quota that counts cost is marked an
// estimate at the mean cost.
func TestQuotaLineCountsSharedQuotas(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &metrics.Results{
		Upstreams: []metrics.UpstreamStats{{Host: "a", QuotaRPS: f(5)}, {Host: "b", QuotaRPS: f(8.6)}},
		Quotas:    []metrics.SharedQuotaStats{{Name: "hourly", QuotaRPS: f(1.39), Upstreams: []string{"a", "b"}}},
	}
	quotaLine := func() hline {
		for _, h := range rateLines(r) {
			if strings.HasPrefix(h.label, "upstream quota") {
				return h
			}
		}
		t.Fatal("no quota line")
		return hline{}
	}
	if h := quotaLine(); h.y != 1.39 || h.label != "upstream quota 1.39/s" {
		t.Errorf("quota line %v %q, want 1.39 (upstream quota 1.39/s)", h.y, h.label)
	}
	r.Upstreams[0].Cost = &metrics.CostStats{QuotaPerS: 2667}
	if h := quotaLine(); !strings.Contains(h.label, "≈1.39/s") || !strings.Contains(h.label, "cost") {
		t.Errorf("a host's cost quota: the line reads %q", h.label)
	}
	r.Upstreams[0].Cost, r.Quotas[0].Unit = nil, "cost"
	if h := quotaLine(); !strings.Contains(h.label, "≈1.39/s") {
		t.Errorf("a shared cost quota: the line reads %q", h.label)
	}
}

// A wait histogram's title splits its count into the grants and the rest,
// and names both ways to give up: the rest is more than the limiter's
// timeouts when request deadlines also cut waits (github-style-points:
// 163 given up beside 147 timeouts in the table).
func TestWaitHistTitleNamesBothWaysToGiveUp(t *testing.T) {
	r := &metrics.Results{Complete: true}
	l := metrics.LimiterStats{Name: "pace", Timeouts: 147}
	l.WaitGrantedS.Count = 837
	got := waitHistTitle(r, l, 0, 1000)
	if want := "(837 granted, 163 given up (acquisition timeout or request deadline))"; !strings.Contains(got, want) {
		t.Errorf("title %q lacks %q", got, want)
	}
}

// The drain after the arrivals end is shaded where a complete interval
// without arrivals is drawn (composed-limits' lines fell to 0 there with
// nothing to say why); a run whose last drawn interval still has
// arrivals, or an on/off run (its off phases are shaded already), has
// none.
func TestDrainStart(t *testing.T) {
	series := func(arrivals ...float64) *metrics.Series {
		s := metrics.NewSeries([]string{"t_s", "arrivals"})
		for i, a := range arrivals {
			s.Append([]float64{float64(i + 1), a})
		}
		return s
	}
	r := &metrics.Results{IntervalS: 1, ElapsedS: 5.4}
	if from, ok := drainStart(r, series(9, 9, 9, 0, 0, 0)); !ok || from != 3 {
		t.Errorf("arrivals to 3 s, drawn to 5 s: drain from %v (%v), want 3", from, ok)
	}
	if _, ok := drainStart(r, series(9, 9, 9, 9, 9, 0)); ok {
		t.Error("a drain in the undrawn last interval alone is shaded")
	}
	r.OnOff = &metrics.OnOff{OnS: 1, OffS: 1}
	if _, ok := drainStart(r, series(9, 9, 9, 0, 0, 0)); ok {
		t.Error("an on/off run gets a drain band")
	}
}

// A duration axis whose data stay under a second reads in milliseconds
// (20, not 0.02), its ticks still placed at the data's seconds; from a
// second on it reads in seconds. A wrong factor moves the labels off
// their values; a bound taken with <= puts an axis topping at 1 s in ms.
func TestSecondsAxisPicksItsUnit(t *testing.T) {
	for _, c := range []struct {
		top              float64
		label, tickLabel string
		tickAt           float64
	}{
		{0.025, "wait p99 (ms)", "20", 0.02},
		{0.9, "wait p99 (ms)", "800", 0.8},
		{1, "wait p99 (s)", "0.8", 0.8},
		{30, "wait p99 (s)", "20", 20},
	} {
		p := newPlot("", "", "")
		p.Y.Min, p.Y.Max = 0, c.top
		secondsAxis(p, "wait p99")
		if p.Y.Label.Text != c.label {
			t.Errorf("top %v: label %q, want %q", c.top, p.Y.Label.Text, c.label)
		}
		found := false
		for _, tick := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
			if tick.Label == c.tickLabel {
				found = math.Abs(tick.Value-c.tickAt) < 1e-12
				break
			}
		}
		if !found {
			t.Errorf("top %v: no tick labelled %q at %v: %+v", c.top, c.tickLabel, c.tickAt, p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max))
		}
	}
	p := newPlot("", "", "")
	p.Y.Min, p.Y.Max = 0, 0.5
	secondsAxis(p, "")
	if p.Y.Label.Text != "milliseconds" {
		t.Errorf("unnamed axis: label %q, want milliseconds", p.Y.Label.Text)
	}
}

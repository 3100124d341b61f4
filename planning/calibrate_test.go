package planning

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim"
	"github.com/limitsim/limitsim/sim/client"
)

// genHost is one host of a generated log: Poisson arrivals at rate, a
// lognormal latency of median and sigma, and a server that refuses by
// admit (nil: never).
type genHost struct {
	name          string
	rate          float64
	median, sigma float64 // seconds
	admit         func(t float64, inFlight []float64) (bool, int64, float64)
	// cost, if set, draws each request's logged cost, and admitCost, if
	// set, refuses by it in place of admit; tenant, if set, draws each
	// request's logged tenant.
	cost      func(rng *rand.Rand) int64
	admitCost func(t float64, cost int64) bool
	tenant    func(rng *rand.Rand) string
	// on and off, if on is set, silence the arrivals for off seconds
	// after each on seconds (from start).
	on, off float64
}

// genFixedWindow is a fixed window of limit per window (seconds),
// aligned to the epoch; it also answers the remaining and reset headers.
func genFixedWindow(limit int64, window float64) func(float64, []float64) (bool, int64, float64) {
	win, n := -1.0, int64(0)
	return func(t float64, _ []float64) (bool, int64, float64) {
		if w := math.Floor(t / window); w != win {
			win, n = w, 0
		}
		reset := math.Ceil((win+1)*window - t)
		if n >= limit {
			return false, 0, reset
		}
		n++
		return true, limit - n, reset
	}
}

// genTokenBucket is a token bucket of rate and burst, full at the first
// request.
func genTokenBucket(rate, burst float64) func(float64, []float64) (bool, int64, float64) {
	tokens, last := burst, math.NaN()
	return func(t float64, _ []float64) (bool, int64, float64) {
		if !math.IsNaN(last) {
			tokens = math.Min(burst, tokens+rate*(t-last))
		}
		last = t
		if tokens < 1 {
			return false, 0, math.Ceil((burst - tokens) / rate)
		}
		tokens--
		return true, int64(tokens), math.Ceil((burst - tokens) / rate)
	}
}

// genSlidingWindow admits at most limit in any window (seconds): a
// request at t counts those admitted after t − window.
func genSlidingWindow(limit int, window float64) func(float64, []float64) (bool, int64, float64) {
	var admitted []float64
	return func(t float64, _ []float64) (bool, int64, float64) {
		for len(admitted) > 0 && t-admitted[0] >= window {
			admitted = admitted[1:]
		}
		if len(admitted) >= limit {
			return false, 0, math.Ceil(admitted[0] + window - t)
		}
		admitted = append(admitted, t)
		return true, int64(limit - len(admitted)), math.Ceil(admitted[0] + window - t)
	}
}

// genConcurrency refuses a request when permits are in flight.
func genConcurrency(permits int) func(float64, []float64) (bool, int64, float64) {
	return func(t float64, ends []float64) (bool, int64, float64) {
		n := 0
		for _, e := range ends {
			if e > t {
				n++
			}
		}
		return n < permits, -1, -1
	}
}

// writeGeneratedLog writes a JSON-lines log of hosts over span seconds
// from start (Unix seconds), each line's time the request's arrival to
// the microsecond, and returns its path.
func writeGeneratedLog(t *testing.T, seed uint64, start, span float64, hosts ...genHost) string {
	t.Helper()
	type line struct {
		at   float64
		text string
	}
	var lines []line
	rng := rand.New(rand.NewPCG(seed, 99))
	for _, h := range hosts {
		var ends []float64
		for at := start + rng.ExpFloat64()/h.rate; at < start+span; at += rng.ExpFloat64() / h.rate {
			at = math.Round(at*1e6) / 1e6
			if h.on > 0 && math.Mod(at-start, h.on+h.off) >= h.on {
				continue
			}
			latency := h.median * math.Exp(h.sigma*rng.NormFloat64())
			ok, remaining, reset := true, int64(-1), -1.0
			var extra string
			if h.cost != nil {
				cost := h.cost(rng)
				extra += fmt.Sprintf(`, "cost": %d`, cost)
				if h.admitCost != nil {
					ok = h.admitCost(at, cost)
				}
			}
			if h.tenant != nil {
				extra += fmt.Sprintf(`, "tenant": %q`, h.tenant(rng))
			}
			if h.admit != nil {
				ok, remaining, reset = h.admit(at, ends)
			}
			status := 200
			if !ok {
				status, latency = 429, 0.002
			} else {
				ends = append(ends[max(len(ends)-64, 0):], at+latency)
			}
			text := fmt.Sprintf(`{"time": %.6f, "host": %q, "status": %d, "request_time": %.6f`, at, h.name, status, latency)
			if remaining >= 0 {
				text += fmt.Sprintf(`, "remaining": %d, "reset": %.0f`, remaining, reset)
			}
			text += extra
			lines = append(lines, line{at, text + "}"})
		}
	}
	slices.SortStableFunc(lines, func(a, b line) int { return cmp.Compare(a.at, b.at) })
	path := filepath.Join(t.TempDir(), "access.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		fmt.Fprintln(w, l.text)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// calibrateLog calibrates the log at path and checks the model on it.
func calibrateLog(t *testing.T, path string) (*Calibration, string) {
	t.Helper()
	return calibrateMapped(t, path, logs.Mapping{Host: "host", Remaining: "remaining", Reset: "reset"})
}

// calibrateMapped calibrates the log at path, read by mapping m, and
// checks the model on it.
func calibrateMapped(t *testing.T, path string, m logs.Mapping) (*Calibration, string) {
	t.Helper()
	log := ReplayLog{Path: path, Options: logs.Options{Format: logs.FormatJSON, Mapping: m}}
	c, err := Calibrate(log, 1)
	if err != nil {
		t.Fatal(err)
	}
	text, err := c.Scenario("calibrated")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse("calibrated.toml", []byte(text))
	if err != nil {
		t.Fatalf("the calibrated scenario does not load: %v\n%s", err, text)
	}
	cfg, err := sc.Build()
	if err != nil {
		t.Fatalf("the calibrated scenario does not build: %v\n%s", err, text)
	}
	out, err := c.Check(cfg, DefaultCalibrationThreshold, client.Options{SeriesUnread: true})
	if err != nil {
		t.Fatal(err)
	}
	out.Series.Close()
	return c, text
}

// within fails unless got is within tol (a fraction) of want.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*want {
		t.Errorf("%s = %.4g, want %.4g within %.0f%%", what, got, want, 100*tol)
	}
}

// start is a generated log's first instant: 13:00:17 UTC, so that no
// window starts with the log.
var start = float64(time.Date(2026, 3, 2, 13, 0, 17, 0, time.UTC).Unix())

func TestCalibrateFixedWindow(t *testing.T) {
	path := writeGeneratedLog(t, 7, start, 600,
		genHost{name: "api", rate: 50, median: 0.12, sigma: 0.4, admit: genFixedWindow(2400, 60)},
		genHost{name: "cdn", rate: 8, median: 0.03, sigma: 0.3})
	c, text := calibrateLog(t, path)
	if len(c.Hosts) != 2 {
		t.Fatalf("hosts = %+v, want api and cdn", c.Hosts)
	}
	api, cdn := c.Hosts[0], c.Hosts[1]
	within(t, "api arrival rate", api.Arrivals.Rate, 50, 0.05)
	within(t, "api latency median", api.Latency.P50S, 0.12, 0.10)
	within(t, "cdn arrival rate", cdn.Arrivals.Rate, 8, 0.05)
	within(t, "cdn latency median", cdn.Latency.P50S, 0.03, 0.10)
	q := api.Quota
	if q.Kind != kindname.QuotaFixedWindow || q.Window != "1m0s" {
		t.Fatalf("api quota = %+v, want a fixed window of 1m", q)
	}
	within(t, "api limit", float64(q.Limit), 2400, 0.10)
	if q.Headers == nil || q.Headers.RemainingMax != 2399 || q.Headers.ResetAligned == nil || *q.Headers.ResetAligned < 0.99 {
		t.Errorf("api headers = %+v, want remaining up to 2399 and resets on minute boundaries", q.Headers)
	}
	if cdn.Quota.Kind != "" || !strings.HasPrefix(cdn.Quota.Reason, "no 429s: the quota is at least") {
		t.Errorf("cdn quota = %+v, want none inferred", cdn.Quota)
	}
	if !c.Trusted || c.Errors.Goodput >= 0.10 || c.Errors.Refused >= 0.10 || c.Errors.LatencyP50 >= 0.10 || c.Errors.LatencyP99 >= 0.10 {
		t.Errorf("errors %+v, verdict %q: want all under 10%%, trusted\n%s", c.Errors, c.Verdict, text)
	}
	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"quota     fixed_window 2400/1m0s: ", "tried fixed_window 2400/1m0s", "quota     none: no 429s", c.Verdict} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text has no %q:\n%s", want, b.String())
		}
	}
	if c.Errors.P99Minutes < 9 {
		t.Errorf("p99 compared over %d minutes, want the log's ten or eleven", c.Errors.P99Minutes)
	}
	t.Logf("api: rate %.4g, p50 %.4g s, quota %s %d/%s (score %.3f, next best %.3f); errors %+v", api.Arrivals.Rate, api.Latency.P50S, q.Kind, q.Limit, q.Window, bestScore(q), nextScore(q), c.Errors)
}

func TestCalibrateTokenBucket(t *testing.T) {
	path := writeGeneratedLog(t, 11, start, 600,
		genHost{name: "api", rate: 50, median: 0.2, sigma: 0.4, admit: genTokenBucket(40, 80)})
	c, text := calibrateLog(t, path)
	api := c.Hosts[0]
	within(t, "arrival rate", api.Arrivals.Rate, 50, 0.05)
	within(t, "latency median", api.Latency.P50S, 0.2, 0.10)
	q := api.Quota
	if q.Kind != kindname.QuotaTokenBucket {
		t.Fatalf("quota = %+v, want a token bucket", q)
	}
	within(t, "rate", q.Rate, 40, 0.10)
	within(t, "burst", q.Burst, 80, 0.10)
	if !c.Trusted {
		t.Errorf("errors %+v, verdict %q: want trusted\n%s", c.Errors, c.Verdict, text)
	}
	t.Logf("rate %.4g, p50 %.4g s, quota %s %.4g/s burst %.4g (score %.3f, next best %.3f); errors %+v", api.Arrivals.Rate, api.Latency.P50S, q.Kind, q.Rate, q.Burst, bestScore(q), nextScore(q), c.Errors)
}

func TestCalibrateSlidingWindow(t *testing.T) {
	path := writeGeneratedLog(t, 17, start, 300,
		genHost{name: "api", rate: 40, median: 0.1, sigma: 0.4, admit: genSlidingWindow(300, 10)})
	c, text := calibrateLog(t, path)
	q := c.Hosts[0].Quota
	if q.Kind != kindname.QuotaSlidingWindow || q.Window != "10s" {
		t.Fatalf("quota = %+v, want a sliding window of 10s", q)
	}
	within(t, "limit", float64(q.Limit), 300, 0.10)
	if !c.Trusted {
		t.Errorf("errors %+v, verdict %q: want trusted\n%s", c.Errors, c.Verdict, text)
	}
	t.Logf("quota %s %d/%s (score %.3f, next best %.3f); errors %+v", q.Kind, q.Limit, q.Window, bestScore(q), nextScore(q), c.Errors)
}

// Times logged to the second are ties at each second; the arrival fit
// sees them spread within their second, as a replay does, and judges
// the process that made them, not bursts.
func TestCalibrateTimesLoggedToTheSecond(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	var b strings.Builder
	for at := start; at < start+200; at += rng.ExpFloat64() / 30 {
		fmt.Fprintf(&b, "{\"time\": %d, \"status\": 200, \"request_time\": %.4f}\n", int64(at), 0.05*math.Exp(0.3*rng.NormFloat64()))
	}
	path := filepath.Join(t.TempDir(), "seconds.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Calibrate(ReplayLog{Path: path, Options: logs.Options{Format: logs.FormatJSON}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Hosts[0].Arrivals
	if a.Process != "poisson" {
		t.Errorf("process %s (%s), want poisson", a.Process, a.Reason)
	}
	within(t, "arrival rate", a.Rate, 30, 0.05)
}

// A host among others with too few requests to judge their process is
// taken as Poisson at its mean rate, and the rest is calibrated.
func TestCalibrateRareHost(t *testing.T) {
	path := writeGeneratedLog(t, 29, start, 150,
		genHost{name: "api", rate: 40, median: 0.1, sigma: 0.4},
		genHost{name: "rare", rate: 0.2, median: 0.05, sigma: 0.3})
	c, text := calibrateLog(t, path)
	if len(c.Hosts) != 2 {
		t.Fatalf("hosts %+v, want api and rare", c.Hosts)
	}
	rare := c.Hosts[1].Arrivals
	if n := c.Hosts[1].Requests; n < 2 || n >= 50 || rare.Process != "poisson" || !strings.Contains(rare.Reason, "too few to judge") {
		t.Errorf("rare host of %d requests: arrivals %+v, want Poisson for too few to judge", n, rare)
	}
	within(t, "rare host's rate", rare.Rate, float64(c.Hosts[1].Requests)/c.SpanS, 1e-3)
	if !strings.Contains(text, `{ name = "rare", weight = `) {
		t.Errorf("the scenario does not weigh the rare host:\n%s", text)
	}
}

// A server that sheds a fifth of its requests at random follows no
// window, bucket or concurrency limit: the calibration says so and does
// not trust its model.
func TestCalibrateWrongModel(t *testing.T) {
	shed := func(t float64, _ []float64) (bool, int64, float64) {
		return math.Mod(t*7919.123, 1) >= 0.2, -1, -1
	}
	path := writeGeneratedLog(t, 13, start, 300, genHost{name: "api", rate: 50, median: 0.2, sigma: 0.8, admit: shed})
	c, _ := calibrateLog(t, path)
	q := c.Hosts[0].Quota
	if c.Hosts[0].Refused == 0 {
		t.Fatal("the generated log has no refusals")
	}
	if c.Trusted {
		t.Errorf("verdict %q, errors %+v: want not trusted for random shedding (quota %+v)", c.Verdict, c.Errors, q)
	}
	if !strings.Contains(c.Verdict, "api's refusals follow no fixed window, sliding window, token bucket or concurrency limit") {
		t.Errorf("verdict %q: want it to name the unexplained refusals", c.Verdict)
	}
	if !strings.Contains(q.Reason, "no fixed window, sliding window, token bucket or concurrency limit explains them") {
		t.Errorf("quota reason %q: want it to say no candidate explains the refusals", q.Reason)
	}
}

// A server that refuses beyond 14 requests in service is a concurrency
// limit of 14, which a token bucket (agreement 0.69) does not explain.
func TestCalibrateConcurrencyLimit(t *testing.T) {
	path := writeGeneratedLog(t, 13, start, 300,
		genHost{name: "api", rate: 50, median: 0.2, sigma: 0.8, admit: genConcurrency(14)})
	c, _ := calibrateLog(t, path)
	q := c.Hosts[0].Quota
	if q.Kind != "concurrency" || q.Limit != 14 || !c.Trusted || nextScore(q) > 0.8 {
		t.Errorf("quota %+v (next best %.2f); %s", q.QuotaShape, nextScore(q), c.Verdict)
	}
}

func bestScore(q QuotaInference) float64 {
	best := 0.0
	for _, c := range q.Candidates {
		best = max(best, c.Score)
	}
	return best
}

// nextScore is the best agreement of a candidate of another kind or
// window than the chosen one.
func nextScore(q QuotaInference) float64 {
	next := 0.0
	for _, c := range q.Candidates {
		if c.Kind != q.Kind || c.Window != q.Window {
			next = max(next, c.Score)
		}
	}
	return next
}

// The same log and seed give the same calibration, byte for byte: the
// hosts, the minutes and the candidates come out in one order.
func TestCalibrateIsDeterministic(t *testing.T) {
	path := writeGeneratedLog(t, 19, start, 300,
		genHost{name: "api", rate: 30, median: 0.1, sigma: 0.4, admit: genFixedWindow(1500, 60)},
		genHost{name: "cdn", rate: 5, median: 0.03, sigma: 0.3},
		genHost{name: "auth", rate: 5, median: 0.05, sigma: 0.3, admit: genTokenBucket(4, 8)})
	var docs [2][]byte
	for i := range docs {
		c, _ := calibrateLog(t, path)
		var err error
		if docs[i], err = json.Marshal(c); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(docs[0], docs[1]) {
		t.Errorf("two calibrations of one log differ:\n%s\n%s", docs[0], docs[1])
	}
}

// A fixed window's reason says its refusals came late only when they
// did: a log timed to the second, against a window of a second, puts
// every refusal at its window's start.
func TestFixedWindowReasonSaysWhereRefusalsFell(t *testing.T) {
	c := QuotaCandidate{QuotaShape: QuotaShape{Kind: kindname.QuotaFixedWindow, Window: "1s", Limit: 100}, Saturated: 5, AtLimit: 1, Matched: 40, Score: 1}
	for phase, want := range map[float64]string{0.93: "refused late in the window (mean position 0.93)", 0: "refused early in the window, not late"} {
		c.LatePhase = phase
		got := quotaReason(c, 40)
		if !strings.Contains(got, want) || (phase < 0.5 && strings.Contains(got, "refused late")) {
			t.Errorf("phase %.2f: %q, want %q", phase, got, want)
		}
	}
}

// Bad lines are counted and the first of them named by file and line in
// the text, as replay names them: a count alone says nothing to fix.
func TestCalibrateNamesBadLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	var b strings.Builder
	for at := start; at < start+120; at += rng.ExpFloat64() / 30 {
		fmt.Fprintf(&b, "{\"time\": %.3f, \"status\": 200, \"request_time\": %.4f}\n", at, 0.05*math.Exp(0.3*rng.NormFloat64()))
	}
	fmt.Fprintf(&b, "{\"time\": %.3f, \"status\": 200}\n", start+119.9)
	path := filepath.Join(t.TempDir(), "gaps.jsonl")
	if err := os.WriteFile(path, []byte("not json\n"+b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Calibrate(ReplayLog{Path: path, Options: logs.Options{Format: logs.FormatJSON, Mapping: logs.Mapping{Latency: "request_time"}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(b.String(), "\n") + 1
	for _, want := range []string{"; 2 bad lines skipped\n", "\n  bad line " + path + ":1: ", fmt.Sprintf("\n  bad line %s:%d: no latency field", path, lines)} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text has no %q:\n%s", want, text.String()[:min(len(text.String()), 600)])
		}
	}
}

// TestReservoirKeepsAUniformSample holds the sampler of a calibration's
// latencies and costs: every value while it has room, then a sample of
// its size in which late values stand as good a chance as early ones (a
// reservoir that stopped replacing would keep only the first hundred,
// mean 49.5; one that replaced too eagerly would keep mostly the last).
func TestReservoirKeepsAUniformSample(t *testing.T) {
	r := newReservoir[int64](100, sim.StreamSource(1, "test"))
	for v := range int64(50) {
		r.add(v)
	}
	if len(r.kept) != 50 || r.kept[49] != 49 {
		t.Fatalf("below its size it keeps %d values, the last %d", len(r.kept), r.kept[len(r.kept)-1])
	}
	for v := int64(50); v < 10_000; v++ {
		r.add(v)
	}
	if len(r.kept) != 100 || r.seen != 10_000 {
		t.Fatalf("kept %d of %d seen, want 100 of 10,000", len(r.kept), r.seen)
	}
	var sum float64
	late := 0
	for _, v := range r.kept {
		sum += float64(v)
		if v >= 5_000 {
			late++
		}
	}
	// A uniform sample of 100 from 0…9,999: mean 4,999.5, standard error
	// about 289; about half of it from the second half.
	if mean := sum / 100; mean < 3_800 || mean > 6_200 || late < 30 || late > 70 {
		t.Fatalf("sample mean %.0f with %d of 100 from the second half: not uniform", mean, late)
	}
}

// The busiest minute's rate counts a minute the log covers in part over
// the part it covers: a log of 50 s at 1/s reads 1/s, not 50/60; a full
// minute of 120 reads 2/s; a last minute of a few seconds is too short
// to read as the busiest.
func TestPeakMinuteRateOfPartialMinutes(t *testing.T) {
	at := func(start time.Duration, n int, gap time.Duration) []int64 {
		var out []int64
		for i := range n {
			out = append(out, int64(start+time.Duration(i)*gap))
		}
		return out
	}
	for _, c := range []struct {
		name  string
		times []int64
		want  float64
	}{
		{"50 s at 1/s", at(10*time.Second, 51, time.Second), 1},
		{"a full minute of 120", at(0, 120, 500*time.Millisecond), 2},
		{"a minute at 1/s, then 3 in 100 ms", append(at(0, 60, time.Second), at(time.Minute, 3, 50*time.Millisecond)...), 1},
	} {
		if got := peakMinuteRate(c.times); math.Abs(got-c.want) > 0.02*c.want {
			t.Errorf("%s: %v/s, want %v/s", c.name, got, c.want)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// sigma99 is the lognormal σ through a p50 and a p99.
func sigma99(p50, p99 float64) float64 { return math.Log(p99/p50) / 2.3263478740408408 }

// The sizing table: rate = quota × 0.9 ÷ instances, a second of burst
// (whole), concurrency = quota × mean latency (lognormal fitted to p50 and
// p99), semaphore = memory ÷ p99 response, window limit = limit −
// in-flight allowance, divided among the instances. Each figure is checked
// against its arithmetic done here.
func TestSizeArithmetic(t *testing.T) {
	code, out, errOut := cli("size", "--quota", "6000/min", "--instances", "2", "--latency-p50", "200ms", "--latency-p99", "1s",
		"--memory-budget", "512MiB", "--response-p99", "2MiB", "--window-limit", "5000", "--window", "1h",
		"--cost-quota", "200000/min", "--cost-p50", "1200", "--cost-p99", "8000", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s scenarios.Sizing
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	sigma := sigma99(0.2, 1)
	mean := 0.2 * math.Exp(sigma*sigma/2)
	costSigma := sigma99(1200, 8000)
	costMean := 1200 * math.Exp(costSigma*costSigma/2)
	window := 5000 - math.Ceil(5000.0/3600*mean)
	binding := math.Min(100, math.Min(5000.0/3600, 200000.0/60/costMean)) // the window binds
	p, tot := s.PerInstance, s.Total
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"quota", s.Inputs.QuotaRPS, 100},
		{"mean latency", s.LatencyMean, mean},
		{"rate per instance", p.Rate, 45},
		{"burst per instance", p.Burst, 45},
		{"total rate", tot.Rate, 90},
		{"total burst", tot.Burst, 90},
		{"in flight at the binding quota", s.InFlight, binding * mean},
		{"concurrency per instance", p.Concurrency, math.Max(1, math.Ceil(binding*mean/2))},
		{"memory semaphore", float64(p.MemorySemaphore), 256},
		{"window limit per instance", float64(p.WindowLimit), math.Floor(window / 2)},
		{"window limit in all", float64(tot.WindowLimit), 2 * math.Floor(window/2)},
		{"cost mean", s.CostMean, costMean},
		{"cost reservation (p90)", float64(s.CostReserve), math.Ceil(1200 * math.Exp(1.2815515655446004*costSigma))},
		{"cost rate per instance", p.CostRate, 0.9 * 200000 / 60 / 2},
		{"cost burst per instance", p.CostBurst, 0.9 * 200000 / 2},
		{"sized rate", s.SizedRPS, math.Min(90, math.Min(2*math.Floor(window/2)/3600, 0.9*200000/60/costMean))},
		// The window binds below the bucket's rate, so the bucket's burst
		// absorbs nothing: the line holds LineDepth itself.
		{"waiting bound per instance", float64(p.WaitingBound), scenarios.LineDepth},
	} {
		if math.Abs(c.got-c.want) > 1e-6*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if p.Permits < int64(p.Concurrency) || p.Permits > int64(p.Concurrency)+40 {
		t.Errorf("permits %d: want at least the concurrency %v, with headroom of a few standard deviations", p.Permits, p.Concurrency)
	}
}

// sizeCase is one sizing the verification is held to: a quota in one
// unit, what the server enforces besides, and the rate it binds at.
type sizeCase struct {
	name  string
	args  []string
	quota float64 // requests per second
	// window and cost, when set: the limit per window, the cost quota
	// per second and the cost quantiles.
	windowLimit   int64
	window        time.Duration
	costQuota     float64
	costP50, cost int64
}

// sizeCases are a quota in each unit with 1, 2, 3 and 10 instances, alone,
// with a window limit and with a cost quota.
func sizeCases() []sizeCase {
	units := []struct {
		quota    string
		rps      float64
		window   []string
		limit    int64
		per      time.Duration
		cost     string
		costRate float64
	}{
		{"50/s", 50, []string{"1200", "1m"}, 1200, time.Minute, "3000/s", 3000},
		{"600/min", 10, []string{"300", "1m"}, 300, time.Minute, "200000/min", 200000.0 / 60},
		{"5000/h", 5000.0 / 3600, []string{"5000", "1h"}, 5000, time.Hour, "6000000/h", 6000000.0 / 3600},
	}
	var out []sizeCase
	for _, u := range units {
		for _, n := range []int{1, 2, 3, 10} {
			base := []string{"--quota", u.quota, "--instances", strconv.Itoa(n), "--latency-p50", "250ms", "--latency-p99", "2s"}
			out = append(out,
				sizeCase{name: fmt.Sprintf("%s × %d", u.quota, n), args: base, quota: u.rps},
				sizeCase{name: fmt.Sprintf("%s × %d, window %s per %s", u.quota, n, u.window[0], u.window[1]), quota: u.rps,
					args: append(base[:len(base):len(base)], "--window-limit", u.window[0], "--window", u.window[1]), windowLimit: u.limit, window: u.per},
				sizeCase{name: fmt.Sprintf("%s × %d, cost %s", u.quota, n, u.cost), quota: u.rps, costQuota: u.costRate, costP50: 1200, cost: 8000,
					args: append(base[:len(base):len(base)], "--cost-quota", u.cost, "--cost-p50", "1200", "--cost-p99", "8000")})
		}
	}
	return out
}

// sized runs `limitsim size` with args and returns its JSON and the TOML it
// printed to paste under [client].
func sized(t *testing.T, args ...string) (*scenarios.Sizing, string) {
	t.Helper()
	code, text, errOut := cli(append([]string{"size"}, args...)...)
	if code != exitOK {
		t.Fatalf("size %v: exit %d: %s", args, code, errOut)
	}
	_, paste, ok := strings.Cut(text, "per instance, to paste under [client]:\n\n")
	if !ok {
		t.Fatalf("size %v printed no TOML:\n%s", args, text)
	}
	paste, _, _ = strings.Cut(paste, "\nverify")
	code, js, errOut := cli(append([]string{"size", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("size --json %v: exit %d: %s", args, code, errOut)
	}
	var s scenarios.Sizing
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	return &s, paste
}

// applied is what the pasted configuration did against the server.
type applied struct {
	rate429, goodput float64
	attempts         int64
}

// apply runs the pasted TOML on c's instances, offered load × the binding
// quota (Poisson), against a server written here from the published
// figures alone: the quota as a token bucket with a second of burst, the
// window as a sliding window, the cost quota as a bucket of a minute that
// charges each response's lognormal cost. Goodput is counted from the
// warm-up to the horizon (whole windows), not into the latency tail.
func apply(t *testing.T, c sizeCase, paste string, binding, sized, load float64) applied {
	t.Helper()
	warmup, measure := 2*time.Minute, max(5*time.Minute, time.Duration(3000/sized*1e9))
	quotas := []string{fmt.Sprintf("{ kind = \"token_bucket\", rate = %v, burst = %v }", c.quota, math.Max(1, c.quota))}
	if c.windowLimit > 0 {
		quotas = append(quotas, fmt.Sprintf("{ kind = \"sliding_window\", limit = %d, window = %q }", c.windowLimit, c.window))
		warmup, measure = c.window, max(2*c.window, (measure+c.window-1)/c.window*c.window)
	}
	extra := ""
	if c.costQuota > 0 {
		quotas = append(quotas, fmt.Sprintf("{ kind = \"token_bucket\", unit = \"cost\", rate = %v, burst = %v }", c.costQuota, 60*c.costQuota))
		extra = fmt.Sprintf("response_cost = { dist = \"lognormal\", p50 = %d, p99 = %d }\n", c.costP50, c.cost)
	}
	interval := time.Second
	if c.windowLimit > 0 {
		interval = c.window / 60
	}
	src := fmt.Sprintf("name = \"pasted\"\n[run]\nduration = %q\nwarmup = %q\ninterval = %q\n\n[workload]\nrate = %v\n\n[client]\ninstances = %d\n%s\n"+
		"[[upstream]]\nhost = \"*\"\nlatency = { dist = \"lognormal\", p50 = \"250ms\", p99 = \"2s\" }\nquota = [%s]\nretry_after = \"1s\"\n%s",
		warmup+measure, warmup, interval, load*binding, instancesOf(c), paste, strings.Join(quotas, ", "), extra)
	sc, err := scenarios.Parse("pasted.toml", []byte(src))
	if err != nil {
		t.Fatalf("%s: the pasted TOML does not load: %v\n%s", c.name, err, src)
	}
	out, err := sc.Simulate(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var succeeded float64
	from, to := warmup.Seconds(), (warmup + measure).Seconds()
	out.Series.ScanNamed(0, []string{"t_s", "succeeded"}, func(_ int, v []float64) bool {
		if v[0] > from+1e-6 && v[0] < to+1e-6 {
			succeeded += v[1]
		}
		return true
	})
	return applied{rate429: out.Results.Rate429, goodput: succeeded / (to - from), attempts: out.Results.Requests.Attempts}
}

func instancesOf(c sizeCase) int {
	for i, a := range c.args {
		if a == "--instances" {
			n, _ := strconv.Atoi(c.args[i+1])
			return n
		}
	}
	return 1
}

// What `size` prints holds when applied, for every unit (N/s, N/min, N/h)
// and 1, 2, 3 and 10 instances, alone, with a window the server enforces
// and with a cost quota it meters: offered the binding quota (lulls that
// fill the buckets, then bursts) and twice it (the limiters always busy),
// under 1% of attempts are answered 429, and goodput is within 10% of the
// rate the limiters let through — which is itself near what binds (0.9 of
// a rate, a window less what is in flight).
// A burst rounded up per instance, the division by instances left out, a
// window or cost quota ignored, or a semaphore that bunches the paced
// requests each fail here.
func TestSizeVerifyHoldsWhenApplied(t *testing.T) {
	for _, c := range sizeCases() {
		s, paste := sized(t, c.args...)
		binding := c.quota
		if c.windowLimit > 0 {
			binding = math.Min(binding, float64(c.windowLimit)/c.window.Seconds())
		}
		if c.costQuota > 0 {
			sigma := sigma99(float64(c.costP50), float64(c.cost))
			binding = math.Min(binding, c.costQuota/(float64(c.costP50)*math.Exp(sigma*sigma/2)))
		}
		if s.SizedRPS < 0.85*binding || s.SizedRPS > binding {
			t.Errorf("%s: sized %.4g/s, want 0.85 to 1 × %.4g", c.name, s.SizedRPS, binding)
		}
		at := apply(t, c, paste, binding, s.SizedRPS, 1)
		beyond := apply(t, c, paste, binding, s.SizedRPS, 2)
		for _, r := range []applied{at, beyond} {
			if r.rate429 >= 0.01 || r.attempts < 2000 {
				t.Errorf("%s: %.2f%% of %d attempts answered 429\n%s", c.name, 100*r.rate429, r.attempts, paste)
			}
		}
		if beyond.goodput < 0.9*s.SizedRPS || beyond.goodput > 1.02*s.SizedRPS {
			t.Errorf("%s: goodput %.4g/s offered twice the quota, sized %.4g/s\n%s", c.name, beyond.goodput, s.SizedRPS, paste)
		}
	}
}

// --verify says the same: the example that reported 27% of 429s and
// "lower the rate" (5000/h, three instances) holds, and so does every case
// above; a memory budget of one response at 100/s is sized at the rate
// one permit serves, and holds too.
func TestSizeVerify(t *testing.T) {
	code, out, errOut := cli("size", "--quota", "5000/h", "--latency-p50", "250ms", "--latency-p99", "2s", "--instances", "3", "--verify")
	if code != exitOK || !strings.Contains(out, "verify (simulated, 3 instance(s)): holds") || !strings.Contains(out, `scope = "cluster"`) {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
	for _, c := range sizeCases() {
		code, js, errOut := cli(append([]string{"size", "--verify", "--json"}, c.args...)...)
		var s scenarios.Sizing
		if err := json.Unmarshal([]byte(js), &s); code != exitOK || err != nil {
			t.Fatalf("%s: exit %d, %v: %s", c.name, code, err, errOut)
		}
		if v := s.Verify; !v.Simulated || !v.Holds || v.Rate429 >= 0.01 || v.GoodputRPS < 0.9*v.SizedRPS {
			t.Errorf("%s: %+v", c.name, v)
		}
	}
	code, out, _ = cli("size", "--quota", "100/s", "--latency-p50", "250ms", "--latency-p99", "2s", "--memory-budget", "2MiB", "--response-p99", "2MiB", "--verify")
	// The memory budget allows one permit: size sizes the rate it serves
	// (1 ÷ the mean latency), says memory binds, and the check holds.
	if code != exitOK || !strings.Contains(out, "verify (simulated, 1 instance(s)): holds") || !strings.Contains(out, "Memory binds: 1 in flight") {
		t.Errorf("one permit at 100/s: exit %d\n%s", code, out)
	}
	// Two in a hundred hours: 2,000 requests would take twelve years.
	code, out, _ = cli("size", "--quota", "0.02/h", "--latency-p50", "250ms", "--latency-p99", "2s", "--verify")
	if code != exitAssert || !strings.Contains(out, "verify (NOT simulated, 1 instance(s)): not simulated: 2000 requests") {
		t.Errorf("0.02/h: exit %d\n%s", code, out)
	}
}

// tableRow is a row of the sizing table: the label, then the figure per
// instance and in total (a number with an optional "/s", or shared).
var tableRow = regexp.MustCompile(`^(.+?)\s{2,}(\S+)\s+(\S+)( shared)?$`)

// Each total in the table is the sum of the instances' figures, or is
// marked shared (one limiter for all, "(shared)" per instance); the JSON's
// totals are sums too (scenarios tests every field).
func TestSizeTotalsAreSums(t *testing.T) {
	for _, args := range [][]string{
		{"--quota", "100/s", "--instances", "7", "--memory-budget", "512MiB", "--response-p99", "2MiB", "--window-limit", "200000", "--window", "1h",
			"--cost-quota", "200000/min", "--cost-p50", "1200", "--cost-p99", "8000"},
		{"--quota", "5000/h", "--instances", "3"},
	} {
		args = append(args, "--latency-p50", "250ms", "--latency-p99", "2s")
		code, out, errOut := cli(append([]string{"size"}, args...)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		n, _ := strconv.Atoi(args[3])
		table, _, _ := strings.Cut(out[strings.Index(out, "per instance"):], "\n\n")
		rows, shared := 0, 0
		for _, line := range strings.Split(table, "\n")[1:] {
			m := tableRow.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("row %q does not parse", line)
			}
			rows++
			if m[4] != "" || m[2] == "(shared)" {
				if m[4] == "" || m[2] != "(shared)" {
					t.Errorf("%q: a shared row says so in both columns", line)
				}
				shared++
				continue
			}
			figure := func(s string) (float64, error) { // "2,250/s": grouped, never 1e+04
				return strconv.ParseFloat(strings.ReplaceAll(strings.TrimSuffix(s, "/s"), ",", ""), 64)
			}
			per, err1 := figure(m[2])
			tot, err2 := figure(m[3])
			if err1 != nil || err2 != nil || math.Abs(tot-float64(n)*per) > 1e-3*tot {
				t.Errorf("%q: total %s is not %d × %s", line, m[3], n, m[2])
			}
		}
		if wantShared := map[bool]int{true: 2, false: 0}[n == 3]; rows < 4 || shared != wantShared {
			t.Errorf("%v: %d rows, %d shared:\n%s", args, rows, shared, table)
		}
	}
}

// Bad input exits 2 naming the flag.
func TestSizeBadInput(t *testing.T) {
	lat := []string{"--latency-p50", "250ms", "--latency-p99", "2s"}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--quota", "100"}, "--quota"},
		{[]string{"--quota", "1e-300/s"}, "--quota"},
		{[]string{"--quota", "100/s", "--instances", "0"}, "--instances"},
		{[]string{"--quota", "100/s", "--cost-quota", "1000/min", "--cost-p50", "800", "--cost-p99", "800"}, "--cost-p99"},
		{[]string{"--quota", "100/s", "--cost-quota", "1000/min", "--cost-p50", "1200", "--cost-p99", "8000"}, "--cost-quota"},
		{[]string{"--quota", "100/s", "--cost-quota", "1000/day", "--cost-p50", "1200", "--cost-p99", "8000"}, "--cost-quota"},
		{[]string{"--quota", "100/s", "--instances", "10", "--window-limit", "10", "--window", "1h"}, "--window-limit"},
		{[]string{"--quota", "100/s", "--window-limit", "100000000", "--window", "1h"}, "--window-limit"},
	} {
		code, _, errOut := cli(append(append([]string{"size"}, c.args...), lat...)...)
		if code != exitInvalid || !strings.Contains(errOut, c.flag) {
			t.Errorf("%v: exit %d, %q: want exit %d naming %s", c.args, code, errOut, exitInvalid, c.flag)
		}
	}
	for _, bad := range [][]string{{"size", "--quota", "100/s", "--latency-p50", "2ms", "--latency-p99", "1ms"},
		// A lognormal with no finite mean: the table printed a negative
		// mean once.
		{"size", "--quota", "100/s", "--latency-p50", "1ns", "--latency-p99", "2562047h"}} {
		if code, _, _ := cli(bad...); code != exitInvalid {
			t.Errorf("%v: exit %d, want %d", bad, code, exitInvalid)
		}
	}
	// A required flag left out is a usage error (exit 1), as a flag that
	// does not parse is; a value given that cannot be used is invalid
	// input (exit 2, above).
	if code, _, errOut := cli("size", "--quota", "100/s", "--latency-p50", "0s", "--latency-p99", "1s"); code != exitInvalid || !strings.Contains(errOut, "--latency-p50") {
		t.Errorf("--latency-p50 0s, given: exit %d, %q: want exit %d naming it", code, errOut, exitInvalid)
	}
	for _, missing := range [][]string{{"size"}, {"size", "--latency-p50", "100ms", "--latency-p99", "1s"}, {"size", "--quota", "10/s"}} {
		if code, _, errOut := cli(missing...); code != exitUsage || !strings.Contains(errOut, "are required") || !strings.Contains(errOut, "usage: limitsim size") {
			t.Errorf("%v: exit %d, %q: want exit %d naming the required flags", missing, code, errOut, exitUsage)
		}
	}
}

// size --verify exits 5 when its check does not hold or could not be
// simulated (a gate on --verify must not pass on nothing proven), and 0
// when it holds or was not asked for.
func TestSizeVerifyExit(t *testing.T) {
	var b strings.Builder
	for _, c := range []struct {
		v    *scenarios.SizingCheck
		want int
	}{
		{nil, exitOK},
		{&scenarios.SizingCheck{Simulated: true, Holds: true}, exitOK},
		{&scenarios.SizingCheck{Simulated: false, Note: "not simulated: 2000 requests"}, exitAssert},
		{&scenarios.SizingCheck{Simulated: true, Holds: false, Note: "3% 429s"}, exitAssert},
	} {
		if got := exitCodeOf(verifyExit(c.v), &b); got != c.want {
			t.Errorf("%+v: exit %d, want %d", c.v, got, c.want)
		}
	}
	if !strings.Contains(b.String(), "3% 429s") || !strings.Contains(b.String(), "proves nothing: not simulated") {
		t.Errorf("the failing check is not named: %q", b.String())
	}
}

// Large quotas print as people read them: "10,000/s", never "1e+04/s"
// (%g's form for five digits and more), in the header, the table and the
// Little's Law line alike.
func TestSizePrintsNoScientificNotation(t *testing.T) {
	code, out, errOut := cli("size", "--quota", "10000/s", "--instances", "4", "--latency-p50", "100ms", "--latency-p99", "1s",
		"--cost-quota", "2000000/min", "--cost-p50", "1200", "--cost-p99", "8000", "--window-limit", "200000", "--window", "1h")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if regexp.MustCompile(`[0-9]e[+-][0-9]`).MatchString(out) {
		t.Errorf("scientific notation in size's output:\n%s", out)
	}
	for _, want := range []string{"quota 10,000/s shared by 4", "9,000/s", "requests in flight"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// A memory budget bounds the requests in flight, and so the rate: five
// responses of 2 MiB in 10 MiB at a mean latency of 254 ms serve at most
// 5 ÷ 0.254 ≈ 19.7/s, sized at 0.9 of it, not the quota's 90/s, and size
// says so (its sized rate, its waiting bound of LineDepth × (mean ÷ p50)²,
// the line a semaphore served by varying latencies needs, and a line
// naming memory), which --verify then measures. A budget smaller than one
// response holds none: invalid input, not a semaphore of 1 over budget.
func TestSizeMemoryBindsTheRate(t *testing.T) {
	args := []string{"size", "--quota", "100/s", "--latency-p50", "200ms", "--latency-p99", "1s", "--response-p99", "2MiB"}
	code, out, errOut := cli(append(args, "--memory-budget", "10MiB", "--json")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s scenarios.Sizing
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	sigma := sigma99(0.2, 1)
	want := 0.9 * 5 / (0.2 * math.Exp(sigma*sigma/2))
	line := int64(math.Ceil(scenarios.LineDepth * math.Exp(sigma*sigma) * (1 - 1e-12)))
	if s.PerInstance.MemorySemaphore != 5 || math.Abs(s.SizedRPS-want) > 1e-6*want || s.PerInstance.WaitingBound != line {
		t.Errorf("memory semaphore %d, sized %v/s (want %v), waiting bound %d", s.PerInstance.MemorySemaphore, s.SizedRPS, want, s.PerInstance.WaitingBound)
	}
	if _, text, _ := cli(append(args, "--memory-budget", "10MiB")...); !strings.Contains(text, "Memory binds: 5 in flight an instance") {
		t.Errorf("the text does not say memory binds:\n%s", text)
	}
	if code, _, errOut := cli(append(args, "--memory-budget", "1KiB")...); code != exitInvalid || !strings.Contains(errOut, "holds no response") {
		t.Errorf("a budget under one response: exit %d, %q", code, errOut)
	}
}

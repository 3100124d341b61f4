package scenarios

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/sim/client"
)

// sizingCases are quotas in each unit (per second, per minute, per hour),
// spread over 1, 2, 3 and 10 instances, with and without a window limit
// and a cost quota.
func sizingCases() []SizingInputs {
	var out []SizingInputs
	for _, q := range []float64{100, 600.0 / 60, 5000.0 / 3600} {
		for _, n := range []int{1, 2, 3, 10} {
			base := SizingInputs{QuotaRPS: q, Instances: n, LatencyP50: 0.25, LatencyP99: 2, SafetyMargin: 0.9}
			window := base
			window.WindowLimit, window.WindowS = int64(q*60/2), 60
			cost := base
			cost.CostQuota, cost.CostP50, cost.CostP99 = 200000.0/60, 1200, 8000
			memory := base
			memory.MemoryBytes, memory.ResponseP99 = 512<<20, 2<<20
			out = append(out, base, window, cost, memory)
		}
	}
	return out
}

// Every figure of the total is the sum of the instances' figures: a field
// added to SizingFigures and not summed, or a total worked out on its own
// (⌈quota × 0.9⌉ as the burst while each instance rounds its own), fails.
func TestSizingTotalsAreSums(t *testing.T) {
	for _, in := range sizingCases() {
		s, err := Size(in)
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		per, tot := reflect.ValueOf(s.PerInstance), reflect.ValueOf(s.Total)
		for i := range per.NumField() {
			name := per.Type().Field(i).Name
			var p, sum float64
			switch f := per.Field(i); f.Kind() {
			case reflect.Float64:
				p, sum = f.Float(), tot.Field(i).Float()
			case reflect.Int64:
				p, sum = float64(f.Int()), float64(tot.Field(i).Int())
			default:
				t.Fatalf("SizingFigures.%s: a %v, not summed here", name, f.Kind())
			}
			if want := p * float64(in.Instances); math.Abs(sum-want) > 1e-9*math.Max(1, want) {
				t.Errorf("%+v: total %s = %v, want %d × %v = %v", in, name, sum, in.Instances, p, want)
			}
		}
		if s.Shared != nil && (s.PerInstance.Rate != 0 || s.PerInstance.Burst != 0) {
			t.Errorf("%+v: a shared limiter, and a rate or burst per instance too: %+v", in, s.PerInstance)
		}
	}
}

// The clients' bursts sum to at most the server's (a second of the quota,
// at least one request), each at least one request: a burst rounded up per
// instance (⌈0.3⌉ = 1 each, 3 against the 1.39 of 5000/h), or the division
// dropped, fails. The cost buckets hold at most 0.9 of the server's minute.
func TestSizingBurstsFitTheServer(t *testing.T) {
	for _, in := range sizingCases() {
		s, err := Size(in)
		if err != nil {
			t.Fatal(err)
		}
		server := math.Max(1, in.QuotaRPS)
		rate, burst := s.Total.Rate, s.Total.Burst
		if s.Shared != nil {
			rate, burst = s.Shared.Rate, s.Shared.Burst
		} else if s.PerInstance.Burst < 1 || s.PerInstance.Burst != math.Floor(s.PerInstance.Burst) {
			t.Errorf("%+v: burst per instance %v, want a whole number ≥ 1", in, s.PerInstance.Burst)
		}
		if burst > server || burst < 1 {
			t.Errorf("%+v: the bursts sum to %v, the server holds %v", in, burst, server)
		}
		if math.Abs(rate-0.9*in.QuotaRPS) > 1e-9*in.QuotaRPS {
			t.Errorf("%+v: rate %v in all, want 0.9 × %v", in, rate, in.QuotaRPS)
		}
		if wantShared := float64(in.Instances) > math.Floor(server); (s.Shared != nil) != wantShared {
			t.Errorf("%+v: shared = %v, want %v", in, s.Shared != nil, wantShared)
		}
		if in.CostQuota > 0 && s.Total.CostBurst > 0.9*60*in.CostQuota {
			t.Errorf("%+v: cost bursts sum to %v, over 0.9 of the server's minute %v", in, s.Total.CostBurst, 60*in.CostQuota)
		}
		if in.WindowLimit > 0 && s.Total.WindowLimit > in.WindowLimit-s.WindowAllowance {
			t.Errorf("%+v: window limits sum to %d, over %d − %d", in, s.Total.WindowLimit, in.WindowLimit, s.WindowAllowance)
		}
	}
}

// The permits are a Poisson quantile: P(N ≤ c) ≥ 0.999 for the least c.
func TestSizingPoissonQuantile(t *testing.T) {
	for _, c := range []struct{ m, want float64 }{{1e-9, 1}, {0.5, 4}, {1, 5}, {10, 21}, {100, 132}} {
		if got := poissonQuantile(c.m, 0.999); got != c.want {
			t.Errorf("poissonQuantile(%v) = %v, want %v", c.m, got, c.want)
		}
	}
	// The normal approximation beyond a mean of 1000 stays within two
	// permits of the exact quantile at the switch.
	if a, b := poissonQuantile(1000, 0.999), poissonQuantile(1000.0001, 0.999); math.Abs(a-b) > 2 {
		t.Errorf("at the switch: %v exact, %v approximated", a, b)
	}
}

// The check holds on the sizing's own output for every unit and instance
// count, with and without a window and a cost quota: its runs at the
// quota and beyond under 1% of 429s, goodput within 10% of the sized rate,
// and under 1% refused offered 90% of the sized rate.
func TestSizingCheckHolds(t *testing.T) {
	for _, in := range sizingCases() {
		s, err := Size(in)
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.Check(nil)
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		if !v.Simulated || !v.Holds || len(v.Runs) != 3 {
			t.Errorf("%+v: %s", in, v.Note)
			continue
		}
		if u := v.Runs[2]; u.Refused >= checkRefused || u.OfferedRPS >= v.SizedRPS {
			t.Errorf("%+v: offered %.4g/s of the sized %.4g/s, %.2f%% refused", in, u.OfferedRPS, v.SizedRPS, 100*u.Refused)
		}
		for _, r := range v.Runs {
			if r.Rate429 >= 0.01 || r.Attempts < checkMinRequests {
				t.Errorf("%+v: offered %.4g/s: %.2f%% 429s over %d attempts", in, r.OfferedRPS, 100*r.Rate429, r.Attempts)
			}
		}
		if g := v.Runs[1].GoodputRPS; g < 0.9*v.SizedRPS || g > 1.02*v.SizedRPS {
			t.Errorf("%+v: goodput %.4g/s, sized %.4g/s", in, g, v.SizedRPS)
		}
	}
}

// The check can fail: it runs what it pastes, so a burst of ⌈rate⌉ per
// instance (the old sizing), a rate over the quota, a semaphore that
// binds (one permit at 5000/h bunches the paced requests; one at 100/s
// caps goodput) are each found out, and the note says what to change.
func TestSizingCheckFails(t *testing.T) {
	in := SizingInputs{QuotaRPS: 5000.0 / 3600, Instances: 1, LatencyP50: 0.25, LatencyP99: 2, SafetyMargin: 0.9}
	for _, c := range []struct {
		name  string
		spoil func(s *Sizing)
		want  string
	}{
		{"burst 2 against the server's 1.39", func(s *Sizing) { s.PerInstance.Burst = 2 }, "429"},
		{"the full quota", func(s *Sizing) { s.PerInstance.Rate = s.Inputs.QuotaRPS * 1.05 }, "lower the rate"},
		{"one permit: requests bunch behind it", func(s *Sizing) { s.PerInstance.Permits = 1 }, `semaphore "conns"`},
		{"one permit at 100/s, the rate sized as if memory did not bind", func(s *Sizing) {
			*s = *must(Size(SizingInputs{QuotaRPS: 100, Instances: 1, LatencyP50: 0.25, LatencyP99: 2, SafetyMargin: 0.9}))
			s.PerInstance.MemorySemaphore = 1
		}, `"conns"`},
	} {
		s := must(Size(in))
		c.spoil(s)
		v, err := s.Check(nil)
		if err != nil {
			t.Fatal(err)
		}
		if v.Holds || !strings.Contains(v.Note, c.want) {
			t.Errorf("%s: holds %v: %s", c.name, v.Holds, v.Note)
		}
	}
}

func must(s *Sizing, err error) *Sizing {
	if err != nil {
		panic(err)
	}
	return s
}

// A check that would need an absurd horizon (a quota of one a day: 2,000
// requests take over five years) or too many arrivals (10⁵/s) says so and
// does not hold, rather than pass on a handful of requests.
func TestSizingCheckNotSimulated(t *testing.T) {
	for _, q := range []float64{1.0 / 86400, 1e5} {
		s := must(Size(SizingInputs{QuotaRPS: q, Instances: 2, LatencyP50: 0.25, LatencyP99: 2, SafetyMargin: 0.9}))
		v, err := s.Check(nil)
		if err != nil {
			t.Fatal(err)
		}
		if v.Simulated || v.Holds || len(v.Runs) != 0 || !strings.HasPrefix(v.Note, "not simulated: ") {
			t.Errorf("quota %g/s: %+v", q, v)
		}
	}
}

// Inputs that cannot be divided are refused, naming the input.
func TestSizingRefuses(t *testing.T) {
	base := SizingInputs{QuotaRPS: 10, Instances: 10, LatencyP50: 0.25, LatencyP99: 2, SafetyMargin: 0.9}
	window := base
	window.WindowLimit, window.WindowS = 10, 3600 // 10 − 1 in flight: fewer than one each
	cost := base
	cost.CostQuota, cost.CostP50, cost.CostP99 = 1000.0/60, 1200, 8000 // a minute holds 900, one request 3,400
	for _, c := range []struct {
		in    SizingInputs
		input string
	}{{window, "window_limit"}, {cost, "cost_quota_per_s"}} {
		_, err := Size(c.in)
		if ie, ok := err.(*SizingInputError); !ok || ie.Input != c.input {
			t.Errorf("%+v: %v, want an error on %s", c.in, err, c.input)
		}
	}
}

// A memory budget of one response at 100/s sizes the rate one permit
// serves with the safety margin (0.9 ÷ the mean latency: at the full
// 1 ÷ the mean, 90% of it refused 18% of its arrivals), which the check
// then finds held; a budget under one response holds none and is refused.
func TestSizingMemoryBudgetBindsTheRate(t *testing.T) {
	s := must(Size(SizingInputs{QuotaRPS: 100, Instances: 1, LatencyP50: 0.25, LatencyP99: 2, SafetyMargin: 0.9, MemoryBytes: 1, ResponseP99: 1}))
	if want := 0.9 / s.LatencyMean; math.Abs(s.SizedRPS-want) > 1e-12*want || s.SemaphorePermits() != 1 {
		t.Fatalf("sized %v/s with %d permits, want %v/s with 1", s.SizedRPS, s.SemaphorePermits(), want)
	}
	if v, err := s.Check(nil); err != nil || !v.Holds {
		t.Errorf("check: %v, %+v", err, v)
	}
	if _, err := Size(SizingInputs{QuotaRPS: 100, Instances: 1, LatencyP50: 0.25, LatencyP99: 2, SafetyMargin: 0.9, MemoryBytes: 1, ResponseP99: 2}); err == nil || !strings.Contains(err.Error(), "holds no response") {
		t.Errorf("a budget under one response: %v", err)
	}
}

// A rate that is whole but computes a rounding error above it (1,000 a
// minute × 0.9 ÷ 3 instances is 5.000000000000001 a second) gives a line
// of one second of it, 5, not 6 (then raised to LineDepth less the burst
// of 5), and a burst of 5; a rate a little above a whole number still
// rounds the line up.
func TestSizingWholeRatesAreNotRoundedPast(t *testing.T) {
	for _, c := range []struct {
		quota          float64
		instances      int
		waiting, burst int64
	}{
		{1000.0 / 60, 3, 15, 5}, // LineDepth with the burst: 20 − 5
		{1000.0 / 60, 1, 15, 15},
		{100, 3, 30, 30},
		{101, 3, 31, 30},
	} {
		s, err := Size(SizingInputs{QuotaRPS: c.quota, Instances: c.instances, LatencyP50: 0.3, LatencyP99: 3, SafetyMargin: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		if s.PerInstance.WaitingBound != c.waiting || int64(s.PerInstance.Burst) != c.burst {
			t.Errorf("%v/s over %d: line %d, burst %v; want %d, %d", c.quota, c.instances, s.PerInstance.WaitingBound, s.PerInstance.Burst, c.waiting, c.burst)
		}
	}
}

// A small quota split over instances: 10/s over three is 3/s an instance,
// whose second is a line of 3, which refused 4.5% of requests offered
// 8/s, under the 9/s sized. The sized line absorbs those bursts: offered
// 8/s on seeds the check never used, under 1% is refused.
func TestSizingSmallRatesAbsorbBursts(t *testing.T) {
	s := must(Size(SizingInputs{QuotaRPS: 10, Instances: 3, LatencyP50: 0.05, LatencyP99: 0.5, SafetyMargin: 0.9}))
	if s.PerInstance.WaitingBound != LineDepth-3 {
		t.Fatalf("line %d, want %d", s.PerInstance.WaitingBound, LineDepth-3)
	}
	p, why := s.plan()
	if why != "" {
		t.Fatal(why)
	}
	for _, seed := range []string{"101", "202"} {
		text := strings.Replace(s.checkScenario(p, 8/p.offered), "seed = 1\n", "seed = "+seed+"\n", 1)
		sc, err := Parse("small.toml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		out, err := sc.Simulate(client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r := refusedShare(out.Results); r >= checkRefused {
			t.Errorf("seed %s: %.2f%% refused offered 8/s", seed, 100*r)
		}
	}
}

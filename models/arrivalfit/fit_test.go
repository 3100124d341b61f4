package arrivalfit_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models/arrivalfit"
	"github.com/limitsim/limitsim/models/arrivals"
)

// seeded returns a fixed-seed random stream.
func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// draw chains p.Next from instant 0 and returns every arrival before horizon.
func draw(t *testing.T, p arrivals.Process, seed uint64, horizon time.Duration) ([]time.Duration, bool) {
	t.Helper()
	r := seeded(seed)
	var at []time.Duration
	prev := time.Duration(0)
	for {
		next, ok := p.Next(prev, r)
		if !ok || next >= horizon {
			return at, !ok
		}
		at = append(at, next)
		prev = next
	}
}

// within reports whether got is within rel of want.
func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// Judge recovers the process that generated about 10,000 arrivals:
// its kind first, then its parameters within the stated tolerance.
func TestJudgeRecoversTheGeneratingProcess(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       arrivals.Process
		horizon time.Duration
		kind    arrivals.Kind
		check   func(f arrivalfit.Fit) bool
	}{
		{"poisson", &arrivals.Poisson{Rate: 50}, 200 * time.Second, arrivals.KindPoisson,
			func(f arrivalfit.Fit) bool { return within(f.Spec.Rate, 50, 0.03) }},
		{"constant", arrivals.Constant{Rate: 20}, 500 * time.Second, arrivals.KindConstant,
			func(f arrivalfit.Fit) bool { return within(f.Spec.Rate, 20, 0.001) }},
		{"onoff", arrivals.OnOff{Rate: 100, On: 5 * time.Second, Off: 10 * time.Second}, 300 * time.Second, arrivals.KindOnOff,
			func(f arrivalfit.Fit) bool {
				return within(f.Spec.Rate, 100, 0.05) && within(f.Spec.On.Seconds(), 5, 0.05) && within(f.Spec.Off.Seconds(), 10, 0.05)
			}},
		{"ramp", arrivals.Ramp{From: 10, To: 90, Over: 200 * time.Second}, 200 * time.Second, arrivals.KindRamp,
			func(f arrivalfit.Fit) bool {
				return within(f.Spec.Rate, 10, 0.3) && within(f.Spec.RateTo, 90, 0.1) && within(f.Spec.Ramp.Seconds(), 200, 0.1)
			}},
		{"ramp then flat", arrivals.Ramp{From: 20, To: 80, Over: 60 * time.Second}, 200 * time.Second, arrivals.KindRamp,
			func(f arrivalfit.Fit) bool {
				return within(f.Spec.Rate, 20, 0.3) && within(f.Spec.RateTo, 80, 0.05) && within(f.Spec.Ramp.Seconds(), 60, 0.15)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, _ := draw(t, tc.p, 11, tc.horizon)
			f, err := arrivalfit.Judge(at)
			if err != nil {
				t.Fatal(err)
			}
			if f.Spec.Kind != tc.kind || !tc.check(f) {
				t.Errorf("%d arrivals: got kind %v rate %.4g rate_to %.4g ramp %v on %v off %v (%s)",
					len(at), f.Spec.Kind, f.Spec.Rate, f.Spec.RateTo, f.Spec.Ramp, f.Spec.On, f.Spec.Off, f.Reason)
			}
		})
	}
}

// Poisson data passes the dispersion test at about the stated level: a
// test that rejected Poisson too often (a wrong degrees of freedom, a
// one-sided p doubled twice) or never would fail here.
func TestJudgePoissonFalseAlarmRate(t *testing.T) {
	rejected := 0
	const runs = 200
	for seed := range uint64(runs) {
		at, _ := draw(t, &arrivals.Poisson{Rate: 5}, seed, 200*time.Second)
		f, err := arrivalfit.Judge(at)
		if err != nil {
			t.Fatal(err)
		}
		if f.Spec.Kind != arrivals.KindPoisson {
			rejected++
		}
		if math.Abs(f.Dispersion-1) > 0.5 {
			t.Errorf("seed %d: dispersion index %v of Poisson counts", seed, f.Dispersion)
		}
	}
	// At the 1% level about 2 of 200 are rejected; 8 or more is p < 0.001.
	if rejected >= 8 {
		t.Errorf("%d of %d Poisson traces judged not Poisson", rejected, runs)
	}
}

// Arrivals that come in batches are overdispersed: no Poisson, on/off or
// ramp fits, so the trace is replayed as recorded; so is a trace whose
// silences are irregular.
func TestJudgeFallsBackToTheTrace(t *testing.T) {
	r := seeded(5)
	var batched []time.Duration
	var now time.Duration
	for len(batched) < 10000 {
		now += time.Duration(r.ExpFloat64() / 10 * 1e9)
		for range 1 + r.IntN(8) {
			batched = append(batched, now+time.Duration(r.IntN(1e6)))
		}
	}
	var irregular []time.Duration
	now = 0
	for len(irregular) < 10000 {
		on := time.Duration((1 + 9*r.Float64()) * 1e9)
		for end := now + on; now < end; now += time.Duration(r.ExpFloat64() / 100 * 1e9) {
			irregular = append(irregular, now)
		}
		now += time.Duration((2 + 30*r.Float64()) * 1e9)
	}
	for name, at := range map[string][]time.Duration{"batched": sortedCopy(batched), "irregular silences": irregular} {
		f, err := arrivalfit.Judge(at)
		if err != nil {
			t.Fatal(err)
		}
		if f.Spec.Kind != arrivals.KindTrace || len(f.Spec.Times) != len(at) || f.Spec.Times[0] != 0 {
			t.Errorf("%s: got %v (%s)", name, f.Spec.Kind, f.Reason)
		}
	}
}

// Too few, unsorted or simultaneous arrivals are refused with a reason.
func TestJudgeRefusesWhatItCannotJudge(t *testing.T) {
	few := make([]time.Duration, arrivalfit.MinArrivals-1)
	for i := range few {
		few[i] = time.Duration(i) * time.Second
	}
	unsorted := append(append([]time.Duration{}, few...), 0)
	same := make([]time.Duration, 100)
	for _, at := range [][]time.Duration{few, unsorted, same} {
		if _, err := arrivalfit.Judge(at); !errors.Is(err, arrivalfit.ErrFit) {
			t.Errorf("%d arrivals: err %v", len(at), err)
		}
	}
}

func sortedCopy(at []time.Duration) []time.Duration {
	out := slices.Clone(at)
	slices.Sort(out)
	return out
}

// MeanRate integrates each process's rate over an interval exactly: a
// bin straddling an on/off edge or a ramp's end gets the weighted mean.
func TestMeanRate(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		spec     arrivals.Spec
		from, to time.Duration
		want     float64
	}{
		{arrivals.Spec{Kind: arrivals.KindPoisson, Rate: 7}, 0, 3 * s, 7},
		{arrivals.Spec{Kind: arrivals.KindOnOff, Rate: 100, On: 5 * s, Off: 10 * s}, 0, 5 * s, 100},
		{arrivals.Spec{Kind: arrivals.KindOnOff, Rate: 100, On: 5 * s, Off: 10 * s}, 5 * s, 15 * s, 0},
		{arrivals.Spec{Kind: arrivals.KindOnOff, Rate: 100, On: 5 * s, Off: 10 * s}, 14 * s, 16 * s, 50},
		{arrivals.Spec{Kind: arrivals.KindOnOff, Rate: 100, On: 5 * s, Off: 10 * s}, 0, 30 * s, 100.0 / 3},
		{arrivals.Spec{Kind: arrivals.KindRamp, Rate: 10, RateTo: 30, Ramp: 10 * s}, 0, 10 * s, 20},
		{arrivals.Spec{Kind: arrivals.KindRamp, Rate: 10, RateTo: 30, Ramp: 10 * s}, 8 * s, 12 * s, (2*28 + 2*30) / 4.0},
		{arrivals.Spec{Kind: arrivals.KindRamp, Rate: 10, RateTo: 30, Ramp: 10 * s}, 20 * s, 21 * s, 30},
		{arrivals.Spec{Kind: arrivals.KindTrace, Times: []time.Duration{0, s, s, 2 * s, 3 * s}}, s, 3 * s, 1.5},
	} {
		if got := arrivalfit.MeanRate(c.spec, c.from, c.to); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%v over [%v, %v): %v, want %v", c.spec.Kind, c.from, c.to, got, c.want)
		}
	}
}

package metrics

import (
	"testing"
	"time"
)

// stormSeries builds a series of 1 s intervals from 1 s to 100 s: rows
// up to 40 s hold the figures before the trigger, rows from 41 s on
// those after it (the trigger runs from 40 s to 50 s), each row its
// arrivals, starts and successes; noisy is a row (its end in seconds)
// given the other window's figures.
func stormSeries(before, after [3]float64, noisy int) *Series {
	columns := []string{"t_s", "arrivals", "starts", "succeeded"}
	var rows [][]float64
	for t := 1; t <= 100; t++ {
		v := before
		if t > 40 {
			v = after
		}
		if t == noisy {
			v = before
			if t <= 40 {
				v = after
			}
		}
		rows = append(rows, []float64{float64(t), v[0], v[1], v[2]})
	}
	return NewSeries(columns, rows...)
}

var stormWindows = StormWindows{Triggers: []Trigger{{Start: 40 * time.Second, End: 50 * time.Second}},
	Warmup: 10 * time.Second, Interval: time.Second, Settle: 6 * time.Second, ArrivalsEnd: 100 * time.Second}

// A storm is told from a recovery, from goodput falling with the demand,
// and from a collapse without retries; one interval of noise changes
// neither verdict.
func TestStormOf(t *testing.T) {
	healthy := [3]float64{50, 50, 50}
	for _, c := range []struct {
		name   string
		after  [3]float64
		noisy  int
		stormy bool
	}{
		{"retry storm", [3]float64{50, 500, 0}, 0, true},
		{"retry storm with one good interval", [3]float64{50, 500, 0}, 80, true},
		{"retry storm with a trickle of successes", [3]float64{50, 500, 20}, 0, true},
		{"recovered", healthy, 0, false},
		{"recovered with one bad interval", healthy, 80, false},
		{"offered load dropped", [3]float64{10, 10, 10}, 0, false},
		{"collapse without retries", [3]float64{50, 50, 0}, 0, false},
		{"half the goodput is not a collapse", [3]float64{50, 500, 25}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := StormOf(stormSeries(healthy, c.after, c.noisy), stormWindows)
			if st == nil || st.Detected != c.stormy {
				t.Fatalf("storm %+v, want detected %v", st, c.stormy)
			}
			// Before: 11 s to 40 s; after: from 50 s + the 6 s settle to 100 s.
			if st.BeforeS != 30 || st.AfterS != 44 || st.SettleS != 6 || st.TriggerEndS != 50 {
				t.Fatalf("windows %+v: want 30 s before, 44 s after, 6 s settle", st)
			}
		})
	}
}

// A recovery late in the after window is not a storm: goodput must stay
// collapsed to the end, not only on average.
func TestStormOfLateRecovery(t *testing.T) {
	rows := [][]float64{}
	for t := 1; t <= 100; t++ {
		v := []float64{float64(t), 50, 50, 50}
		if t > 40 && t <= 85 {
			v = []float64{float64(t), 50, 500, 0}
		}
		rows = append(rows, v)
	}
	st := StormOf(NewSeries([]string{"t_s", "arrivals", "starts", "succeeded"}, rows...), stormWindows)
	if st.GoodputAfter >= StormGoodputFraction*st.GoodputBefore || st.Detected {
		t.Fatalf("storm %+v: the after window's mean is collapsed, but goodput recovered in its second half", st)
	}
}

// Without a trigger, or with one that never ends, there is nothing to
// judge: no reading at all; a window too short to judge is not a storm.
func TestStormOfWithoutTrigger(t *testing.T) {
	s := stormSeries([3]float64{50, 50, 50}, [3]float64{50, 500, 0}, 0)
	w := stormWindows
	w.Triggers = nil
	if st := StormOf(s, w); st != nil {
		t.Fatalf("no trigger: %+v", st)
	}
	w.Triggers = []Trigger{{Start: 40 * time.Second}}
	if st := StormOf(s, w); st != nil {
		t.Fatalf("a trigger that never ends: %+v", st)
	}
	w.Triggers = []Trigger{{Start: 40 * time.Second, End: 95 * time.Second}}
	if st := StormOf(s, w); st == nil || st.Detected || st.AfterS != 0 {
		t.Fatalf("no whole interval after the settling time: %+v", st)
	}
}

// storm_share reads the replications' share, else the run's own storm,
// and names why a run without a trigger has none.
func TestStormShareOf(t *testing.T) {
	share := 0.3
	for _, c := range []struct {
		r    *Results
		want float64
	}{
		{&Results{Storm: &Storm{Detected: true}}, 1},
		{&Results{Storm: &Storm{}}, 0},
		{&Results{Storm: &Storm{}, Replications: &Replicas{StormShare: &share}}, 0.3},
	} {
		if got, err := Lookup(c.r, "storm_share"); err != nil || got != c.want {
			t.Errorf("storm_share of %+v = %v, %v; want %v", c.r, got, err, c.want)
		}
	}
	if _, err := Lookup(&Results{}, "storm_share"); err == nil {
		t.Error("storm_share of a run without a trigger: no error")
	}
	if err := CheckPath("storm_share"); err != nil {
		t.Error(err)
	}
}

// Summarize counts the replications in a storm.
func TestSummarizeStormShare(t *testing.T) {
	reps := []*Results{{Storm: &Storm{Detected: true}}, {Storm: &Storm{}}, {Storm: &Storm{Detected: true}}, {Storm: &Storm{}}}
	if s := Summarize(reps).StormShare; s == nil || *s != 0.5 {
		t.Fatalf("storm share %v, want 0.5", s)
	}
	if s := Summarize([]*Results{{}, {}}).StormShare; s != nil {
		t.Fatalf("storm share %v without a trigger, want none", *s)
	}
}

package fidelity

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// measured is one real run of the crawler (seed_crawler.py's output).
type measured struct {
	Scenario   string  `json:"scenario"`
	ElapsedS   float64 `json:"elapsed_s"`
	Succeeded  float64 `json:"succeeded"`
	R429       float64 `json:"responses_429"`
	TimedOut   float64 `json:"timed_out"`
	WaitMeanS  float64 `json:"wait_mean_s"`
	WaitP50S   float64 `json:"wait_p50_s"`
	WaitP90S   float64 `json:"wait_p90_s"`
	WaitP99S   float64 `json:"wait_p99_s"`
	InFlight   float64 `json:"in_flight_mean"`
	GoodputRPS float64 `json:"goodput_rps"`
}

// figure is one compared quantity: how to read it from a real run and from
// a simulated one, and how far the simulation's mean over seeds may fall
// outside the range of the real runs: rel of the real mean, or abs,
// whichever is larger.
type figure struct {
	name     string
	real     func(m measured) float64
	sim      func(o *client.Outcome) float64
	rel, abs float64
}

func bucketWait(o *client.Outcome) (mean, p50, p90, p99 float64) {
	for _, l := range o.Results.Limiters {
		if l.Name == "bucket" {
			return l.WaitS.Mean, l.WaitS.P50, l.WaitS.P90, l.WaitS.P99
		}
	}
	return math.NaN(), math.NaN(), math.NaN(), math.NaN()
}

var figures = []figure{
	{"elapsed (s)", func(m measured) float64 { return m.ElapsedS },
		func(o *client.Outcome) float64 { return o.Results.ElapsedS }, 0.10, 0},
	{"succeeded", func(m measured) float64 { return m.Succeeded },
		func(o *client.Outcome) float64 { return float64(o.Results.Requests.Succeeded) }, 0.02, 3},
	{"429s", func(m measured) float64 { return m.R429 },
		func(o *client.Outcome) float64 { return float64(o.Results.Requests.Responses429) }, 0.25, 4},
	{"mean in flight", func(m measured) float64 { return m.InFlight },
		func(o *client.Outcome) float64 { return o.Results.InFlight.Mean }, 0.10, 0},
	{"bucket wait mean (s)", func(m measured) float64 { return m.WaitMeanS },
		func(o *client.Outcome) float64 { v, _, _, _ := bucketWait(o); return v }, 0.25, 0.003},
	{"bucket wait p50 (s)", func(m measured) float64 { return m.WaitP50S },
		func(o *client.Outcome) float64 { _, v, _, _ := bucketWait(o); return v }, 0.25, 0.010},
	{"bucket wait p90 (s)", func(m measured) float64 { return m.WaitP90S },
		func(o *client.Outcome) float64 { _, _, v, _ := bucketWait(o); return v }, 0.20, 0.010},
	{"bucket wait p99 (s)", func(m measured) float64 { return m.WaitP99S },
		func(o *client.Outcome) float64 { _, _, _, v := bucketWait(o); return v }, 0.20, 0.020},
}

const seeds = 8

func loadReference(t *testing.T) map[string][]measured {
	t.Helper()
	data, err := os.ReadFile("reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Runs []measured `json:"runs"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("reference.json: %v", err)
	}
	out := map[string][]measured{}
	for _, m := range ref.Runs {
		out[m.Scenario] = append(out[m.Scenario], m)
	}
	return out
}

// simulate runs a fidelity scenario with seeds 1…seeds and returns the
// outcomes; sets are --set overrides.
func simulate(t *testing.T, name string, sets ...scenarios.Override) []*client.Outcome {
	t.Helper()
	var outs []*client.Outcome
	for seed := range seeds {
		all := append([]scenarios.Override{{Key: "run.seed", Value: int64(seed + 1)}}, sets...)
		sc, err := scenarios.LoadWith(filepath.Join("scenarios", name+".toml"), all)
		if err != nil {
			t.Fatal(err)
		}
		out, err := sc.Simulate(client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	return outs
}

// check returns a description of how the simulation's mean of f falls
// outside the real runs' range widened by f's tolerance, or "".
func check(f figure, real []measured, sims []*client.Outcome) string {
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, m := range real {
		v := f.real(m)
		lo, hi, sum = math.Min(lo, v), math.Max(hi, v), sum+v
	}
	slack := math.Max(f.rel*sum/float64(len(real)), f.abs)
	var got float64
	for _, o := range sims {
		got += f.sim(o)
	}
	got /= float64(len(sims))
	if got < lo-slack || got > hi+slack {
		return fmt.Sprintf("%s: simulated %.4g (mean of %d seeds), real runs %.4g…%.4g (allowed %.4g…%.4g)", f.name, got, len(sims), lo, hi, lo-slack, hi+slack)
	}
	return ""
}

// summary is one line of the comparison: real runs' range, simulated mean.
func summary(f figure, real []measured, sims []*client.Outcome) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range real {
		lo, hi = math.Min(lo, f.real(m)), math.Max(hi, f.real(m))
	}
	var got float64
	for _, o := range sims {
		got += f.sim(o)
	}
	return fmt.Sprintf("%-22s real %.4g…%.4g  simulated %.4g", f.name, lo, hi, got/float64(len(sims)))
}

// Every fidelity scenario, simulated with the scenario's defaults (the
// polling bucket with nothing but rate and burst), agrees with the real
// asyncio runs: duration, successes, 429s, in-flight and the bucket's wait
// distribution (mean, p50, p90, p99), each within the range of three real
// runs widened by its stated tolerance.
func TestSimulationMatchesTheRealCrawler(t *testing.T) {
	ref := loadReference(t)
	names := []string{"seed", "bucket-binds", "quota-binds-retry-after", "quota-binds-no-retry-after", "hosts"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			real := ref[name]
			if len(real) < 3 {
				t.Fatalf("reference.json holds %d runs of %s, want 3 (fidelity/measure.sh)", len(real), name)
			}
			sims := simulate(t, name)
			for _, f := range figures {
				if msg := check(f, real, sims); msg != "" {
					t.Error(msg)
				}
				t.Log(summary(f, real, sims))
			}
		})
	}
}

// The comparison can tell models apart: the same bucket made FIFO (lag 0,
// every sleeper woken in order) keeps the mean wait but loses the real
// crawler's long tail, and the test's p99 band rejects it; so does a host
// pause that keeps the longest end instead of the article's last one.
func TestComparisonRejectsTheWrongModel(t *testing.T) {
	ref := loadReference(t)
	p99 := figures[len(figures)-1]
	fifo := simulate(t, "bucket-binds", scenarios.Override{Key: "client.limiter.bucket.lag", Value: "0s"})
	if msg := check(p99, ref["bucket-binds"], fifo); msg == "" {
		t.Error("a FIFO bucket's wait p99 passes as the real crawler's")
	}
	elapsed := figures[0]
	longest := simulate(t, "quota-binds-no-retry-after", scenarios.Override{Key: "client.on_429.pause_end", Value: "longest"})
	if msg := check(elapsed, ref["quota-binds-no-retry-after"], longest); msg == "" {
		t.Error("pauses that keep the longest end pass as the article's paused_until[host] = now + delay")
	}
}

package upstream

import (
	"testing"
	"time"
)

var _ = example(Empirical{Quantiles: []Quantile{{0, 10 * ms}, {0.5, 80 * ms}, {1, 2 * time.Second}}},
	Empirical{SamplesFile: "lat.csv", Samples: []time.Duration{30 * ms, 10 * ms}})

// An empirical distribution reads its samples file through LoadFiles,
// as a mixture's component too.
func TestEmpiricalLoadsItsFile(t *testing.T) {
	var keys []string
	load := func(key, file string) ([]time.Duration, bool) {
		keys = append(keys, key+" "+file)
		return []time.Duration{ms}, true
	}
	d := LoadFiles(Mixture{Components: []Component{{Weight: 1, Dist: Constant{}}, {Weight: 1, Dist: Empirical{SamplesFile: "a.csv"}}}}, "lat", load)
	if len(keys) != 1 || keys[0] != "lat.components[1].dist.samples a.csv" {
		t.Fatalf("loaded %v", keys)
	}
	if e := d.(Mixture).Components[1].Dist.(Empirical); len(e.Samples) != 1 {
		t.Fatalf("samples not kept: %+v", e)
	}
}

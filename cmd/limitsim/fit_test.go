package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fit latency ranks the generating family first on its samples, prints
// the line to paste (which loads in a scenario), and names the file and
// line of bad input.
func TestFitLatency(t *testing.T) {
	dir := t.TempDir()
	src := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("latency_s\n")
	for range 5000 {
		fmt.Fprintf(&b, "%.6f\n", 0.2*math.Exp(0.5*src.NormFloat64()))
	}
	samples := filepath.Join(dir, "lat.csv")
	if err := os.WriteFile(samples, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli("fit", "latency", samples, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Samples int `json:"samples"`
		Fits    []struct {
			Dist      string             `json:"dist"`
			Latency   string             `json:"latency"`
			Quantiles map[string]float64 `json:"quantiles_s"`
		} `json:"fits"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Samples != 5000 || res.Fits[0].Dist != "lognormal" || res.Fits[len(res.Fits)-1].Dist != "empirical" {
		t.Fatalf("samples %d, fits %+v", res.Samples, res.Fits)
	}
	if p50 := res.Fits[0].Quantiles["p50"]; math.Abs(p50-0.2) > 0.01 {
		t.Errorf("fitted p50 %v, want about 0.2 s", p50)
	}
	// The pasted line loads.
	sc := filepath.Join(dir, "s.toml")
	scenario := "name = \"fitted\"\n[run]\nrequests = 100\n[workload]\nrate = 10.0\n[[upstream]]\nhost = \"*\"\n" + res.Fits[0].Latency + "\n"
	if err := os.WriteFile(sc, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("validate", sc); code != exitOK {
		t.Fatalf("the fitted line does not load: %s", errOut)
	}
	for content, want := range map[string]string{
		"0.1\n0.2\nfast\n": "bad.csv:3: \"fast\" is not a latency",
		"0.1\n-0.2\n":      "bad.csv:2: latency",
		"# nothing\n":      "0 samples",
	} {
		bad := filepath.Join(dir, "bad.csv")
		if err := os.WriteFile(bad, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := cli("fit", "latency", bad); code != exitInvalid || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d: %s", content, code, errOut)
		}
	}
}

package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// The fit chart draws samples or percentiles against curves on a nines
// axis labelled up to the data's depth, and refuses data a log axis cannot
// show.
func TestFitCDFChart(t *testing.T) {
	exp := Curve{Name: "exponential", CDF: func(x float64) float64 { return 1 - math.Exp(-x/0.1) }}
	samples := make([]float64, 2000)
	for i := range samples {
		samples[i] = -0.1 * math.Log(1-(float64(i)+0.5)/2000)
	}
	c, err := FitCDFChart("lat.csv", samples, nil, []Curve{exp})
	if err != nil {
		t.Fatal(err)
	}
	svg := string(c.SVG)
	if !bytes.HasPrefix(c.PNG, []byte("\x89PNG")) || !strings.Contains(svg, "measured (2000 samples)") {
		t.Fatal("the chart lacks its PNG or its legend")
	}
	// 2,000 samples reach p99.9: the axis is labelled to p99.99, no further.
	for _, label := range []string{"p50", "p90", "p99", "p99.9", "p99.99"} {
		if !strings.Contains(svg, ">"+label+"<") {
			t.Errorf("no %s tick", label)
		}
	}
	if strings.Contains(svg, ">p99.999<") {
		t.Error("the axis runs past the data's depth")
	}
	c, err = FitCDFChart("p.txt", []float64{0.1, 0.25, 0.5}, []float64{0.5, 0.9, 0.99}, []Curve{exp})
	if err != nil || !strings.Contains(string(c.SVG), "measured percentiles") || !strings.Contains(string(c.SVG), ">p99.9<") {
		t.Fatalf("percentile chart: %v", err)
	}
	for _, bad := range []struct{ xs, ps []float64 }{{nil, nil}, {[]float64{0, 1}, nil}, {[]float64{0.1, 0.2}, []float64{0.5}}} {
		if _, err := FitCDFChart("bad", bad.xs, bad.ps, []Curve{exp}); err == nil {
			t.Errorf("%v %v charted", bad.xs, bad.ps)
		}
	}
}

// The rate chart names its bin and the fitted process, leaves the
// process out for a replayed trace, and refuses empty or mismatched data.
func TestRateChart(t *testing.T) {
	rates := []float64{10, 12, 9, 11}
	c, err := RateChart("a.csv", 0.5, rates, []float64{10.5, 10.5, 10.5, 10.5}, "fitted: poisson")
	if err != nil {
		t.Fatal(err)
	}
	if svg := string(c.SVG); !strings.Contains(svg, "recorded (per 0.5 s)") || !strings.Contains(svg, "fitted: poisson") {
		t.Error("the legend lacks the bin or the fitted process")
	}
	if c, err = RateChart("a.csv", 0.5, rates, nil, "fitted: trace"); err != nil || strings.Contains(string(c.SVG), "fitted: trace") {
		t.Errorf("a trace chart: %v", err)
	}
	for _, bad := range []struct {
		bin           float64
		rates, fitted []float64
	}{{1, nil, nil}, {0, rates, nil}, {1, rates, []float64{1}}} {
		if _, err := RateChart("bad", bad.bin, bad.rates, bad.fitted, "x"); err == nil {
			t.Errorf("%+v charted", bad)
		}
	}
}

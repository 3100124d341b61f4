package main

import (
	"testing"
)

// BenchmarkRunReferenceModel times `limitsim run` on the bundled
// reference-model scenario — load, build, simulate, analyse and the text
// summary — with b.N requests, and reports simulated requests per wall
// second and events per request.
func BenchmarkRunReferenceModel(b *testing.B) {
	benchmarkRun(b, "reference-model", false)
}

// BenchmarkRunReferenceModelReports is BenchmarkRunReferenceModel with every
// output of -o written (charts, reports, CSV).
func BenchmarkRunReferenceModelReports(b *testing.B) {
	benchmarkRun(b, "reference-model", true)
}

func benchmarkRun(b *testing.B, scenario string, reports bool) {
	n := max(b.N, 1000)
	sets := overrides{{Key: "run.requests", Value: int64(n)}, {Key: "run.seed", Value: int64(1)}, {Key: "run.duration"}}
	b.ReportAllocs()
	b.ResetTimer()
	_, rate, err := benchProduct(scenario, sets, reports)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rate, "req/s")
}

package report

import (
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// quotaRPS holds the hosts a shared quota counts to the least of its
// rate and the sum of theirs: two hosts of 10/s each under a shared 5/s
// admit 5/s, not 20 (a fix sized from 20 would keep the 429s); a shared
// quota over one of them leaves the other's 10; a host without a quota
// of its own leaves the shared one's rate.
func TestQuotaRPSCapsBySharedQuota(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	hosts := []metrics.UpstreamStats{{Host: "a", QuotaRPS: f(10)}, {Host: "b", QuotaRPS: f(10)}}
	for _, c := range []struct {
		name   string
		hosts  []metrics.UpstreamStats
		shared []metrics.SharedQuotaStats
		want   float64
	}{
		{"none", hosts, nil, 20},
		{"over both", hosts, []metrics.SharedQuotaStats{{Name: "h", Upstreams: []string{"a", "b"}, QuotaRPS: f(5)}}, 5},
		{"over one", hosts, []metrics.SharedQuotaStats{{Name: "h", Upstreams: []string{"a"}, QuotaRPS: f(5)}}, 15},
		{"looser than the hosts", hosts, []metrics.SharedQuotaStats{{Name: "h", Upstreams: []string{"a", "b"}, QuotaRPS: f(50)}}, 20},
		{"a host without its own", []metrics.UpstreamStats{{Host: "a"}, {Host: "b", QuotaRPS: f(10)}},
			[]metrics.SharedQuotaStats{{Name: "h", Upstreams: []string{"a", "b"}, QuotaRPS: f(50)}}, 50},
		{"concurrency (no rate)", hosts, []metrics.SharedQuotaStats{{Name: "h", Upstreams: []string{"a", "b"}}}, 20},
	} {
		got, known := quotaRPS(&metrics.Results{Upstreams: c.hosts, Quotas: c.shared})
		if got != c.want || !known {
			t.Errorf("%s: quotaRPS = %v (known %v), want %v", c.name, got, known, c.want)
		}
	}
}

// The bundled github-style-points offers 2.5/s to two endpoints, each
// under its own quotas, against one hourly quota of 5,000 they share:
// the shared quota runs out and both hosts wait for its reset, which is
// diagnosed as the shared quota exhausted, with the fix holding the
// client's pace to 5,000/h × 0.9 = 1.25/s. With room in the shared quota
// (20,000 an hour) the diagnosis is gone: it reads the shared quota, not
// the hosts' own.
func TestSharedQuotaExhaustedDiagnosed(t *testing.T) {
	r, _ := simulateExample(t, "github-style-points")
	var d *metrics.Diagnosis
	for i := range r.Diagnoses {
		if r.Diagnoses[i].Code == "quota_exhausted" {
			d = &r.Diagnoses[i]
		}
	}
	if d == nil || !strings.Contains(d.Evidence, "quota hourly, shared by repos, issues") {
		t.Fatalf("no quota_exhausted naming the shared quota: %+v", r.Diagnoses)
	}
	if got := d.Fix.Set["client.limiter.pace.rate"]; got != 1.25 {
		t.Fatalf("fix sets pace to %v, want 1.25 (%+v)", got, d.Fix)
	}
	if notes := strings.Join(quotaNotes(r), "\n"); !strings.Contains(notes, "quota hourly, shared by repos, issues: admitted ") {
		t.Fatalf("the notes under the upstream table do not count the shared quota:\n%s", notes)
	}
	sc, err := scenarios.LoadWith("../scenarios/examples/github-style-points.toml", []scenarios.Override{{Key: "quota.hourly.limit", Value: int64(20000)}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := sc.Simulate(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Series.Close() })
	Analyze(out.Results, out.Series)
	for _, d := range out.Results.Diagnoses {
		if d.Code == "quota_exhausted" {
			t.Fatalf("quota_exhausted with room in the shared quota: %s", d.Evidence)
		}
	}
}

package planning

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/scenarios"
)

// Records whose tenant field logs no value ("-", CLF's anonymous
// $remote_user) belong to no tenant: the scenario names no tenant "-",
// and, as a tenant's own process would leave them out of the workload,
// the tenants take weights of one process at the log's whole rate
// rather than bring their own (here a bursty tenant's on-off).
func TestCalibrateRecordsWithoutTenant(t *testing.T) {
	path := writeGeneratedLog(t, 47, start, 600,
		genHost{name: "api", rate: 20, median: 0.1, sigma: 0.4, tenant: func(*rand.Rand) string { return "-" }},
		genHost{name: "api", rate: 40, median: 0.1, sigma: 0.4, tenant: func(*rand.Rand) string { return "batch" }, on: 20, off: 40})
	c, text := calibrateMapped(t, path, logs.Mapping{Host: "host", Tenant: "tenant"})
	if len(c.Tenants) != 1 || c.Tenants[0].Tenant != "batch" || c.Tenants[0].Share != 1 {
		t.Fatalf("tenants %+v, want batch alone", c.Tenants)
	}
	if strings.Contains(text, `name = "-"`) || strings.Contains(text, `name = ""`) {
		t.Errorf("the scenario names a tenant without a name:\n%s", text)
	}
	sc, err := scenarios.Parse("calibrated.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Workload.Tenants) != 1 || sc.Workload.Tenants[0].Arrival != "" {
		t.Errorf("the scenario's tenants are %+v: want batch, by weight\n%s", sc.Workload.Tenants, text)
	}
	within(t, "the workload's rate", sc.Workload.Rate, float64(c.Records)/c.SpanS, 0.05)
}

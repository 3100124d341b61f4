package report

import (
	"bytes"
	"encoding/json"
	"html/template"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// Every format shows the JSON's numbers: each limiter's p_wait, waits,
// utilisation and saturation, each host's 429 rate and quota use, are the
// JSON values formatted the one way, in the text summary, report.md and
// report.html alike. A number computed twice, or a format that shows a
// different field under the same name, fails here.
func TestEveryFormatShowsTheJSONNumbers(t *testing.T) {
	for _, name := range []string{"fail-thundering-herd", "composed-limits", "seed-crawler", "fail-tenant-starvation"} {
		sc, err := scenarios.Load("../scenarios/examples/" + name + ".toml")
		if err != nil {
			t.Fatal(err)
		}
		out, err := sc.Simulate(client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		Analyze(out.Results, out.Series)
		// Read back from JSON, as `limitsim report` does.
		var js bytes.Buffer
		if err := metrics.WriteJSON(&js, out.Results); err != nil {
			t.Fatal(err)
		}
		r := readJSON(t, js.Bytes())
		doc := &Document{Results: r, Series: out.Series}
		var txt, md, html bytes.Buffer
		if err := WriteText(&txt, r); err != nil {
			t.Fatal(err)
		}
		if err := doc.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if err := doc.WriteHTML(&html); err != nil {
			t.Fatal(err)
		}
		formats := map[string]string{"text": txt.String(), "report.md": md.String(), "report.html": html.String()}
		for _, l := range r.Limiters {
			for _, want := range []string{pct(l.PWait), secs(l.WaitS.P50), secs(l.WaitS.P99), utilText(l), pct(l.Saturation)} {
				for f, body := range formats {
					if f == "report.html" {
						want = template.HTMLEscapeString(want)
					}
					if !strings.Contains(body, want) {
						t.Errorf("%s: %s lacks limiter %s's %q", name, f, l.Name, want)
					}
				}
			}
		}
		for _, tn := range r.Tenants {
			for _, want := range []string{share(tn.ArrivalShare), share(tn.Share), pct(tn.SuccessRate)} {
				for f, body := range formats {
					if !strings.Contains(body, want) {
						t.Errorf("%s: %s lacks tenant %s's %q", name, f, tn.Name, want)
					}
				}
			}
		}
		for _, u := range r.Upstreams {
			for _, want := range []string{pct(u.Rate429), quotaText(u)} {
				for f, body := range formats {
					if !strings.Contains(body, want) {
						t.Errorf("%s: %s lacks host %s's %q", name, f, u.Host, want)
					}
				}
			}
		}
	}
}

func readJSON(t *testing.T, b []byte) *metrics.Results {
	t.Helper()
	var r metrics.Results
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

package report_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
	"github.com/limitsim/limitsim/sim/client"
)

// summaryText is the text summary of a bundled scenario's run.
func summaryText(t *testing.T, doc *report.Document) string {
	t.Helper()
	var b strings.Builder
	if err := report.WriteText(&b, doc.Results); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A deadlocked run stops with most of its requests inside: they have not
// succeeded, so the success ratio cannot read 100%, and the summary says
// how many never ended.
func TestDeadlockSuccessRatioCountsStuckRequests(t *testing.T) {
	doc := run(t, "fail-deadlock")
	r := doc.Results
	q := r.Requests
	if q.InProgress == 0 {
		t.Fatal("fail-deadlock stopped with no request in progress: the scenario no longer shows the case")
	}
	want := float64(q.Succeeded) / float64(q.Arrived)
	if r.SuccessRatio != want {
		t.Errorf("success_ratio = %v, want succeeded ÷ arrived = %v (%d in progress count as not succeeded)", r.SuccessRatio, want, q.InProgress)
	}
	text := summaryText(t, doc)
	if strings.Contains(text, "success ratio 100.0%") {
		t.Errorf("a deadlocked run claims 100%% success:\n%s", text)
	}
	if !strings.Contains(text, report.Grouped(q.InProgress)+" never ended") {
		t.Errorf("the summary does not say how many requests never ended:\n%s", text)
	}
}

// The deadlocked run's wait histogram counts every wait in db, the 609
// still parked at the stop with the 40 granted, while the limiter table
// says acquired 40: the title splits its count so the two agree.
func TestDeadlockWaitHistogramTitleSplitsGrantsFromWaits(t *testing.T) {
	doc := run(t, "fail-deadlock")
	var db metrics.LimiterStats
	for _, l := range doc.Results.Limiters {
		if l.Name == "db" {
			db = l
		}
	}
	var svg string
	for _, c := range doc.Charts {
		if c.Name == "wait-db-hist" {
			svg = string(c.SVG)
		}
	}
	if svg == "" {
		t.Fatal("no wait histogram for db")
	}
	if db.WaitS.Count == db.Acquired {
		t.Fatal("fail-deadlock no longer parks requests on db")
	}
	want := fmt.Sprintf("%s granted, %s still waiting when the run stopped", report.Grouped(db.WaitGrantedS.Count), report.Grouped(db.WaitS.Count-db.WaitGrantedS.Count))
	if !strings.Contains(svg, want) {
		t.Errorf("the histogram's title does not split its %d waits into grants and waits cut off: want %q", db.WaitS.Count, want)
	}
	if db.WaitGrantedS.Count != db.Acquired {
		t.Errorf("granted in the steady state %d, acquired %d: with no warm-up they are the same grants", db.WaitGrantedS.Count, db.Acquired)
	}
}

// In the thundering herd the verdicts call conns binding (waited on at
// times, 6% used): the headline must not say no limiter binds.
func TestThunderingHerdHeadlineReadsTheVerdicts(t *testing.T) {
	doc := run(t, "fail-thundering-herd")
	r := doc.Results
	h := report.Headline(r)[1]
	for _, v := range r.Verdicts {
		if v.Verdict == "binding" && !strings.Contains(h, v.Limiter) {
			t.Errorf("verdict %s: %s, but the headline does not name it: %q", v.Limiter, v.Verdict, h)
		}
	}
	if strings.Contains(h, "no limiter binds") {
		t.Errorf("the headline says no limiter binds beside a binding verdict: %q", h)
	}
}

// The herd's evidence counts 25 spikes where the upstream table counts 2
// pauses: both must say what they count, so the two do not seem to
// disagree.
func TestThunderingHerdPauseEpisodesBesideSpikes(t *testing.T) {
	doc := run(t, "fail-thundering-herd")
	r := doc.Results
	var herd *metrics.Diagnosis
	for i := range r.Diagnoses {
		if r.Diagnoses[i].Code == "thundering_herd" {
			herd = &r.Diagnoses[i]
		}
	}
	if herd == nil || len(r.Upstreams) != 1 {
		t.Fatal("fail-thundering-herd no longer shows one host's herd")
	}
	u := r.Upstreams[0]
	episodes := report.Grouped(u.Pauses) + " pause episode"
	if !strings.Contains(herd.Evidence, episodes) || !strings.Contains(herd.Evidence, "extends it") {
		t.Errorf("the evidence does not relate its spikes to the %d pause episodes: %q", u.Pauses, herd.Evidence)
	}
	text := summaryText(t, doc)
	want := fmt.Sprintf("%s 429s made %s pauses", report.Grouped(u.Throttled), report.Grouped(u.Pauses))
	if !strings.Contains(text, want) {
		t.Errorf("the summary does not say what its pauses count (want %q):\n%s", want, text)
	}
}

// api-hourly-quota pauses on its rate-limit headers before the quota
// answers any 429: a pause count beside 0 429s must say what paused.
func TestPausesWithoutA429SayWhatPaused(t *testing.T) {
	doc := run(t, "api-hourly-quota")
	u := doc.Results.Upstreams[0]
	if u.Pauses == 0 || u.Throttled != 0 {
		t.Fatalf("api-hourly-quota: %d pauses, %d 429s: the scenario no longer shows pauses without a 429", u.Pauses, u.Throttled)
	}
	want := fmt.Sprintf("%s: %s pauses with no 429: the client paused on the rate-limit headers at zero remaining", u.Host, report.Grouped(u.Pauses))
	text := summaryText(t, doc)
	if !strings.Contains(text, want) {
		t.Errorf("the summary does not say what paused (want %q):\n%s", want, text)
	}
	var md strings.Builder
	if err := doc.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), want) {
		t.Errorf("report.md does not say what paused (want %q)", want)
	}
}

// A cluster limiter keeps one object in the shared store, not one per
// instance: its scope's utilisation (scopes.csv) read a quarter of the
// limiter's with four instances (0.2496 beside 99.8%).
func TestClusterScopeUtilisationMatchesLimiter(t *testing.T) {
	doc := run(t, "cluster-shared-limit")
	for _, l := range doc.Results.Limiters {
		if l.Scope != "cluster" {
			continue
		}
		if len(l.Scopes) != 1 {
			t.Fatalf("limiter %s: %d scopes, want the cluster's one", l.Name, len(l.Scopes))
		}
		if got := l.Scopes[0].Utilisation; math.Abs(got-l.Utilisation) > 1e-9 {
			t.Errorf("limiter %s: its only scope's utilisation %.4f, the limiter's %.4f", l.Name, got, l.Utilisation)
		}
		return
	}
	t.Fatal("cluster-shared-limit has no cluster limiter")
}

// A utilisation over 100% (fail-burst-at-start's bucket at 100.5%,
// api-llm-tokens' quota at 102.5%) must say why wherever it is printed.
func TestUtilisationOverHundredPercentIsExplained(t *testing.T) {
	doc := run(t, "fail-burst-at-start")
	h := report.Headline(doc.Results)[1]
	if strings.Contains(h, "100.5%") && !strings.Contains(h, "over 100% because") {
		t.Errorf("the headline prints a utilisation over 100%% without a word on it: %q", h)
	}
	if !strings.Contains(summaryText(t, doc), "bucket: utilisation 100.5%: over 100% because") {
		t.Errorf("the summary does not explain the bucket's utilisation over 100%%:\n%s", summaryText(t, doc))
	}
	doc = run(t, "api-llm-tokens")
	u := doc.Results.Upstreams[0]
	if u.QuotaUtilisation == nil || *u.QuotaUtilisation <= 1 {
		t.Fatal("api-llm-tokens no longer uses over 100% of its quota")
	}
	want := fmt.Sprintf("%s: quota used %.1f%%: over 100%% because", u.Host, 100**u.QuotaUtilisation)
	if !strings.Contains(summaryText(t, doc), want) {
		t.Errorf("the summary does not explain the quota used over 100%% (want %q)", want)
	}
}

// With client.max_waiting = 5000 the line is bounded: memory growth must
// not blame an unbounded one, but name the bound that refused requests
// and is too large for the service rate.
func TestMemoryGrowthNamesTheBoundItHas(t *testing.T) {
	src, err := os.ReadFile("../scenarios/examples/fail-unbounded-waiting.toml")
	if err != nil {
		t.Fatal(err)
	}
	bounded := strings.Replace(string(src), "[client]\n", "[client]\nmax_waiting = 5000\n", 1)
	path := filepath.Join(t.TempDir(), "bounded.toml")
	if err := os.WriteFile(path, []byte(bounded), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sc.Simulate(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	report.Analyze(out.Results, out.Series)
	if out.Results.Requests.Rejected == 0 {
		t.Fatal("the bound of 5000 refused nothing: the scenario no longer shows a bounded line")
	}
	for _, d := range out.Results.Diagnoses {
		if d.Code != "memory_growth" {
			continue
		}
		if strings.Contains(d.Cause, "unbounded") || !strings.Contains(d.Cause, "bounded but long") {
			t.Errorf("memory growth with max_waiting = 5000 gives the cause %q", d.Cause)
		}
		return
	}
	t.Fatalf("no memory_growth diagnosis: %+v", out.Results.Diagnoses)
}

// Every run report opens with the timeline: offered against goodput, the
// binding limiter's p99 wait and the 429s on one time axis, each in a
// panel of its own unit, with the findings marked where they set in; a
// run with no 429 has no flat 429 panel.
func TestTimelineOpensEveryRunReport(t *testing.T) {
	for _, c := range []struct {
		scenario string
		want     []string // in the SVG
		absent   []string
	}{
		{"fail-sustained-429", []string{"requests per second", "wait p99 (s)", "429s per second", "sustained 429 (critical)", "bucket wait p99"}, nil},
		{"fail-deadlock", []string{"deadlock (critical)"}, []string{"429s per second"}},
		{"seed-crawler", []string{"requests per second", "goodput", "offered"}, []string{"(critical)", "429s per second"}},
	} {
		doc := run(t, c.scenario)
		if len(doc.Charts) == 0 || doc.Charts[0].Name != "timeline" {
			t.Fatalf("%s: the first chart is not the timeline", c.scenario)
		}
		svg := string(doc.Charts[0].SVG)
		for _, w := range c.want {
			if !strings.Contains(svg, w) {
				t.Errorf("%s: the timeline lacks %q", c.scenario, w)
			}
		}
		for _, a := range c.absent {
			if strings.Contains(svg, a) {
				t.Errorf("%s: the timeline has %q", c.scenario, a)
			}
		}
	}
}

// report.html carries every section report.md does: the same headings in
// the same order and the same table rows, on a healthy run and on runs
// with findings, a verified fix, tenants and several hosts.
func TestReportHTMLHasEverySectionOfTheMarkdown(t *testing.T) {
	for _, name := range []string{"seed-crawler", "fail-sustained-429", "fail-deadlock", "fail-tenant-starvation", "handling-429"} {
		if _, err := os.Stat("../scenarios/examples/" + name + ".toml"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		doc := run(t, name)
		var md, page strings.Builder
		if err := doc.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if err := doc.WriteHTML(&page); err != nil {
			t.Fatal(err)
		}
		mh, mr := report.MarkdownSections(md.String())
		hh, hr := report.HTMLSections(page.String())
		if !slices.Equal(mh, hh) {
			t.Errorf("%s: headings differ:\nreport.md   %q\nreport.html %q", name, mh, hh)
		}
		if !slices.EqualFunc(mr, hr, slices.Equal) {
			for i := range max(len(mr), len(hr)) {
				var a, b []string
				if i < len(mr) {
					a = mr[i]
				}
				if i < len(hr) {
					b = hr[i]
				}
				if !slices.Equal(a, b) {
					t.Errorf("%s: table row %d differs:\nreport.md   %q\nreport.html %q", name, i, a, b)
					break
				}
			}
		}
	}
}

// chartSVG is the SVG of the run's chart called name ("" when not drawn).
func chartSVG(doc *report.Document, name string) string {
	for _, c := range doc.Charts {
		if c.Name == name {
			return string(c.SVG)
		}
	}
	return ""
}

// A concurrency limit is a count in flight, not a rate: gradient2's and
// Vegas's limits are drawn against the requests in flight on an axis of
// their own, with no flat panel of 429s the scenario does not have; an
// AIMD rate limit is drawn as every instance's together, the figure
// limit_mean gives, against the attempts started per second.
func TestAdaptiveLimitsInTheirOwnUnits(t *testing.T) {
	for _, name := range []string{"adaptive-degraded", "adaptive-vegas"} {
		svg := chartSVG(run(t, name), "adaptive-limit")
		if !strings.Contains(svg, "requests in flight") || strings.Contains(svg, "requests per second") {
			t.Errorf("%s: a concurrency limit is not on an axis of requests in flight", name)
		}
		if strings.Contains(svg, ">429s<") {
			t.Errorf("%s: a 429 line in a run without 429s", name)
		}
	}
	doc := run(t, "adaptive-aimd")
	svg := chartSVG(doc, "adaptive-limit")
	if !strings.Contains(svg, "requests per second") || strings.Contains(svg, "requests in flight") {
		t.Errorf("adaptive-aimd: a rate limit is not on an axis of requests per second")
	}
	if doc.Results.Instances > 1 && !strings.Contains(svg, "objects together") {
		t.Errorf("adaptive-aimd: %d instances, and the legend does not say the limit is all of theirs together", doc.Results.Instances)
	}
}

// A limiter that counts cost (tokens) is in cost units: metrics.json says
// so (unit "cost"), and the throughput chart, in requests per second,
// draws no line for it: 13.5 tokens a second would sit among the
// requests as if it were 13.5 requests a second.
func TestCostLimitIsNotDrawnOnARequestsAxis(t *testing.T) {
	sets := []scenarios.Override{{Key: "client.limiter.rpm.unit", Value: "cost"}, {Key: "client.limiter.rpm.rate", Value: 13.5},
		{Key: "client.limiter.rpm.burst", Value: 144000.0}}
	sc, err := scenarios.NewLoader().Open("../scenarios/examples/api-llm-tokens.toml", sets)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sc.Simulate(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Series.Close()
	report.Analyze(out.Results, out.Series)
	units := map[string]string{}
	for _, l := range out.Results.Limiters {
		units[l.Name] = l.Unit
	}
	if units["rpm"] != "cost" || units["conns"] != "" {
		t.Fatalf("limiter units %v, want rpm in cost and conns in requests", units)
	}
	doc, err := report.Build(out.Results, out.Series, "")
	if err != nil {
		t.Fatal(err)
	}
	if svg := chartSVG(doc, "throughput"); svg == "" || strings.Contains(svg, "limit rpm") {
		t.Errorf("the throughput chart draws the cost limit rpm on its requests axis")
	}
}

// A run whose server refuses 18% of its requests with a 503 the client
// does not treat as a limit is not "healthy": the refusals are a finding,
// with its evidence; listed in client.on_limit.statuses, the 503s are
// paused on and retried, and the finding goes.
func TestUnhandledRefusalsAreAFinding(t *testing.T) {
	doc := run(t, "nginx-limit-req")
	r := doc.Results
	if r.Requests.Failed == 0 {
		t.Fatal("nginx-limit-req no longer refuses with an unlisted status: the case is gone")
	}
	var found *metrics.Diagnosis
	for i, d := range r.Diagnoses {
		if d.Code == "unhandled_refusals" {
			found = &r.Diagnoses[i]
		}
	}
	if found == nil || !strings.Contains(found.Evidence, report.Grouped(r.Requests.Failed)+" requests") || strings.HasPrefix(report.Headline(r)[0], "healthy") {
		t.Fatalf("no unhandled_refusals finding for %d failed requests: %+v; headline %q", r.Requests.Failed, r.Diagnoses, report.Headline(r)[0])
	}
	sc, err := scenarios.NewLoader().Open("../scenarios/examples/nginx-limit-req.toml",
		[]scenarios.Override{{Key: "client.on_limit.statuses", Value: []any{int64(429), int64(503)}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := sc.Simulate(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Series.Close()
	report.Analyze(out.Results, out.Series)
	for _, d := range out.Results.Diagnoses {
		if d.Code == "unhandled_refusals" {
			t.Errorf("503 listed, yet: %s", d.Evidence)
		}
	}
	if out.Results.Requests.Failed != 0 {
		t.Errorf("503 listed, yet %d requests failed", out.Results.Requests.Failed)
	}
}

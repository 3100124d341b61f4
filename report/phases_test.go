package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
)

// An on/off workload's off phases are every cycle's last off_s, up to the
// end of the run, and the time charts shade them with a legend entry; a
// workload without phases gets no such entry.
func TestOffPhasesAreShaded(t *testing.T) {
	o := &metrics.OnOff{OnS: 2, OffS: 4}
	if got, want := o.OffPhases(13, 300), [][2]float64{{2, 6}, {8, 12}}; !slices.Equal(got, want) {
		t.Fatalf("off phases to 13 s: %v, want %v", got, want)
	}
	if got := o.OffPhases(14.5, 300); len(got) != 3 || got[2] != [2]float64{14, 18} {
		t.Fatalf("off phases to 14.5 s: %v, want a third starting at 14 s", got)
	}
	var none *metrics.OnOff
	if got := none.OffPhases(100, 300); got != nil {
		t.Fatalf("no on/off workload: %v", got)
	}
	// A cycle of nanoseconds over seconds: 5·10⁹ phases, none built (the
	// list was built whole, out of memory, before the chart's cap).
	if got := (&metrics.OnOff{OnS: 1e-9, OffS: 1e-9}).OffPhases(10, 300); got != nil {
		t.Fatalf("%d phases past the cap", len(got))
	}
	if got := o.OffPhases(13, 1); got != nil {
		t.Fatalf("two phases past a cap of one: %v", got)
	}
	s := &metrics.Series{Columns: []string{"t_s", "arrivals", "starts", "succeeded"}}
	for k := 1; k <= 12; k++ {
		on := 0.0
		if (k-1)%6 < 2 {
			on = 50
		}
		s.Append([]float64{float64(k), on, on, on})
	}
	r := &metrics.Results{Scenario: "onoff", ElapsedS: 12, IntervalS: 1, OnOff: o}
	svg := func(r *metrics.Results) string {
		ps, _ := throughputPanels(r, s)
		_, out, err := renderPanels(ps, "footer")
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if !strings.Contains(svg(r), "no arrivals (off phase)") {
		t.Error("the throughput chart of an on/off run has no off-phase legend entry")
	}
	r.OnOff = nil
	if strings.Contains(svg(r), "off phase") {
		t.Error("a run without phases shades off phases")
	}
}

// A per-entity chart draws the seven with the most arrivals one by one,
// most first, and the others as one line that sums them, in requests per
// second — a tenant with many arrivals and few successes (starved) among
// the seven.
func TestEntitySeriesKeepsTheBusiestAndSumsTheRest(t *testing.T) {
	s := &metrics.Series{Columns: []string{"t_s"}}
	var names []string
	for i := range 10 {
		names = append(names, string(rune('a'+i)))
		s.Columns = append(s.Columns, names[i]+".succeeded", names[i]+".arrivals")
	}
	for k := 1; k <= 3; k++ {
		row := []float64{float64(k) * 0.5}
		for i := range 10 {
			// tenant j: j+1 successes per half-second interval, of j+1
			// arrivals — except a, starved: 100 arrivals, 1 success.
			arrived := float64(i + 1)
			if i == 0 {
				arrived = 100
			}
			row = append(row, float64(i+1), arrived)
		}
		s.Append(row)
	}
	r := &metrics.Results{IntervalS: 0.5}
	all := entitySeries(r, s, names, ".succeeded", ".arrivals")
	if len(all) != 8 {
		t.Fatalf("%d lines, want 7 and the others", len(all))
	}
	if all[0].name != "a" || all[1].name != "j" || all[6].name != "e" || all[7].name != "the other 3" {
		t.Fatalf("lines %v, %v … %v, %v: want the starved a first, then j, e seventh, then the other 3", all[0].name, all[1].name, all[6].name, all[7].name)
	}
	cs := make([]column, len(all))
	for k, l := range all {
		cs[k] = l.column
	}
	ys := readLines(r, s, cs...).ys
	if ys[0][0] != 2 || ys[1][0] != 20 || ys[7][2] != (2+3+4)*2 {
		t.Fatalf("rates %v, %v and %v: want a's 2/s, j's 20/s, and the others' 9 per half second = 18/s", ys[0], ys[1], ys[7])
	}
	if entitySeries(r, s, names[:1], ".succeeded", ".arrivals") != nil || entitySeries(r, s, []string{"x", "y"}, ".succeeded", ".arrivals") != nil {
		t.Fatal("fewer than two entities with columns should draw nothing")
	}
}

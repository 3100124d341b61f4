package report

import (
	"errors"
	"time"

	"gonum.org/v1/plot"
)

// replayChartName is the file stem of the replay's chart.
const replayChartName = "replay"

// ReplayChart draws a replay minute by minute: above, production's
// refusals against the replay's failures and upstream 429s; below, the
// replay's delays (p50, p99).
func ReplayChart(c *ReplayComparison) (Chart, error) {
	if c == nil || len(c.Minutes) == 0 {
		return Chart{}, errors.New("report: no replayed minute to chart")
	}
	start, err := time.Parse(time.RFC3339, c.Start)
	if err != nil {
		return Chart{}, err
	}
	n := len(c.Minutes)
	xs := make([]float64, n)
	cols := make([][]float64, 5)
	for i := range cols {
		cols[i] = make([]float64, n)
	}
	for i, m := range c.Minutes {
		at, err := time.Parse(time.RFC3339, m.Minute)
		if err != nil {
			return Chart{}, err
		}
		xs[i] = at.Sub(start).Minutes()
		cols[0][i] = float64(m.ProductionThrottled)
		cols[1][i] = float64(failures(&m))
		cols[2][i] = float64(m.Refusals)
		cols[3][i] = m.DelayP50S
		cols[4][i] = m.DelayP99S
	}
	title := "Replay: production against the configuration, minute by minute"
	top := newPlot(title, "minutes from "+c.Start, "requests a minute")
	for i, name := range []string{"production 429/503", "replay: not succeeded", "replay: upstream 429s"} {
		if err := line(top, xs, cols[i], name, i, i == 0); err != nil {
			return Chart{}, err
		}
	}
	bottom := newPlot("", "minutes from "+c.Start, "delay before sending (s)")
	for i, name := range []string{"delay p50", "delay p99"} {
		if err := line(bottom, xs, cols[3+i], name, 3+i, false); err != nil {
			return Chart{}, err
		}
	}
	top.Legend.Top, bottom.Legend.Top = true, true
	png, svg, err := renderPanels([]*plot.Plot{top, bottom}, "limitsim replay "+c.Log)
	if err != nil {
		return Chart{}, err
	}
	return Chart{Name: replayChartName, Title: title,
		Caption: "Above, each minute's requests that production refused (dashed) against those the replayed configuration did not get through (rejected by the client, ended on a 429 or failed) and the upstream 429s it drew; below, how long it held the minute's requests before sending them. Where the lines part, the configuration changes what that minute's traffic met.",
		PNG:     png, SVG: svg}, nil
}

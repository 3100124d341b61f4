package report

import (
	"bytes"
	"fmt"
	"image/color"
	pngenc "image/png"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/limitsim/limitsim/report/metrics"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart is one rendered chart.
type Chart struct {
	Name    string // file stem: wait-bucket-cdf, saturation, …
	Title   string
	Caption string // what it shows and how to read it
	PNG     []byte
	SVG     []byte
}

// Omitted is a chart left out, with the reason.
type Omitted struct {
	Name, Title, Reason string
}

const (
	chartW = 10 * vg.Inch
	chartH = 5.4 * vg.Inch
	footH  = 0.32 * vg.Inch
	dpi    = 96
)

// palette is a colour-blind-safe qualitative palette (Okabe–Ito).
var palette = []color.RGBA{
	{0, 114, 178, 255}, {230, 159, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{86, 180, 233, 255}, {213, 94, 0, 255}, {240, 228, 66, 255}, {0, 0, 0, 255},
}

func colour(i int) color.Color { return palette[i%len(palette)] }

// The palette indices of what every chart of a run draws in one colour:
// the same line reads the same on the throughput chart and the timeline,
// and a limiter keeps its colour on the wait, waiting-line, saturation and
// adaptive charts.
const (
	hueOffered = 0 // offered load; also requests in flight
	hueStarted = 1 // attempts started; also requests in the system
	hueGoodput = 2 // successes
	hue429     = 5 // 429 responses
	hueIngest  = 1 // the ingest queue and its blocked producers
	hueRequest = 0 // request time p50, then p95 and p99 on the next two
)

// limiterHues are the palette indices of the limiters, in their order in
// the scenario (and again after the fourth): none is taken by the lines
// drawn beside limiters, and yellow, the faintest on white, comes last.
var limiterHues = [...]int{3, 4, 7, 6}

// limiterHue is the palette index of the limiter named name in r, the
// same in every chart; the first limiter's for a name that is none.
func limiterHue(r *metrics.Results, name string) int {
	for k, l := range r.Limiters {
		if l.Name == name {
			return limiterHues[k%len(limiterHues)]
		}
	}
	return limiterHues[0]
}

func sans(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// newPlot returns a plot styled for reading at 100% zoom.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(15)
	p.Title.Padding = 8
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = sans(12)
		ax.Tick.Label.Font = sans(11)
		ax.Padding = 4
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = humanTicks{}, humanTicks{}
	p.Legend.TextStyle.Font = sans(11)
	p.Legend.Padding = 3 // rows a line apart, descenders clear of the next row
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// render draws p with a footer naming the run, as PNG and SVG.
func render(p *plot.Plot, footer string) (png, svg []byte, err error) {
	return renderPanels([]*plot.Plot{p}, footer)
}

// renderPanels draws plots stacked top to bottom, their axes aligned so
// that a shared time axis lines up, with a footer naming the run. A chart
// of several panels is taller: each panel keeps most of a chart's height.
func renderPanels(ps []*plot.Plot, footer string) (png, svg []byte, err error) {
	h := panelsHeight(len(ps))
	draw1 := func(c vg.CanvasSizer) { drawPanels(c, ps, footer) }
	img := vgimg.NewWith(vgimg.UseWH(chartW, h), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	draw1(img)
	var b bytes.Buffer
	// Flat-coloured charts compress nearly as well at the fastest level,
	// in a fraction of the time.
	enc := pngenc.Encoder{CompressionLevel: pngenc.BestSpeed}
	if err := enc.Encode(&b, img.Image()); err != nil {
		return nil, nil, err
	}
	png = b.Bytes()
	sv := vgsvg.New(chartW, h)
	draw1(sv)
	var s bytes.Buffer
	if _, err := sv.WriteTo(&s); err != nil {
		return nil, nil, err
	}
	return png, s.Bytes(), nil
}

// panelsHeight is the height of a chart of n panels: each panel keeps
// most of a chart's height.
func panelsHeight(n int) vg.Length {
	if n > 1 {
		return chartH * vg.Length(0.3+0.7*float64(n))
	}
	return chartH
}

// drawPanels draws ps stacked top to bottom on c, their axes aligned, with
// the footer along the bottom.
func drawPanels(c vg.CanvasSizer, ps []*plot.Plot, footer string) {
	dc := draw.New(c)
	area := draw.Crop(dc, 0, 0, footH, 0)
	if len(ps) == 1 {
		ps[0].Draw(area)
	} else {
		grid := make([][]*plot.Plot, len(ps))
		for i, p := range ps {
			grid[i] = []*plot.Plot{p}
		}
		cs := plot.Align(grid, draw.Tiles{Rows: len(ps), Cols: 1, PadY: 0.15 * vg.Inch}, area)
		for i, p := range ps {
			p.Draw(cs[i][0])
		}
	}
	sty := text.Style{Color: color.Gray{90}, Font: sans(10), Handler: ps[0].TextHandler}
	dc.FillText(sty, vg.Point{X: dc.Min.X + 0.12*vg.Inch, Y: dc.Min.Y + 0.1*vg.Inch}, footer)
}

// finiteAxes reports whether both axes have a usable range; gonum/plot's
// tick labelling does not terminate on NaN bounds.
func finiteAxes(p *plot.Plot) bool {
	for _, f := range []float64{p.X.Min, p.X.Max, p.Y.Min, p.Y.Max} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}

func allZero(xs []float64) bool {
	for _, x := range xs {
		if x != 0 {
			return false
		}
	}
	return true
}

// safeStem makes a limiter or host name usable in a file name.
func safeStem(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// Charts draws every chart the run has data for.
func Charts(r *metrics.Results, s *metrics.Series) ([]Chart, []Omitted, error) {
	charts, panels, omitted := chartPlots(r, s)
	if err := renderAll(charts, panels, chartFooter(r)); err != nil {
		return nil, nil, err
	}
	return charts, omitted, nil
}

// chartFooter names the run at the foot of each of its charts.
func chartFooter(r *metrics.Results) string {
	return fmt.Sprintf("limitsim · scenario %s · seed %d", r.Scenario, r.Seed)
}

// chartPlots lays out every chart the run has data for, each as its
// panels, not yet rendered; and the charts left out, with the reason.
func chartPlots(r *metrics.Results, s *metrics.Series) ([]Chart, [][]*plot.Plot, []Omitted) {
	var charts []Chart
	var panels [][]*plot.Plot // each chart's, rendered together at the end
	var omitted []Omitted
	emit := func(name, title, caption string, p *plot.Plot, reason string, more ...*plot.Plot) {
		ps := []*plot.Plot{p}
		for _, q := range append(ps, more...) {
			if q != nil && !finiteAxes(q) {
				p, reason = nil, "its data has no finite range"
			}
		}
		if p == nil {
			if reason != "" { // no reason: the chart does not apply to the scenario
				omitted = append(omitted, Omitted{Name: name, Title: title, Reason: reason})
			}
			return
		}
		charts = append(charts, Chart{Name: name, Title: title, Caption: caption})
		panels = append(panels, append(ps, more...))
	}
	emitPanels := func(name, title, caption string, ps []*plot.Plot, reason string) {
		var first *plot.Plot
		if len(ps) > 0 {
			first, ps = ps[0], ps[1:]
		}
		emit(name, title, caption, first, reason, ps...)
	}
	timeline, reason := timelinePanels(r, s)
	emitPanels("timeline", "Timeline", timelineCaption(r), timeline, reason)
	for _, l := range r.Limiters {
		stem := "wait-" + safeStem(l.Name)
		p, reason := waitHistogram(r, l)
		emit(stem+"-hist", "Wait in "+l.Name, "How long acquisitions of "+l.Name+" waited (log scale), with p50, p99 and the alert line at a tenth of the request budget.", p, reason)
		p, reason = waitCDF(r, l)
		emit(stem+"-cdf", "Wait in "+l.Name+" (CDF)", "Share of acquisitions of "+l.Name+" that waited at most x.", p, reason)
	}
	type spec struct {
		name, title, caption string
		draw                 func(*metrics.Results, *metrics.Series) (*plot.Plot, string)
		panels               func(*metrics.Results, *metrics.Series) ([]*plot.Plot, string)
	}
	for _, c := range []spec{
		{"saturation", "Saturation", "Permits in use ÷ permits, or 1 − tokens ÷ capacity, the mean of eight samples in each interval. Pinned at 100% means demand exceeds the limit. The warm-up is shaded.", saturationChart, nil},
		{"upstream-429", "Upstream 429s", "429 responses per second per host (per minute with intervals of a minute or more), by the interval the attempt was sent in; the strips along the top, in each host's colour, are its Retry-After pauses. Any sustained non-zero rate means the local limit is above the real one.", rejectionsChart, nil},
		{"upstream-429-rate", "Upstream 429 rate", "Per host, the share of the attempts started in each interval that were answered 429.", rejectionRateChart, nil},
		{"waiting", "Waiting lines", "Time-average number waiting in each limiter's line and in the ingest queue: the cost of a limiter is the cost of its waiting line. Series more than ten times smaller than the largest get their own panel.", nil, waitingPanels},
		{"in-flight", "In flight", "Time-average requests inside the upstream (sent, not answered) and in the whole system; in two panels when one is more than ten times the other.", nil, inFlightPanels},
		{"throughput", "Throughput", "Requests per second in each interval: offered (arrivals), started (attempts sent), succeeded; a series more than ten times below the largest gets its own panel, so a collapse of goodput under a burst stays visible.", nil, throughputPanels},
		{"adaptive-limit", "Adaptive limits over time", "Each adaptive limiter's limit at the end of each interval, summed over its instances and scopes, in its own unit: a rate limit against the attempts started and the 429s answered per second (it should saw just around the real quota, with 429s only at its peaks); a concurrency limit against the requests in flight (it should settle near the server's knee).", nil, adaptivePanels},
		{"percentiles", "Request time and waits over time", "Per interval: p50, p95 and p99 of the end-to-end time of the requests that succeeded in it (arrival to answer), and the p99 wait of each limiter's acquisitions that ended in it (dashed); gaps are intervals where none ended.", nil, percentilePanels},
		{"tenants-throughput", "Throughput by tenant", "Successful requests per second of each tenant (the seven with the most arrivals, the others together); a tenant more than ten times below the largest gets its own panel. A tenant whose line sags while another's bursts is starved by it.", nil, tenantThroughputPanels},
		{"hosts-throughput", "Attempts by host", "Attempts started per second at each host (the seven with the most, the others together): how the client spreads its work over the hosts; a line that drops to zero is a host paused or starved.", nil, hostThroughputPanels},
		{"tenants-wait", "Wait p99 by tenant", "99th percentile of the time each tenant's requests spent waiting on limiters.", tenantWaitChart, nil},
		{"tenants-share", "Admitted share by tenant", "Each tenant's share of the successful requests.", tenantShareChart, nil},
	} {
		if c.panels != nil {
			ps, reason := c.panels(r, s)
			emitPanels(c.name, c.title, c.caption, ps, reason)
			continue
		}
		p, reason := c.draw(r, s)
		emit(c.name, c.title, c.caption, p, reason)
	}
	return charts, panels, omitted
}

// renderAll rasterises and vectorises every chart, on as many goroutines as
// there are processors: each chart's plots are its own, and each result
// goes to its own slot, so the output does not depend on the order they
// finish in.
func renderAll(charts []Chart, panels [][]*plot.Plot, footer string) error {
	errs := make([]error, len(charts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(charts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				charts[i].PNG, charts[i].SVG, errs[i] = renderPanels(panels[i], footer)
			}
		}()
	}
	for i := range charts {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("chart %s: %w", charts[i].Name, err)
		}
	}
	return nil
}

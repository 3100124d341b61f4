package report

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"runtime"
	"slices"
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
	pngenc "image/png"
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
	h := chartH
	if len(ps) > 1 {
		h = chartH * vg.Length(0.3+0.7*float64(len(ps)))
	}
	draw1 := func(c vg.CanvasSizer) {
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

// band shades x ranges over the whole height: the warm-up, 429 pauses.
type band struct {
	ranges [][2]float64
	fill   color.Color
	// strip, when set, draws the ranges as a strip that high along the
	// top, row strips down (0 = the top one), instead of full height:
	// episodes that cover most of a run then mark it without washing the
	// chart in their colour.
	strip vg.Length
	row   int
}

// stripH is the height of a pause strip; strips sit stripH*1.3 apart.
const stripH = 6 * vg.Millimeter / 2

func (b band) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	y0, y1 := c.Min.Y, c.Max.Y
	if b.strip > 0 {
		y1 = c.Max.Y - vg.Length(b.row)*b.strip*1.3
		y0 = y1 - b.strip
	}
	for _, r := range b.ranges {
		x0, x1 := trX(math.Max(r[0], p.X.Min)), trX(math.Min(r[1], p.X.Max))
		if x1 <= x0 {
			continue
		}
		c.FillPolygon(b.fill, c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
	}
}

// Thumbnail draws the band's colour in a legend entry.
func (b band) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.fill, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// vline marks an x value across the plot, with a label at the top.
type vline struct {
	x     float64
	label string
	style draw.LineStyle
	row   int // label row from the top, so that close markers' labels never overlap
}

func (v vline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	if v.x < p.X.Min || v.x > p.X.Max {
		return
	}
	x := trX(v.x)
	c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
	sty := text.Style{Color: v.style.Color, Font: sans(10), XAlign: text.XLeft, YAlign: text.YTop, Handler: p.TextHandler}
	at := vg.Point{X: x + 3, Y: c.Max.Y - 2 - vg.Length(v.row)*sty.Height(v.label)*1.15}
	if x+sty.Width(v.label)+6 > c.Max.X { // near the right edge: label on the left
		sty.XAlign = text.XRight
		at.X = x - 3
	}
	c.FillText(sty, at, v.label)
}

// DataRange widens only the x range: ±Inf leaves the y range to the data.
func (v vline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return v.x, v.x, math.Inf(1), math.Inf(-1)
}

// hline marks a y value across the plot (a configured limit, a quota),
// labelled at its right end.
type hline struct {
	y     float64
	label string
	style draw.LineStyle
}

func (h hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	if h.y < p.Y.Min || h.y > p.Y.Max {
		return
	}
	y := trY(h.y)
	c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
	sty := text.Style{Color: h.style.Color, Font: sans(10), XAlign: text.XRight, YAlign: text.YBottom, Handler: p.TextHandler}
	c.FillText(sty, vg.Point{X: c.Max.X - 4, Y: y + 2}, h.label)
}

// DataRange widens only the y range, so the line is inside the frame.
func (h hline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), h.y, h.y
}

// rateLines are the throughput chart's reference lines: each rate or
// window limiter's configured rate (over its objects) and the upstreams'
// quotas together, in requests per second.
func rateLines(r *metrics.Results) []hline {
	grey := draw.LineStyle{Color: color.Gray{Y: 90}, Width: 1.2, Dashes: []vg.Length{3, 3}}
	var out []hline
	for _, l := range r.Limiters {
		if l.Family == "concurrency" || l.Capacity <= 0 {
			continue
		}
		objects := float64(max(1, l.ScopesTotal) * max(1, r.Instances))
		out = append(out, hline{y: l.Capacity * objects, label: fmt.Sprintf("limit %s %s/s", l.Name, human(l.Capacity*objects, 3)), style: grey})
	}
	var quota float64
	for _, u := range r.Upstreams {
		if u.QuotaRPS != nil {
			quota += *u.QuotaRPS
		}
	}
	if quota > 0 {
		red := draw.LineStyle{Color: color.NRGBA{R: 190, G: 40, B: 40, A: 255}, Width: 1.2, Dashes: []vg.Length{6, 3}}
		out = append(out, hline{y: quota, label: fmt.Sprintf("upstream quota %s/s", human(quota, 3)), style: red})
	}
	return out
}

// segments splits the points (xs, ys) at every NaN or infinite y.
func segments(xs, ys []float64) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for k := range xs {
		if math.IsNaN(ys[k]) || math.IsInf(ys[k], 0) {
			if len(cur) > 0 {
				out, cur = append(out, cur), nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: xs[k], Y: ys[k]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// Long series are drawn thinned: more than thinAbove points become
// thinColumns columns, each drawn as the mean of its points with a band from
// their minimum to their maximum, so that a chart costs the same whatever
// the run's length and a one-interval spike still reaches its height.
const (
	thinAbove   = 1200
	thinColumns = 600
)

// thin groups consecutive points into at most cols columns. Each column's x
// is the mean x of its points and mean, lo and hi are the mean, minimum and
// maximum of their finite ys; a column without a finite y is NaN in all
// three (a gap).
func thin(xs, ys []float64, cols int) (cx, mean, lo, hi []float64) {
	per := (len(xs) + cols - 1) / cols
	var b bin
	for a := 0; a < len(xs); a += per {
		end := min(a+per, len(xs))
		var sx float64
		b.reset()
		for k := a; k < end; k++ {
			sx += xs[k]
			b.add(ys[k])
		}
		cx = append(cx, sx/float64(end-a))
		mean, lo, hi = b.emit(mean, lo, hi)
	}
	return cx, mean, lo, hi
}

// rangeBand fills between lo and hi over each run of finite columns.
type rangeBand struct {
	xs, lo, hi []float64
	fill       color.Color
}

// Plot draws the band.
func (b rangeBand) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var pts []vg.Point
	flush := func(from, to int) {
		if to-from < 1 {
			return
		}
		pts = pts[:0]
		for k := from; k < to; k++ {
			pts = append(pts, vg.Point{X: trX(b.xs[k]), Y: trY(b.hi[k])})
		}
		for k := to - 1; k >= from; k-- {
			pts = append(pts, vg.Point{X: trX(b.xs[k]), Y: trY(b.lo[k])})
		}
		c.FillPolygon(b.fill, c.ClipPolygonXY(pts))
	}
	start := 0
	for k := range b.xs {
		if math.IsNaN(b.lo[k]) {
			flush(start, k)
			start = k + 1
		}
	}
	flush(start, len(b.xs))
}

// DataRange covers the band, so that peaks stay inside the frame.
func (b rangeBand) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for k, x := range b.xs {
		xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
		if !math.IsNaN(b.lo[k]) {
			ymin, ymax = math.Min(ymin, b.lo[k]), math.Max(ymax, b.hi[k])
		}
	}
	return xmin, xmax, ymin, ymax
}

// line draws ys against xs in colour i. A NaN (no data: an interval with
// no attempts) breaks the line instead of being bridged, and a lone point
// between gaps is drawn as a dot. A series longer than thinAbove points is
// thinned: the line is each column's mean, over a band from its minimum to
// its maximum.
func line(p *plot.Plot, xs, ys []float64, name string, i int, dashed bool) error {
	return drawLine(p, xs, series{name: name, ys: ys, dashed: dashed}, i)
}

// drawLine draws sr against xs in colour i, as line does; a series read
// thinned (see timeLines) is drawn with its band as it is.
func drawLine(p *plot.Plot, xs []float64, sr series, i int) error {
	name := sr.name
	parts, first, err := lineParts(xs, sr, i)
	if err != nil {
		return err
	}
	p.Add(parts...)
	if name != "" && first != nil {
		p.Legend.Add(name, first)
	}
	return nil
}

// lineParts returns what line draws, and the first line for the legend.
func lineParts(xs []float64, sr series, i int) (parts []plot.Plotter, first *plotter.Line, err error) {
	ys, lo, hi, dashed := sr.ys, sr.lo, sr.hi, sr.dashed
	if lo == nil && len(xs) > thinAbove {
		xs, ys, lo, hi = thin(xs, ys, thinColumns)
	}
	if lo != nil {
		r, g, bl, _ := colour(i).RGBA()
		parts = append(parts, rangeBand{xs: xs, lo: lo, hi: hi, fill: color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: 70}})
	}
	for _, seg := range segments(xs, ys) {
		l, err := plotter.NewLine(seg)
		if err != nil {
			return nil, nil, err
		}
		l.Color = colour(i)
		l.Width = 1.8
		if dashed {
			l.Dashes = []vg.Length{6, 3}
		}
		parts = append(parts, l)
		if len(seg) == 1 {
			if s, err := plotter.NewScatter(seg); err == nil {
				s.GlyphStyle.Color, s.GlyphStyle.Radius = colour(i), 2.5
				parts = append(parts, s)
			}
		}
		if first == nil {
			first = l
		}
	}
	return parts, first, nil
}

func warmupBand(r *metrics.Results) band {
	return band{ranges: [][2]float64{{0, r.WarmupS}}, fill: color.NRGBA{R: 160, G: 160, B: 160, A: 60}}
}

// maxOffPhases is the most off phases of an on/off workload a time chart
// shades; beyond it the shading would cover the chart in stripes.
const maxOffPhases = 300

// addTimeBands shades a time chart's warm-up and, for an on/off workload,
// the phases without arrivals (with a legend entry), under the data.
func addTimeBands(p *plot.Plot, r *metrics.Results) {
	p.Add(warmupBand(r))
	if off := r.OnOff.OffPhases(r.ElapsedS, maxOffPhases); len(off) > 0 {
		b := band{ranges: off, fill: color.NRGBA{R: 70, G: 130, B: 220, A: 40}}
		p.Add(b)
		p.Legend.Add("no arrivals (off phase)", b)
	}
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
	footer := fmt.Sprintf("limitsim · scenario %s · seed %d", r.Scenario, r.Seed)
	var charts []Chart
	var panels [][]*plot.Plot // each chart's, rendered together at the end
	var omitted []Omitted
	emit := func(name, title, caption string, p *plot.Plot, reason string, more ...*plot.Plot) error {
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
			return nil
		}
		charts = append(charts, Chart{Name: name, Title: title, Caption: caption})
		panels = append(panels, append(ps, more...))
		return nil
	}
	if ps, reason := timelinePanels(r, s); len(ps) > 0 || reason != "" {
		var first *plot.Plot
		if len(ps) > 0 {
			first, ps = ps[0], ps[1:]
		}
		if err := emit("timeline", "Timeline", timelineCaption(r), first, reason, ps...); err != nil {
			return nil, nil, err
		}
	}
	for _, l := range r.Limiters {
		stem := "wait-" + safeStem(l.Name)
		p, reason := waitHistogram(r, l)
		if err := emit(stem+"-hist", "Wait in "+l.Name, "How long acquisitions of "+l.Name+" waited (log scale), with p50, p99 and the alert line at a tenth of the request budget.", p, reason); err != nil {
			return nil, nil, err
		}
		p, reason = waitCDF(r, l)
		if err := emit(stem+"-cdf", "Wait in "+l.Name+" (CDF)", "Share of acquisitions of "+l.Name+" that waited at most x.", p, reason); err != nil {
			return nil, nil, err
		}
	}
	type spec struct {
		name, title, caption string
		draw                 func(*metrics.Results, *metrics.Series) (*plot.Plot, string)
		panels               func(*metrics.Results, *metrics.Series) ([]*plot.Plot, string)
	}
	for _, c := range []spec{
		{"saturation", "Saturation", "Permits in use ÷ permits, or 1 − tokens ÷ capacity, at the end of each interval. Pinned at 100% means demand exceeds the limit. The warm-up is shaded.", saturationChart, nil},
		{"upstream-429", "Upstream 429s", "429 responses per second per host (per minute with intervals of a minute or more), by the interval the attempt was sent in; the strips along the top, in each host's colour, are its Retry-After pauses. Any sustained non-zero rate means the local limit is above the real one.", rejectionsChart, nil},
		{"upstream-429-rate", "Upstream 429 rate", "Per host, the share of the attempts started in each interval that were answered 429.", rejectionRateChart, nil},
		{"waiting", "Waiting lines", "Time-average number waiting in each limiter's line and in the ingest queue: the cost of a limiter is the cost of its waiting line. Series more than ten times smaller than the largest get their own panel.", nil, waitingPanels},
		{"in-flight", "In flight", "Time-average requests inside the upstream (sent, not answered) and in the whole system; in two panels when one is more than ten times the other.", nil, inFlightPanels},
		{"throughput", "Throughput", "Requests per second in each interval: offered (arrivals), started (attempts sent), succeeded; a series more than ten times below the largest gets its own panel, so a collapse of goodput under a burst stays visible.", nil, throughputPanels},
		{"adaptive-limit", "Adaptive limits over time", "Each adaptive limiter's rate at the end of each interval (requests per second per limiter object), against the attempts started and the 429s answered per second: the limit should saw just around the real quota, with 429s only at its peaks.", nil, adaptivePanels},
		{"percentiles", "Request time and waits over time", "Per interval: p50, p95 and p99 of the end-to-end time of the requests that succeeded in it (arrival to answer), and the p99 wait of each limiter's acquisitions that ended in it (dashed); gaps are intervals where none ended.", nil, percentilePanels},
		{"tenants-throughput", "Throughput by tenant", "Successful requests per second of each tenant (the seven with the most arrivals, the others together); a tenant more than ten times below the largest gets its own panel. A tenant whose line sags while another's bursts is starved by it.", nil, tenantThroughputPanels},
		{"hosts-throughput", "Attempts by host", "Attempts started per second at each host (the seven with the most, the others together): how the client spreads its work over the hosts; a line that drops to zero is a host paused or starved.", nil, hostThroughputPanels},
		{"tenants-wait", "Wait p99 by tenant", "99th percentile of the time each tenant's requests spent waiting on limiters.", tenantWaitChart, nil},
		{"tenants-share", "Admitted share by tenant", "Each tenant's share of the successful requests.", tenantShareChart, nil},
	} {
		var more []*plot.Plot
		var p *plot.Plot
		var reason string
		if c.panels != nil {
			var ps []*plot.Plot
			if ps, reason = c.panels(r, s); len(ps) > 0 {
				p, more = ps[0], ps[1:]
			}
		} else {
			p, reason = c.draw(r, s)
		}
		if err := emit(c.name, c.title, c.caption, p, reason, more...); err != nil {
			return nil, nil, err
		}
	}
	if err := renderAll(charts, panels, footer); err != nil {
		return nil, nil, err
	}
	return charts, omitted, nil
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

// waitHistTitle titles a limiter's wait histogram. Its count is every
// steady-state wait that ended (or was cut off by an early stop), not the
// grants alone: when the two differ the title splits it, so that it reads
// beside the limiter's acquired count.
func waitHistTitle(r *metrics.Results, l metrics.LimiterStats, zero, total int64) string {
	t := fmt.Sprintf("Wait in %s: %.0f%% of %s steady-state acquisitions waited", l.Name, 100*(1-metrics.Ratio(float64(zero), float64(total))), Grouped(total))
	granted := l.WaitGrantedS.Count
	if other := total - granted; other > 0 {
		rest := "given up"
		switch {
		case !r.Complete && l.Timeouts == 0:
			rest = "still waiting when the run stopped"
		case !r.Complete:
			rest = "given up or still waiting when the run stopped"
		}
		t += fmt.Sprintf(" (%s granted, %s %s)", Grouped(granted), Grouped(other), rest)
	}
	return t
}

func waitHistogram(r *metrics.Results, l metrics.LimiterStats) (*plot.Plot, string) {
	var zero, total int64
	var bars []metrics.Bucket
	for _, b := range l.WaitHist {
		total += b.Count
		if b.LE == 0 {
			zero += b.Count
		} else {
			bars = append(bars, b)
		}
	}
	if len(bars) == 0 {
		return nil, "no acquisition of " + l.Name + " waited in the steady state"
	}
	p := newPlot(waitHistTitle(r, l, zero, total), "wait (s, log scale)", "acquisitions")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	hs := make(plotter.XYs, 0, len(bars))
	for _, b := range bars {
		hs = append(hs, plotter.XY{X: b.LE, Y: float64(b.Count)})
	}
	h := &logBars{pts: hs, fill: colour(0)}
	p.Add(h)
	addMarkers(p, r, l)
	_, _, _, top := h.DataRange()
	p.Y.Max = 1.15 * top // the marker labels sit above the bars
	return p, ""
}

// logBars draws histogram bars whose right edges are the points' X and
// whose left edges are a tenth of a decade below, on a log x axis.
type logBars struct {
	pts  plotter.XYs
	fill color.Color
}

func (b *logBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, pt := range b.pts {
		x0, x1 := trX(pt.X/math.Pow(10, 0.1)), trX(pt.X)
		y0, y1 := trY(math.Max(p.Y.Min, 0)), trY(pt.Y)
		c.FillPolygon(b.fill, c.ClipPolygonXY([]vg.Point{{X: x0 + 0.5, Y: y0}, {X: x1 - 0.5, Y: y0}, {X: x1 - 0.5, Y: y1}, {X: x0 + 0.5, Y: y1}}))
	}
}

func (b *logBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymax = math.Inf(1), math.Inf(-1), 0
	for _, pt := range b.pts {
		xmin = math.Min(xmin, pt.X/math.Pow(10, 0.1))
		xmax = math.Max(xmax, pt.X)
		ymax = math.Max(ymax, pt.Y)
	}
	return xmin, xmax, 0, ymax
}

func addMarkers(p *plot.Plot, r *metrics.Results, l metrics.LimiterStats) {
	row := 0
	mark := func(x float64, label string, c color.Color, dashed bool) {
		if x <= 0 {
			return
		}
		st := draw.LineStyle{Color: c, Width: 1.5}
		if dashed {
			st.Dashes = []vg.Length{5, 3}
		}
		p.Add(vline{x: x, label: label, style: st, row: row})
		row++
	}
	mark(l.WaitS.P50, "p50 "+secs(l.WaitS.P50), colour(2), false)
	mark(l.WaitS.P99, "p99 "+secs(l.WaitS.P99), colour(5), false)
	if a := alertWait(r); a > 0 {
		mark(a, "alert "+secs(a), color.RGBA{200, 0, 0, 255}, true)
	}
}

func waitCDF(r *metrics.Results, l metrics.LimiterStats) (*plot.Plot, string) {
	xs, ys := waitCDFPoints(l)
	if len(xs) == 0 {
		return nil, "no acquisition of " + l.Name + " waited in the steady state"
	}
	p := newPlot("Wait in "+l.Name+": cumulative share", "wait (s, log scale)", "share of acquisitions waiting at most x")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = 0, 1
	line(p, xs, ys, "", 0, false)
	addMarkers(p, r, l)
	return p, ""
}

// waitCDFPoints is a limiter's wait CDF over its positive buckets: the
// share of acquisitions that waited at most each bucket's bound. A single
// bucket gets a starting point (the share that did not wait, a tenth of a
// decade below) so that it draws as a step, not a dot. No points: nothing
// waited.
func waitCDFPoints(l metrics.LimiterStats) (xs, ys []float64) {
	var total, zero, cum int64
	for _, b := range l.WaitHist {
		total += b.Count
		if b.LE == 0 {
			zero += b.Count
		}
	}
	if zero == total {
		return nil, nil
	}
	for _, b := range l.WaitHist {
		cum += b.Count
		if b.LE > 0 {
			xs = append(xs, b.LE)
			ys = append(ys, float64(cum)/float64(total))
		}
	}
	if len(xs) == 1 {
		xs = append([]float64{xs[0] / math.Pow(10, 0.1)}, xs...)
		ys = append([]float64{float64(zero) / float64(total)}, ys...)
	}
	return xs, ys
}

func saturationChart(r *metrics.Results, s *metrics.Series) (*plot.Plot, string) {
	if len(r.Limiters) == 0 {
		return nil, "the client has no limiters"
	}
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	p := newPlot("Saturation per limiter", "time (s)", "saturation (%)")
	addTimeBands(p, r)
	p.Y.Min, p.Y.Max = 0, 115 // headroom for the legend above 100%
	var cs []column
	for _, l := range r.Limiters {
		cs = append(cs, column{[]string{l.Name + ".usage"}, func(v []float64) float64 { return 100 * v[0] }})
	}
	lines := readLines(r, s, cs...)
	var all []series
	for k, l := range r.Limiters {
		all = append(all, lines.line(k, l.Name, false))
	}
	for i, sr := range unhide(all, 115) {
		drawLine(p, lines.x, sr, i)
	}
	markDeadlock(p, r, s)
	return p, ""
}

// markDeadlock marks, on a time chart of a deadlocked run, the end of the
// last interval in which a request still completed: when the cycle closed.
func markDeadlock(p *plot.Plot, r *metrics.Results, s *metrics.Series) {
	if r.Stop.Kind != metrics.Deadlocked {
		return
	}
	last, found := 0.0, false
	s.ScanNamed(0, []string{"succeeded", "t_s"}, func(_ int, v []float64) bool {
		if v[0] > 0 {
			last, found = v[1], true
		}
		return true
	})
	if found {
		st := draw.LineStyle{Color: color.NRGBA{R: 190, G: 40, B: 40, A: 255}, Width: 1.5, Dashes: []vg.Length{5, 3}}
		p.Add(vline{x: last, label: "deadlock: last completion " + secs(last), style: st})
	}
}

// unhide keeps a series drawn exactly over an earlier one visible: it is
// dashed and its legend says which series it coincides with (two limiters
// pinned at 100% together in a deadlock, say). Series coincide when every
// point is within half a percent of span (the axis range) of the other's
// (see coincides).
func unhide(all []series, span float64) []series {
	out := slices.Clone(all)
	for i := range out {
		for j := range i {
			if out[i].coincides(out[j], 0.005*span) {
				out[i].name += " (same as " + all[j].name + ")"
				out[i].dashed = true
				break
			}
		}
	}
	return out
}

func coincide(a, b []float64, tol float64) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for k := range a {
		if math.IsNaN(a[k]) != math.IsNaN(b[k]) || math.Abs(a[k]-b[k]) > tol {
			return false
		}
	}
	return true
}

func pauseBands(r *metrics.Results, s *metrics.Series, host string) [][2]float64 {
	drawn := drawnRows(r, s)
	var out [][2]float64
	s.ScanNamed(0, []string{host + ".paused", "t_s"}, func(i int, v []float64) bool {
		if i >= drawn {
			return false
		}
		if x := v[1] - r.IntervalS; v[0] > 0 {
			end := x + r.IntervalS
			if n := len(out); n > 0 && math.Abs(out[n-1][1]-x) < 1e-9 {
				out[n-1][1] = end
			} else {
				out = append(out, [2]float64{x, end})
			}
		}
		return true
	})
	return out
}

func rejectionsChart(r *metrics.Results, s *metrics.Series) (*plot.Plot, string) {
	any := false
	for _, u := range r.Upstreams {
		any = any || u.Throttled > 0
	}
	if !any {
		return nil, "no upstream answered 429"
	}
	// The unit follows the interval: a per-minute rate read off 250 ms
	// intervals exaggerates every burst sixty-fold.
	unit, scale := "second", 1/r.IntervalS
	if r.IntervalS >= 60 {
		unit, scale = "minute", 60/r.IntervalS
	}
	p := newPlot("Upstream 429s per "+unit+", by send time", "time (s)", "429 responses per "+unit)
	addTimeBands(p, r)
	rows := 0
	hosts := metrics.ShownHosts(r)
	if len(hosts) < len(r.Upstreams) {
		p.Title.Text += fmt.Sprintf(" (the %d hosts with the most, of %s)", len(hosts), Grouped(int64(len(r.Upstreams))))
	}
	cs := make([]column, len(hosts))
	for i, u := range hosts {
		cs[i] = column{[]string{u.Host + ".responses_429"}, func(v []float64) float64 { return v[0] * scale }}
	}
	lines := readLines(r, s, cs...)
	for i, u := range hosts {
		drawLine(p, lines.x, lines.line(i, u.Host, false), i)
		// Pauses: a strip along the top in the host's colour.
		if b := pauseBands(r, s, u.Host); len(b) > 0 {
			c := palette[i%len(palette)]
			st := band{ranges: b, fill: color.NRGBA{R: c.R, G: c.G, B: c.B, A: 150}, strip: stripH, row: rows}
			p.Add(st)
			p.Legend.Add(u.Host+" paused (Retry-After)", st)
			rows++
		}
	}
	// The legend goes below the strips; the axis leaves room for both.
	p.Legend.YOffs = -vg.Length(rows) * stripH * 1.3
	legendRoom(p, len(hosts)+2*rows)
	return p, ""
}

func rejectionRateChart(r *metrics.Results, s *metrics.Series) (*plot.Plot, string) {
	if !anyValue(s, "responses_429", false) {
		return nil, "no upstream answered 429"
	}
	p := newPlot("Share of attempts answered 429, per host", "time (s)", "429 rate (%)")
	addTimeBands(p, r)
	p.Y.Min, p.Y.Max = 0, 115
	hosts := metrics.ShownHosts(r)
	if len(hosts) < len(r.Upstreams) {
		p.Title.Text += fmt.Sprintf(" (the %d with the most 429s, of %s)", len(hosts), Grouped(int64(len(r.Upstreams))))
	}
	var cs []column
	var drawn []int // the hosts' places in hosts (their colours)
	names := make([]string, len(hosts))
	for i, u := range hosts {
		names[i] = u.Host + ".responses_429"
	}
	some := anyValues(s, names, false)
	for i, u := range hosts {
		if !some[i] {
			continue
		}
		cs = append(cs, column{[]string{u.Host + ".responses_429", u.Host + ".starts"}, share429})
		drawn = append(drawn, i)
	}
	lines := readLines(r, s, cs...)
	for k, i := range drawn {
		drawLine(p, lines.x, lines.line(k, hosts[i].Host, false), i)
	}
	return p, ""
}

// share429 is the percentage of an interval's attempts (v[1]) answered
// 429 (v[0]); NaN, no rate, in an interval without attempts.
func share429(v []float64) float64 {
	if v[1] > 0 {
		return 100 * v[0] / v[1]
	}
	return math.NaN()
}

// logTicks mark a log axis at 1, 2 and 5 times each power of ten (every
// integer multiple when that labels fewer than three), labelled for
// people, so that a range inside one or two decades still reads: 5, 10,
// 20, 50 rather than a lone 10.
type logTicks struct{}

// Ticks returns the ticks between lo and hi (both positive).
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	}
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	var out []plot.Tick
	for _, labelled := range [][]int{{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		out = out[:0]
		n := 0
		for k := first; k <= last; k++ {
			for m := 1; m <= 9; m++ {
				v := float64(m) * math.Pow(10, float64(k))
				if v < lo || v > hi {
					continue
				}
				t := plot.Tick{Value: v}
				if slices.Contains(labelled, m) {
					t.Label = human(v, 3)
					n++
				}
				out = append(out, t)
			}
		}
		if n >= 3 {
			return out
		}
	}
	if len(slices.DeleteFunc(slices.Clone(out), func(t plot.Tick) bool { return t.Label == "" })) < 2 {
		return humanTicks{}.Ticks(lo, hi) // inside one decade's step: evenly spaced
	}
	return out
}

// humanTicks are gonum's default ticks labelled for people: 250, not
// 250.00; 2,500, not 2500.00.
type humanTicks struct{}

// Ticks returns the default ticks between lo and hi with human labels.
func (humanTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = human(ticks[i].Value, 6)
		}
	}
	return ticks
}

// legendRoom raises the top of a linear y axis so that a legend of
// entries lines in the top corner sits above the data, not over it, and
// no peak touches the frame.
func legendRoom(p *plot.Plot, entries int) {
	lo, hi := min(0, p.Y.Min), p.Y.Max
	if math.IsNaN(hi) || math.IsInf(hi, 0) || hi <= lo {
		return
	}
	p.Y.Min, p.Y.Max = lo, hi+(hi-lo)*(0.08+0.07*float64(entries))
}

// series is one named line of a time chart.
type series struct {
	name   string
	ys     []float64
	dashed bool
	lo, hi []float64  // the band of a series read thinned (see timeLines); nil otherwise
	from   *timeLines // the lines a series read thinned is line at of
	at     int
}

// peak returns sr's largest value (0 if none), of every row when it was
// read thinned.
func (sr series) peak() float64 {
	if sr.from != nil {
		return sr.from.peaks[sr.at]
	}
	top := 0.0
	for _, y := range sr.ys {
		top = peakOf(top, y)
	}
	return top
}

// coincides reports whether sr and o are drawn one over the other: every
// point within tol of the other's, gaps in the same places (over every
// row, for series read thinned).
func (sr series) coincides(o series, tol float64) bool {
	if sr.from != nil && sr.from == o.from {
		if len(sr.ys) == 0 || len(o.ys) == 0 {
			return false
		}
		k, j := max(sr.at, o.at), min(sr.at, o.at)
		return k != j && sr.from.apart[k][j] <= tol
	}
	return coincide(sr.ys, o.ys, tol)
}

// scaleGap is the ratio of two series' peaks beyond which the smaller is
// drawn in a panel of its own, where it is not flattened to the axis.
const scaleGap = 10

// timePanels draws series against x in one panel, or in two when some
// peak more than scaleGap times below the largest: the large series on
// top, the small ones below, each panel with the same title, the warm-up
// band and room for its legend. Colours follow the series' order.
func timePanels(r *metrics.Results, x []float64, title, ylabel string, all []series) []*plot.Plot {
	top := 0.0
	for _, s := range all {
		top = math.Max(top, s.peak())
	}
	var big, small []int
	for i, s := range all {
		if s.peak()*scaleGap < top {
			small = append(small, i)
		} else {
			big = append(big, i)
		}
	}
	groups := [][]int{big}
	if len(small) > 0 {
		groups = append(groups, small)
	}
	var ps []*plot.Plot
	for g, idx := range groups {
		t := title
		if len(groups) > 1 {
			t = title + [2]string{" (large)", " (small: own scale)"}[g]
		}
		p := newPlot(t, "time (s)", ylabel)
		addTimeBands(p, r)
		top := 0.0
		for _, i := range idx {
			top = math.Max(top, all[i].peak())
		}
		shown := unhide(all, top)
		for _, i := range idx {
			drawLine(p, x, shown[i], i)
		}
		legendRoom(p, len(idx))
		ps = append(ps, p)
	}
	return ps
}

// named is a chart line to read: its column and its legend.
type named struct {
	column
	name   string
	dashed bool
}

// panels reads the lines ls from s and draws them as timePanels.
func panels(r *metrics.Results, s *metrics.Series, title, ylabel string, ls []named) ([]*plot.Plot, []series) {
	cs := make([]column, len(ls))
	for k, l := range ls {
		cs[k] = l.column
	}
	lines := readLines(r, s, cs...)
	all := make([]series, len(ls))
	for k, l := range ls {
		all[k] = lines.line(k, l.name, l.dashed)
	}
	return timePanels(r, lines.x, title, ylabel, all), all
}

func waitingPanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	var ls []named
	for _, l := range r.Limiters {
		if anyValue(s, l.Name+".waiting", false) {
			ls = append(ls, named{plain(l.Name + ".waiting"), l.Name, false})
		}
	}
	if r.Queue.Kind == "queue" {
		if anyValue(s, "queue_depth", false) {
			ls = append(ls, named{plain("queue_depth"), "ingest queue", true})
		}
		if anyValue(s, "blocked_producers", false) {
			ls = append(ls, named{plain("blocked_producers"), "blocked producers", true})
		}
	}
	if len(ls) == 0 {
		return nil, "nothing ever waited"
	}
	ps, _ := panels(r, s, "Waiting lines", "requests waiting (time average)", ls)
	return ps, ""
}

func inFlightPanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	if !anyValue(s, "in_flight", false) {
		return nil, "no request reached an upstream"
	}
	ps, _ := panels(r, s, "Requests in flight and in the system", "requests (time average)",
		[]named{{plain("in_flight"), "in flight (upstream)", false}, {plain("in_system"), "in the system", true}})
	return ps, ""
}

func adaptivePanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	var ls []named
	for _, l := range r.Limiters {
		if s.Index(l.Name+".limit") >= 0 {
			ls = append(ls, named{plain(l.Name + ".limit"), l.Name + " limit", false})
		}
	}
	if len(ls) == 0 {
		return nil, "" // does not apply: not listed as left out
	}
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	ls = append(ls, named{rate(r, "starts"), "started", true}, named{rate(r, "responses_429"), "429s", true})
	ps, _ := panels(r, s, "Adaptive limits over time", "requests per second", ls)
	return ps, ""
}

func percentilePanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	var ls []named
	for _, q := range []string{"p50", "p95", "p99"} {
		if c := "request_" + q + "_s"; anyValue(s, c, true) {
			ls = append(ls, named{plain(c), "request " + q, false})
		}
	}
	for _, l := range r.Limiters {
		if c := l.Name + ".wait_p99_s"; anyValue(s, c, true) {
			ls = append(ls, named{plain(c), l.Name + " wait p99", true})
		}
	}
	if len(ls) == 0 {
		return nil, "no request succeeded and nothing waited"
	}
	ps, _ := panels(r, s, "Request time and waits over time", "seconds", ls)
	return ps, ""
}

func throughputPanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	ps, all := panels(r, s, "Throughput", "requests per second", []named{
		{rate(r, "arrivals"), "offered", true}, {rate(r, "starts"), "started", false}, {rate(r, "succeeded"), "succeeded", false}})
	markDeadlock(ps[0], r, s)
	// The configured limits and the quota, on the panel of the large
	// series, when they are on its scale (not ten times above its peak).
	top := 0.0
	for _, sr := range all {
		top = math.Max(top, sr.peak())
	}
	for _, h := range rateLines(r) {
		if h.y <= scaleGap*top {
			ps[0].Add(h)
		}
	}
	return ps, ""
}

// pairedBars draws two series of bars side by side per category, with room
// above them for the legend.
func pairedBars(p *plot.Plot, names []string, a, b plotter.Values, la, lb string, ca, cb int) string {
	w := vg.Points(34)
	top := 0.0
	for i := range a {
		top = math.Max(top, math.Max(a[i], b[i]))
	}
	ba, err := plotter.NewBarChart(a, w)
	if err != nil {
		return err.Error()
	}
	bb, err := plotter.NewBarChart(b, w)
	if err != nil {
		return err.Error()
	}
	ba.Color, bb.Color = colour(ca), colour(cb)
	ba.LineStyle.Width, bb.LineStyle.Width = 0, 0
	ba.Offset, bb.Offset = -w/2, w/2
	p.Add(ba, bb)
	p.Legend.Add(la, ba)
	p.Legend.Add(lb, bb)
	if top > 0 {
		p.Y.Max = 1.25 * top // room for the legend
	}
	p.NominalX(names...)
	barRoom(p, len(names))
	return ""
}

// barRoom widens a bar chart's category axis by half a category on each
// side so that the first and last bars sit inside the frame, not cut by
// it, and lifts its top off the highest bar.
func barRoom(p *plot.Plot, categories int) {
	p.X.Min, p.X.Max = -0.6, float64(categories-1)+0.6
	if p.Y.Max > 0 && !math.IsInf(p.Y.Max, 0) {
		p.Y.Max = math.Max(p.Y.Max, 0) * 1.08
	}
}

func tenantWaitChart(r *metrics.Results, _ *metrics.Series) (*plot.Plot, string) {
	if len(r.Tenants) < 2 {
		return nil, "" // does not apply
	}
	p := newPlot("Wait p99 by tenant", "", "p99 wait on limiters (s)")
	shown, omitted := worstTenants(r.Tenants, maxTenantRows, byWait)
	if omitted > 0 {
		p.Title.Text = fmt.Sprintf("Wait p99: the %d longest of %s tenants", len(shown), Grouped(int64(len(r.Tenants))))
	}
	var v plotter.Values
	var names []string
	for _, t := range shown {
		v = append(v, t.WaitS.P99)
		names = append(names, t.Name)
	}
	if allZero(v) {
		return nil, "no tenant waited"
	}
	bc, err := plotter.NewBarChart(v, vg.Points(28))
	if err != nil {
		return nil, err.Error()
	}
	bc.Color = colour(0)
	bc.LineStyle.Width = 0
	p.Add(bc)
	p.NominalX(names...)
	barRoom(p, len(names))
	return p, ""
}

func tenantShareChart(r *metrics.Results, _ *metrics.Series) (*plot.Plot, string) {
	if len(r.Tenants) < 2 {
		return nil, "" // does not apply
	}
	var total int64
	for _, t := range r.Tenants {
		total += t.Arrived
	}
	p := newPlot("Share by tenant: offered against admitted", "", "share (%)")
	shown, omitted := worstTenants(r.Tenants, maxTenantRows, byUnderServed)
	if omitted > 0 {
		p.Title.Text = fmt.Sprintf("Share: the %d most under-served of %s tenants", len(shown), Grouped(int64(len(r.Tenants))))
	}
	var off, adm plotter.Values
	var names []string
	for _, t := range shown {
		off = append(off, 100*metrics.Ratio(float64(t.Arrived), float64(total)))
		adm = append(adm, 100*t.Share)
		names = append(names, t.Name)
	}
	if reason := pairedBars(p, names, off, adm, "share of arrivals", "share of successes", 4, 0); reason != "" {
		return nil, reason
	}
	return p, ""
}

// maxEntityLines is how many tenants or hosts a per-entity time chart
// draws one by one; the others are drawn together as one line.
const maxEntityLines = 7

// entitySeries is a rate per entity over time from the columns
// NAME+suffix (counts per interval): the maxEntityLines entities with the
// largest totals of NAME+rankBy (the figure that matters: a tenant's
// arrivals, so that a starved one is not folded away), largest first, then
// the others summed as one line. Entities without the column are skipped;
// nil with fewer than two.
func entitySeries(r *metrics.Results, s *metrics.Series, names []string, suffix, rankBy string) []named {
	type entity struct {
		name  string
		total float64
	}
	var es []entity
	var ranks []int // the rankBy columns of es, in es's order; -1 for none
	for _, n := range names {
		if s.Index(n+suffix) < 0 {
			continue
		}
		es = append(es, entity{name: n})
		ranks = append(ranks, s.Index(n+rankBy))
	}
	var cols []int
	for _, c := range ranks {
		if c >= 0 {
			cols = append(cols, c)
		}
	}
	if len(cols) > 0 {
		s.Scan(0, cols, func(_ int, v []float64) bool { // every total in one pass
			k := 0
			for j, c := range ranks {
				if c >= 0 {
					es[j].total += v[k]
					k++
				}
			}
			return true
		})
	}
	if len(es) < 2 {
		return nil
	}
	slices.SortStableFunc(es, func(a, b entity) int { return cmp.Compare(b.total, a.total) })
	var ls []named
	for _, e := range es[:min(len(es), maxEntityLines+1)] {
		ls = append(ls, named{rate(r, e.name+suffix), e.name, false})
	}
	if len(es) > maxEntityLines+1 {
		var cols []string
		for _, e := range es[maxEntityLines:] {
			cols = append(cols, e.name+suffix)
		}
		rest := column{cols, func(v []float64) float64 {
			var sum float64
			for _, c := range v {
				sum += c / r.IntervalS
			}
			return sum
		}}
		ls = append(ls[:maxEntityLines], named{rest, fmt.Sprintf("the other %d", len(es)-maxEntityLines), false})
	}
	return ls
}

// entityPanels draws entitySeries as time panels; nil when there are
// fewer than two entities with columns.
func entityPanels(r *metrics.Results, s *metrics.Series, names []string, suffix, rankBy, title, ylabel string) []*plot.Plot {
	ls := entitySeries(r, s, names, suffix, rankBy)
	if ls == nil {
		return nil
	}
	ps, _ := panels(r, s, title, ylabel, ls)
	return ps
}

func tenantThroughputPanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	if len(r.Tenants) < 2 {
		return nil, "" // does not apply
	}
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	names := make([]string, len(r.Tenants))
	for i, t := range r.Tenants {
		names[i] = t.Name
	}
	ps := entityPanels(r, s, names, ".succeeded", ".arrivals", "Successful requests per second, by tenant", "requests per second")
	if ps == nil {
		return nil, fmt.Sprintf("over %d tenants: each one's totals are in tenants.csv", metrics.MaxListed)
	}
	return ps, ""
}

func hostThroughputPanels(r *metrics.Results, s *metrics.Series) ([]*plot.Plot, string) {
	if len(r.Upstreams) < 2 {
		return nil, "" // does not apply
	}
	if s.Len() < 2 {
		return nil, "the run is shorter than two intervals"
	}
	var names []string
	for _, u := range r.Upstreams {
		names = append(names, u.Host)
	}
	ps := entityPanels(r, s, names, ".starts", ".starts", "Attempts started per second, by host", "attempts per second")
	if ps == nil {
		return nil, "no host has its own columns in the series"
	}
	return ps, ""
}

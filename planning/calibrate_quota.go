package planning

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/upstream"
)

// quotaWindows are the fixed windows a calibration tries, each aligned to
// the Unix epoch as servers align them (a minute's window starts at :00).
var quotaWindows = []time.Duration{time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second,
	30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour}

// minSaturatedWindows is the fewest windows with a refusal a fixed-window
// candidate needs to be judged.
const minSaturatedWindows = 3

// minQuotaScore is the least agreement a quota needs to be called
// explained: below it the inference says no candidate explains the
// refusals.
const minQuotaScore = 0.8

// QuotaCandidate is one quota a calibration tried, and how well it
// explains the log: Score is the agreement of the refusals it predicts
// (running the quota on the log's arrivals) with those the log shows,
// second by second: Σ min(predicted, logged) ÷ Σ max(predicted, logged),
// 1 when it predicts as many refusals as the log shows in every second.
type QuotaCandidate struct {
	QuotaShape
	Score float64 `json:"score"`
	// Predicted is the refusals the candidate predicts, and Matched the
	// least of them and the log's, summed over the seconds.
	Predicted int64 `json:"predicted_refusals"`
	Matched   int64 `json:"matched_refusals"`
	// Saturated is, for a fixed window, the windows with a refusal, and
	// AtLimit the share of them that admitted exactly Limit; for a
	// sliding window, the refusals, and the share of them whose window
	// (the window's length up to the refusal) held exactly Limit; for a
	// concurrency limit, the refusals, and the share of them that found
	// exactly Limit in service.
	Saturated int64   `json:"saturated_windows,omitempty"`
	AtLimit   float64 `json:"at_limit_share,omitempty"`
	// LatePhase is, for a fixed window, the mean position of the refusals
	// within their windows (0 at the start, 1 at the end): a fixed
	// window's refusals come late, after its limit is spent.
	LatePhase float64 `json:"refusal_phase,omitempty"`
}

// QuotaShape is a quota as a calibration describes it: its kind, what it
// counts, and the window and limit of a window, the rate and burst of a
// token bucket, or the permits (Limit) of a concurrency limit.
type QuotaShape struct {
	// Kind is fixed_window, sliding_window, token_bucket or concurrency;
	// in an inference, "" when none is inferred (no refusals, or none
	// explained).
	Kind string `json:"kind"`
	// Unit is "cost" for a quota that counts each request's logged cost
	// rather than requests ("").
	Unit   string  `json:"unit,omitempty"`
	Window string  `json:"window,omitempty"`
	Limit  int64   `json:"limit,omitempty"`
	Rate   float64 `json:"rate,omitempty"`
	Burst  float64 `json:"burst,omitempty"`
}

// QuotaInference is the server quota a calibration infers for one host.
type QuotaInference struct {
	QuotaShape
	Status int `json:"status,omitempty"`
	// Reason says why, in a sentence.
	Reason string `json:"reason"`
	// PeakPerSecond and PeakPerMinute are the most requests admitted in
	// one second and in one minute (epoch-aligned): with no refusals, the
	// quota is at least that.
	PeakPerSecond int64 `json:"peak_admitted_per_s"`
	PeakPerMinute int64 `json:"peak_admitted_per_min"`
	// tried names the kinds of candidate tried ("fixed window, sliding
	// window or token bucket"), and notTried, when the concurrency limit
	// was not, why ("; a concurrency limit was not tried: …").
	tried, notTried string
	// Headers is what the rate-limit headers said, when logged.
	Headers    *HeaderEvidence  `json:"headers,omitempty"`
	Candidates []QuotaCandidate `json:"candidates,omitempty"`
	window     time.Duration
}

// HeaderEvidence is what a log's rate-limit headers say of a quota.
type HeaderEvidence struct {
	// RemainingMax is the most remaining the header showed: a fixed
	// window's limit, or a bucket's burst, less the request itself.
	RemainingMax int64 `json:"remaining_max"`
	// ResetAligned is the share of the reset headers (instant plus reset)
	// that point to a boundary of the inferred window (to the second),
	// for a fixed window: 1 when every reset names a window's end.
	ResetAligned *float64 `json:"reset_aligned_share,omitempty"`
	Records      int64    `json:"records"`
}

// quotaTrace is one host's requests as a quota saw them: their Unix
// instants (ns, in order), which were refused, their costs (nil when the
// log has none) and the headers logged.
type quotaTrace struct {
	times     []int64
	refused   []bool
	costs     []int64
	remaining int64 // the most remaining logged; -1: none
	resets    []int64
	headers   int64
	status    int
	// ends are the requests' Unix instants of answer (the instant plus
	// the latency logged; 0 for a refusal), nil once an answer lacks a
	// latency: a concurrency limit's evidence.
	ends    []int64
	endless bool // an answer had no latency: ends is nil
	coarse  bool // times logged to the second or coarser: ends is nil
}

// inferQuota chooses the quota that explains the trace's refusals best
// (see QuotaInference).
func inferQuota(tr *quotaTrace) QuotaInference {
	q := QuotaInference{Status: tr.status}
	q.PeakPerSecond, q.PeakPerMinute = peakAdmitted(tr, time.Second), peakAdmitted(tr, time.Minute)
	if tr.remaining >= 0 {
		q.Headers = &HeaderEvidence{RemainingMax: tr.remaining, Records: tr.headers}
	}
	refusals := countTrue(tr.refused)
	if refusals == 0 {
		q.Status = 0
		q.Reason = fmt.Sprintf("no 429s: the quota is at least %d/s (%d/min) observed", q.PeakPerSecond, q.PeakPerMinute)
		return q
	}
	q.Candidates = quotaCandidates(tr)
	q.tried, q.notTried = triedKinds(q.Candidates), tr.whyNoConcurrency()
	best := bestCandidate(q.Candidates)
	if best < 0 || q.Candidates[best].Score < minQuotaScore {
		score := 0.0
		if best >= 0 {
			score = q.Candidates[best].Score
		}
		q.Reason = fmt.Sprintf("%d refusals, but no %s explains them (best agreement %.2f < %g): they follow something else (load, another key, a limit of another shape)%s",
			refusals, q.tried, score, minQuotaScore, q.notTried)
		if best < 0 {
			return q
		}
	}
	c := q.Candidates[best]
	q.QuotaShape = c.QuotaShape
	if c.Kind == kindname.QuotaFixedWindow {
		q.window, _ = time.ParseDuration(c.Window)
		if q.Headers != nil && len(tr.resets) > 0 {
			share := alignedShare(tr.resets, q.window)
			q.Headers.ResetAligned = &share
		}
	}
	if q.Reason == "" {
		q.Reason = quotaReason(c, refusals)
	}
	return q
}

// quotaCandidates are the candidates tried on the trace, in order: the
// fixed windows, the sliding windows, the token bucket and the
// concurrency limit counting requests, then, when costs are logged, the
// fixed windows and the token bucket counting cost (a tie goes to the
// first: a log whose costs are all 1 is explained by requests; a
// concurrency limit wins only by concurrencyMargin).
func quotaCandidates(tr *quotaTrace) []QuotaCandidate {
	var out []QuotaCandidate
	units := []bool{false}
	if tr.costs != nil {
		units = append(units, true)
	}
	for _, byCost := range units {
		for _, w := range quotaWindows {
			if c, ok := fixedWindowCandidate(tr, w, byCost); ok {
				out = append(out, c)
			}
		}
		for _, w := range quotaWindows {
			if byCost { // a sliding window counts requests only
				break
			}
			if c, ok := slidingWindowCandidate(tr, w); ok {
				out = append(out, c)
			}
		}
		// A window that explains every refusal is not beaten by a bucket
		// (a tie goes to the first): the bucket's search is spared.
		perfect := slices.ContainsFunc(out, func(c QuotaCandidate) bool { return c.Score >= 1 })
		if c, ok := tokenBucketCandidate(tr, byCost, !perfect); ok {
			out = append(out, c)
		}
		if byCost {
			continue // a concurrency limit counts requests
		}
		if c, ok := concurrencyCandidate(tr); ok {
			out = append(out, c)
		}
	}
	return out
}

// unitOf is a candidate's Unit: "cost" when it counts cost.
func unitOf(byCost bool) string {
	if byCost {
		return upstream.UnitCost
	}
	return ""
}

// weight is what request i takes from a quota: its cost when the quota
// counts cost, else 1.
func (tr *quotaTrace) weight(i int, byCost bool) int64 {
	if byCost {
		return tr.costs[i]
	}
	return 1
}

// largestAdmitted is the most one admitted request took (1 counting
// requests): a bucket holds at least that.
func (tr *quotaTrace) largestAdmitted(byCost bool) int64 {
	most := int64(1)
	for i := range tr.times {
		if !tr.refused[i] {
			most = max(most, tr.weight(i, byCost))
		}
	}
	return most
}

// quotaReason says why candidate c was chosen.
func quotaReason(c QuotaCandidate, refusals int64) string {
	units := ""
	if c.Unit == upstream.UnitCost {
		units = " units of cost"
	}
	if c.Kind == kindname.QuotaFixedWindow {
		// A fixed window refuses once its limit is spent, late in it; a
		// log timed more coarsely than the window puts every refusal at
		// its start, and the text must not claim what it cannot show.
		when := "refused late in the window"
		if c.LatePhase < 0.5 {
			when = "refused early in the window, not late as a fixed window refuses (times logged more coarsely than the window?)"
		}
		return fmt.Sprintf("%d of %d refusals predicted (agreement %.2f): %.0f%% of the %d windows of %s with a refusal admitted exactly %d%s, %s (mean position %.2f)",
			c.Matched, refusals, c.Score, 100*c.AtLimit, c.Saturated, c.Window, c.Limit, units, when, c.LatePhase)
	}
	if c.Kind == kindname.QuotaSlidingWindow {
		return fmt.Sprintf("%d of %d refusals predicted (agreement %.2f): at %.0f%% of the refusals the %s before had admitted exactly %d",
			c.Matched, refusals, c.Score, 100*c.AtLimit, c.Window, c.Limit)
	}
	if c.Kind == kindname.QuotaConcurrency {
		return fmt.Sprintf("%d of %d refusals predicted (agreement %.2f): at %.0f%% of the refusals exactly %d answers were still due (from the instants and latencies logged)",
			c.Matched, refusals, c.Score, 100*c.AtLimit, c.Limit)
	}
	return fmt.Sprintf("%d of %d refusals predicted (agreement %.2f): a bucket refilling at %s%s/s explains them best, admitting at most %s more after a quiet spell",
		c.Matched, refusals, c.Score, report.Number(c.Rate, 4), units, report.Number(math.Round(c.Burst), 4))
}

// fixedWindowCandidate fits a fixed window of w, aligned to the epoch,
// counting requests or (byCost) their costs: its limit is the most any
// window with a refusal admitted.
func fixedWindowCandidate(tr *quotaTrace, w time.Duration, byCost bool) (QuotaCandidate, bool) {
	c := QuotaCandidate{QuotaShape: QuotaShape{Kind: kindname.QuotaFixedWindow, Unit: unitOf(byCost), Window: w.String()}}
	var counts []int64 // admitted in each saturated window
	var phase float64
	var refusals int64
	win, admitted, saturated := int64(math.MinInt64), int64(0), false
	flush := func() {
		if saturated {
			counts = append(counts, admitted)
		}
	}
	for i, t := range tr.times {
		if k := floorDiv(t, int64(w)); k != win {
			flush()
			win, admitted, saturated = k, 0, false
		}
		if tr.refused[i] {
			saturated = true
			refusals++
			phase += float64(t-win*int64(w)) / float64(w)
		} else {
			admitted += tr.weight(i, byCost)
		}
	}
	flush()
	if len(counts) < minSaturatedWindows {
		return c, false
	}
	for _, n := range counts {
		c.Limit = max(c.Limit, n)
	}
	if c.Limit == 0 {
		return c, false
	}
	var at int64
	for _, n := range counts {
		if n == c.Limit {
			at++
		}
	}
	c.Saturated, c.AtLimit, c.LatePhase = int64(len(counts)), float64(at)/float64(len(counts)), phase/float64(refusals)
	c.Predicted, c.Matched = scoreRefusals(tr, fixedWindowJudge(w, c.Limit), byCost)
	c.Score = jaccard(c.Predicted, c.Matched, refusals)
	return c, true
}

// slidingWindowCandidate fits a sliding window of w (never more than
// limit admitted in any w): its limit is the most admitted in the w up
// to a refusal, where a sliding window is full.
func slidingWindowCandidate(tr *quotaTrace, w time.Duration) (QuotaCandidate, bool) {
	c := QuotaCandidate{QuotaShape: QuotaShape{Kind: kindname.QuotaSlidingWindow, Window: w.String()}}
	var admitted []int64 // the admissions' instants, from head on within w
	var counts []int64   // admitted in the w up to each refusal
	head := 0
	for i, t := range tr.times {
		for head < len(admitted) && t-admitted[head] >= int64(w) {
			head++
		}
		if tr.refused[i] {
			counts = append(counts, int64(len(admitted)-head))
			continue
		}
		if head > len(admitted)/2 { // keep the slice to what is within w
			admitted = append(admitted[:0], admitted[head:]...)
			head = 0
		}
		admitted = append(admitted, t)
	}
	if len(counts) < minSaturatedWindows {
		return c, false
	}
	for _, n := range counts {
		c.Limit = max(c.Limit, n)
	}
	if c.Limit == 0 || c.Limit > models.MaxExactLog {
		return c, false
	}
	var at int64
	for _, n := range counts {
		if n == c.Limit {
			at++
		}
	}
	c.Saturated, c.AtLimit = int64(len(counts)), float64(at)/float64(len(counts))
	c.Predicted, c.Matched = scoreRefusals(tr, slidingWindowJudge(w, c.Limit), false)
	c.Score = jaccard(c.Predicted, c.Matched, int64(len(counts)))
	return c, true
}

// quotaJudge admits (true) or refuses a request at a Unix instant that
// takes units (1, or its cost) from the quota.
type quotaJudge func(t, units int64) bool

func fixedWindowJudge(w time.Duration, limit int64) quotaJudge {
	win, n := int64(math.MinInt64), int64(0)
	return func(t, units int64) bool {
		if k := floorDiv(t, int64(w)); k != win {
			win, n = k, 0
		}
		if n+units <= limit {
			n += units
			return true
		}
		return false
	}
}

func slidingWindowJudge(w time.Duration, limit int64) quotaJudge {
	var admitted []int64
	head := 0
	return func(t, _ int64) bool {
		for head < len(admitted) && t-admitted[head] >= int64(w) {
			head++
		}
		if int64(len(admitted)-head) >= limit {
			return false
		}
		if head > len(admitted)/2 {
			admitted = append(admitted[:0], admitted[head:]...)
			head = 0
		}
		admitted = append(admitted, t)
		return true
	}
}

// scoreRefusals runs j on the trace's requests and returns the refusals
// it predicts and how many of them the log matches, second by second:
// the least of the predicted and the logged refusals of each second,
// summed (which requests of a second a quota refuses depends on instants
// no log keeps to the nanosecond).
func scoreRefusals(tr *quotaTrace, j quotaJudge, byCost bool) (predicted, matched int64) {
	var pred, obs int64
	second := int64(math.MinInt64)
	for i, t := range tr.times {
		if s := floorDiv(t, int64(time.Second)); s != second {
			matched += min(pred, obs)
			second, pred, obs = s, 0, 0
		}
		if !j(t, tr.weight(i, byCost)) {
			predicted++
			pred++
		}
		if tr.refused[i] {
			obs++
		}
	}
	return predicted, matched + min(pred, obs)
}

// jaccard is matched ÷ (predicted + observed − matched).
func jaccard(predicted, matched, observed int64) float64 {
	union := predicted + observed - matched
	if union == 0 {
		return 1
	}
	return float64(matched) / float64(union)
}

// peakAdmitted is the most admissions in one epoch-aligned window of w.
func peakAdmitted(tr *quotaTrace, w time.Duration) int64 {
	var peak, n int64
	win := int64(math.MinInt64)
	for i, t := range tr.times {
		if tr.refused[i] {
			continue
		}
		if k := floorDiv(t, int64(w)); k != win {
			win, n = k, 0
		}
		n++
		peak = max(peak, n)
	}
	return peak
}

// alignedShare is the share of instants within a second of a multiple
// of w.
func alignedShare(instants []int64, w time.Duration) float64 {
	var n int
	for _, at := range instants {
		off := at - floorDiv(at, int64(w))*int64(w)
		if off <= int64(time.Second) || int64(w)-off <= int64(time.Second) {
			n++
		}
	}
	return float64(n) / float64(len(instants))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func countTrue(bs []bool) int64 {
	var n int64
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// roundSignificant rounds x to n significant digits.
func roundSignificant(x float64, n int) float64 {
	if x == 0 {
		return 0
	}
	p := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

package planning

import (
	"container/heap"
	"slices"
	"strings"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/logs"
)

// addEnd records when the request rec was answered, for the concurrency
// candidate: its instant plus its latency, 0 for a refusal; an answer
// without a latency ends the record.
func (tr *quotaTrace) addEnd(rec *logs.Record, refused bool) {
	if tr.endless {
		return
	}
	switch {
	case refused:
		tr.ends = append(tr.ends, 0)
	case rec.HasLatency && rec.Latency >= 0:
		tr.ends = append(tr.ends, rec.Time+int64(rec.Latency))
	default:
		tr.endless, tr.ends = true, nil
	}
}

// dueHeap is the answer instants of the requests in service, earliest
// first.
type dueHeap []int64

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// inService returns how many of the answers due in h are still due at
// t, dropping those due by then.
func (h *dueHeap) inService(t int64) int {
	for h.Len() > 0 && (*h)[0] <= t {
		heap.Pop(h)
	}
	return h.Len()
}

// concurrencyCandidate fits a limit of requests in service at once, from
// the instants and latencies logged (times logged to the second are too
// coarse: the caller drops ends then): its permits are what most
// refusals found in service. It is judged by
// running it on the log's arrivals, each request it admits in service
// for the latency the log gives it (a refused one, the answers' median).
func concurrencyCandidate(tr *quotaTrace) (QuotaCandidate, bool) {
	if len(tr.ends) != len(tr.times) {
		return QuotaCandidate{}, false
	}
	var due dueHeap
	atRefusal := map[int64]int64{} // requests in service → refusals that found them
	var refusals int64
	var latencies []int64
	for i, t := range tr.times {
		n := int64(due.inService(t))
		if tr.refused[i] {
			atRefusal[n]++
			refusals++
			continue
		}
		heap.Push(&due, tr.ends[i])
		latencies = append(latencies, tr.ends[i]-t)
	}
	if refusals == 0 || len(latencies) == 0 {
		return QuotaCandidate{}, false
	}
	// The permits are what most refusals found in service: a latency
	// logged rounded up makes an answer seem due a little longer, and the
	// most in service at an admission one more than the limit.
	permits, most := int64(0), int64(0)
	for n, k := range atRefusal {
		if n > 0 && (k > most || k == most && n < permits) {
			permits, most = n, k
		}
	}
	if permits == 0 {
		return QuotaCandidate{}, false // refused with nothing in service: no concurrency limit
	}
	slices.Sort(latencies)
	median := latencies[len(latencies)/2]
	c := QuotaCandidate{QuotaShape: QuotaShape{Kind: kindname.QuotaConcurrency, Limit: permits}, Saturated: refusals}
	c.AtLimit = float64(most) / float64(refusals)
	c.Predicted, c.Matched = scoreRefusals(tr, concurrencyJudge(tr, permits, median), false)
	c.Score = jaccard(c.Predicted, c.Matched, refusals)
	return c, true
}

// concurrencyJudge admits a request while fewer than permits are in
// service. It is called once a request in the trace's order (as
// scoreRefusals calls it): the i-th call is request i, whose answer is
// due at its logged end, or median after it when the log refused it.
func concurrencyJudge(tr *quotaTrace, permits, median int64) quotaJudge {
	var due dueHeap
	i := 0
	return func(t, _ int64) bool {
		end := tr.ends[i]
		if tr.refused[i] {
			end = t + median
		}
		i++
		if int64(due.inService(t)) >= permits {
			return false
		}
		heap.Push(&due, end)
		return true
	}
}

// concurrencyMargin is how much better than every rate candidate a
// concurrency limit must agree to be chosen: on a log of one load, a
// bucket whose admissions keep a steady number in service (10/s of
// 200 ms answers: 2) explains the refusals as well, and the two part at
// another load.
const concurrencyMargin = 0.05

// bestCandidate is the index of the candidate that agrees best (the
// first of a tie), a concurrency limit only by concurrencyMargin over
// the rest; -1 when there is none.
func bestCandidate(cs []QuotaCandidate) int {
	best, concurrency := -1, -1
	for i, c := range cs {
		switch {
		case c.Kind == kindname.QuotaConcurrency:
			concurrency = i
		case best < 0 || c.Score > cs[best].Score+1e-9:
			best = i
		}
	}
	if concurrency >= 0 && (best < 0 || cs[concurrency].Score > cs[best].Score+concurrencyMargin) {
		return concurrency
	}
	return best
}

// triedKinds names the kinds among cs: "fixed window, sliding window,
// token bucket or concurrency limit".
func triedKinds(cs []QuotaCandidate) string {
	names := map[string]string{kindname.QuotaFixedWindow: "fixed window", kindname.QuotaSlidingWindow: "sliding window",
		kindname.QuotaTokenBucket: "token bucket", kindname.QuotaConcurrency: "concurrency limit"}
	var kinds []string
	for _, k := range []string{kindname.QuotaFixedWindow, kindname.QuotaSlidingWindow, kindname.QuotaTokenBucket, kindname.QuotaConcurrency} {
		if slices.ContainsFunc(cs, func(c QuotaCandidate) bool { return c.Kind == k }) {
			kinds = append(kinds, names[k])
		}
	}
	switch len(kinds) {
	case 0:
		return "quota"
	case 1:
		return kinds[0]
	}
	return strings.Join(kinds[:len(kinds)-1], ", ") + " or " + kinds[len(kinds)-1]
}

// whyNoConcurrency says why the concurrency limit was not tried ("" when
// it was, or when refusals do not ask for it).
func (tr *quotaTrace) whyNoConcurrency() string {
	switch {
	case tr.coarse:
		return "; a concurrency limit was not tried: times logged to the second say nothing of what was in service"
	case tr.endless:
		return "; a concurrency limit was not tried: an answer has no latency logged"
	}
	return ""
}

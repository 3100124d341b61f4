package client

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/limitsim/limitsim/sim"
)

// limiterParker reports one named limiter's waiters to the engine.
type limiterParker struct {
	p    *pipeline
	li   int
	name string
}

func (l *limiterParker) Name() string { return "limiter " + l.name }
func (l *limiterParker) Parked() int  { return l.p.waiting(l.li) }

// waiting counts the waiters of limiter li over its scopes and instances.
func (p *pipeline) waiting(li int) int {
	n := 0
	for _, in := range p.instances {
		for _, lim := range in.limiters[li] {
			n += lim.Waiting()
		}
	}
	return n
}

type queueParker struct{ p *pipeline }

func (q *queueParker) Name() string { return "ingest queue" }
func (q *queueParker) Parked() int {
	n := 0
	for _, in := range q.p.instances {
		if in.queue != nil {
			n += in.queue.Waiting() + in.queue.BlockedProducers()
		}
	}
	return n
}

// explainStall builds the wait-for graph of the parked requests: a request
// holding limiter A while parked on B makes an edge A → B.
func (p *pipeline) explainStall(s *sim.StallError) {
	var g sim.WaitGraph
	names, _ := p.cfg.pathLimiters()
	holders := map[string]int{}
	p.requests.Each(func(_ uint32, r *request) {
		if r.phase != phAcquiring || r.lim < 0 {
			return
		}
		want := p.cfg.Limiters[r.lim].Name
		for li, l := range p.cfg.Limiters {
			if r.held&heldBit(li) != 0 {
				label := "path " + names[min(int(r.path), len(names)-1)]
				g.Add(l.Name, want, label)
				holders[l.Name+" → "+want]++
			}
		}
	})
	s.Cycle = g.Cycle()
	if len(s.Cycle) > 0 {
		var parts []string
		for k := 0; k+1 < len(s.Cycle); k++ {
			e := s.Cycle[k] + " → " + s.Cycle[k+1]
			parts = append(parts, fmt.Sprintf("%d requests hold %s and wait for %s (%s)", holders[e], s.Cycle[k], s.Cycle[k+1], strings.Join(g.Labels(s.Cycle[k], s.Cycle[k+1]), ", ")))
		}
		sort.Strings(parts)
		s.Detail = strings.Join(parts, "; ") + ". Fix: acquire in one global order: rate, then broad, then narrow"
	}
}

// liveGuard explains a run stopped for holding too many live requests: the
// article's memory failure, an unbounded waiting line under overload.
func (p *pipeline) liveGuard(now time.Duration) *sim.GuardError {
	where := ""
	most := 0
	for li, l := range p.cfg.Limiters {
		n := p.waiting(li)
		if n > most {
			most, where = n, fmt.Sprintf("; %d of them wait on limiter %s", n, l.Name)
		}
	}
	var queued int
	for _, in := range p.instances {
		if in.queue != nil {
			queued += in.queue.Waiting() + in.queue.BlockedProducers()
		}
	}
	if queued > most {
		where = fmt.Sprintf("; %d of them wait in the ingest queue", queued)
	}
	secs := max(now.Seconds(), 1e-9)
	done := float64(int64(p.arrived)-p.inSystem) / secs
	return &sim.GuardError{Guard: "max_live_requests", Limit: uint64(p.cfg.Run.MaxLiveRequests), At: now,
		Detail: fmt.Sprintf("%d requests alive: arrivals (%.4g/s) outpace completions (%.4g/s)%s. An unbounded waiting line turns a rate problem into a memory problem: bound the ingest queue or add an acquisition timeout", p.inSystem, float64(p.arrived)/secs, done, where)}
}

package planning

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/sim"
	"github.com/limitsim/limitsim/sim/client"
)

// recordFeed feeds a log's records to the client as recorded arrivals,
// one at a time, and each to the tally as production saw it. It holds at
// most one second's records: those logged to the second, while their
// instants within it are drawn.
type recordFeed struct {
	reader           *logs.Reader
	survey           *logSurvey
	hostOf, tenantOf map[string]int
	latency          LatencySource
	costLogged       bool // the log maps a cost field
	tally            *tally
	spread           *spreader
	second           []client.RecordedArrival // the current second's arrivals, spread, in order
	next             int                      // the next of second to return
	group            []logs.Record            // the current second's records
	ahead            logs.Record              // a record read ahead (ok: aheadOK)
	aheadOK          bool
	last             time.Duration
	modelLatencies   int64
	err              error
}

// Next returns the next arrival.
func (f *recordFeed) Next() (client.RecordedArrival, bool) {
	if f.next == len(f.second) && !f.fill() {
		return client.RecordedArrival{}, false
	}
	a := f.second[f.next]
	f.next++
	a.At = max(a.At, f.last) // a finer-logged record inside a spread second
	f.last = a.At
	return a, true
}

// read returns the next record, the one read ahead first.
func (f *recordFeed) read() (logs.Record, bool) {
	if f.aheadOK {
		f.aheadOK = false
		return f.ahead, true
	}
	var rec logs.Record
	ok, err := f.reader.Next(&rec)
	if err != nil {
		f.err = err
		return rec, false
	}
	return rec, ok
}

// fill reads the next record, or, for records logged to the second or
// coarser, every record of the same second (minute, …), spread within it,
// into f.second.
func (f *recordFeed) fill() bool {
	rec, ok := f.read()
	if !ok {
		return false
	}
	f.second, f.next = f.second[:0], 0
	if rec.Precision < time.Second {
		f.second = append(f.second, f.arrival(&rec, time.Duration(rec.Time-f.survey.origin)))
		return true
	}
	prec := int64(rec.Precision)
	start := rec.Time - rec.Time%prec
	group := append(f.group[:0], rec)
	defer func() { f.group = group[:0] }()
	for {
		next, ok := f.read()
		if !ok {
			break
		}
		if next.Precision != rec.Precision || next.Time-next.Time%prec != start {
			f.ahead, f.aheadOK = next, true
			break
		}
		group = append(group, next)
	}
	offsets := f.spread.offsets(len(group), rec.Precision)
	for i := range group {
		f.second = append(f.second, f.arrival(&group[i], time.Duration(start-f.survey.origin)+offsets[i]))
	}
	return true
}

// arrival is record rec arriving at at, counted in the tally.
func (f *recordFeed) arrival(rec *logs.Record, at time.Duration) client.RecordedArrival {
	tenant := f.tenantOf[rec.Tenant] // "": the first tenant
	f.tally.production(rec, tenant)
	a := client.RecordedArrival{At: at, Host: f.hostOf[rec.Host], Tenant: tenant}
	if f.costLogged {
		a.Cost = rec.Cost
	}
	if rec.Match > 0 {
		a.Path, a.HasPath = int(rec.Match-1), true
	}
	if f.latency == LatencyRecorded && rec.HasLatency && !rec.Throttled() {
		a.Latency = max(rec.Latency, time.Nanosecond)
	} else if f.latency == LatencyRecorded {
		f.modelLatencies++
	}
	return a
}

// spreader draws the instants of a second's arrivals within it.
type spreader struct {
	rng   *rand.Rand
	drawn []time.Duration
}

func newSpreader(seed uint64) *spreader {
	return &spreader{rng: rand.New(sim.StreamSource(seed, "replay/spread"))}
}

// offsets returns n instants uniform in [0, width), in order.
func (s *spreader) offsets(n int, width time.Duration) []time.Duration {
	s.drawn = s.drawn[:0]
	for range n {
		s.drawn = append(s.drawn, time.Duration(s.rng.Int64N(int64(width))))
	}
	slices.Sort(s.drawn)
	return s.drawn
}

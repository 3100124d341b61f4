package planning

import (
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/sim"
)

// maxLatencySamples bounds the latencies a calibration keeps per host for
// its fit: beyond it, a uniform sample of them (reservoir sampling from
// the seeded stream "calibrate/latency/HOST").
const maxLatencySamples = 200_000

// maxResets bounds the reset headers a host keeps as evidence.
const maxResets = 100_000

// maxCostSamples bounds the costs a calibration keeps for the cost
// distribution: beyond it, a uniform sample of them (reservoir sampling
// from the seeded stream "calibrate/cost").
const maxCostSamples = 200_000

// hostLog is what a calibration reads of one host's requests.
type hostLog struct {
	name      string
	trace     quotaTrace
	latencies reservoir[time.Duration] // the admitted requests', of those with a latency
	refusedAt []time.Duration          // the refused requests' latencies, up to maxLatencySamples
	other     int64                    // requests neither admitted nor refused (4xx, 5xx)
	precision time.Duration            // the coarsest its times were logged to
	zeros     int64                    // answers whose latency is logged as 0
}

// minuteLog is production's figures for one minute.
type minuteLog struct {
	goodput, refused int64
	latency          *metrics.CountHist // admitted, µs
}

// tenantLog is what a calibration reads of one tenant's requests: their
// instants, for its arrival fit, and what production answered them.
type tenantLog struct {
	name                       string
	times                      []int64
	precision                  time.Duration
	requests, goodput, refused int64
}

// calibrationLog is the log as a calibration reads it, once, as a
// stream: each host's instants (8 bytes and a flag a request, and 8 more
// when costs are logged), a sample of its latencies, each tenant's
// instants when tenants are logged, a sample of the costs when costs are,
// and production's figures per minute.
type calibrationLog struct {
	// interrupt, when set, stops the fits between hosts.
	interrupt *atomic.Bool
	hosts     []*hostLog
	byName    map[string]*hostLog
	minutes   map[int64]*minuteLog
	first     int64
	last      int64
	records   int64
	bad       int64
	named     []string
	format    logs.Format
	// costLogged and tenantLogged: the mapping names a cost field, a
	// tenant field.
	costLogged, tenantLogged bool
	costs                    reservoir[int64]
	// untenanted counts the records that logged no tenant ("-" or
	// empty), counted for their host but no tenant.
	untenanted int64
	tenants    []*tenantLog
	byTenant   map[string]*tenantLog
}

// admitted reports whether a record's status is an answer (below 400;
// 0 when the log has none).
func admitted(rec *logs.Record) bool { return rec.Status < 400 }

// openCalibrationLog opens the log at log.Path and its reader; the caller
// closes the file.
func openCalibrationLog(log ReplayLog) (io.Closer, *logs.Reader, error) {
	f, err := openLog(log.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrCalibrate, err)
	}
	rd, err := logs.NewReader(f, log.Path, log.Options)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %w", ErrCalibrate, err)
	}
	return f, rd, nil
}

// readCalibrationLog reads the log at log.Path.
func readCalibrationLog(log ReplayLog, seed uint64) (*calibrationLog, error) {
	f, rd, err := openCalibrationLog(log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := log.Options.Mapping
	cl := &calibrationLog{interrupt: log.Interrupt, byName: map[string]*hostLog{}, minutes: map[int64]*minuteLog{}, byTenant: map[string]*tenantLog{},
		costLogged: m.Cost != "", tenantLogged: m.Tenant != "", costs: newReservoir[int64](maxCostSamples, sim.StreamSource(seed, "calibrate/cost"))}
	var rec logs.Record
	for {
		if err := log.interrupted(rd); err != nil {
			return nil, err
		}
		ok, err := rd.Next(&rec)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCalibrate, err)
		}
		if !ok {
			break
		}
		if cl.records == 0 {
			cl.first = rec.Time
		}
		cl.records++
		cl.last = rec.Time
		cl.add(&rec, seed)
		if err := cl.addTenant(&rec, log.Path); err != nil {
			return nil, err
		}
	}
	if cl.records > 0 && rd.WithoutStatus() == cl.records {
		return nil, fmt.Errorf("%w: %s: no record logged a status: a quota is inferred from production's 429s, and without statuses none would be; name the status field with --log-status", ErrCalibrate, log.Path)
	}
	cl.format = rd.Format()
	cl.bad, cl.named = badLines(rd)
	return cl, nil
}

// add counts one record.
func (cl *calibrationLog) add(rec *logs.Record, seed uint64) {
	h := cl.byName[rec.Host]
	if h == nil {
		h = &hostLog{name: rec.Host, trace: quotaTrace{remaining: -1},
			latencies: newReservoir[time.Duration](maxLatencySamples, sim.StreamSource(seed, "calibrate/latency/"+rec.Host))}
		cl.byName[rec.Host] = h
		cl.hosts = append(cl.hosts, h)
	}
	m := cl.minutes[rec.Time/int64(time.Minute)]
	if m == nil {
		m = &minuteLog{}
		cl.minutes[rec.Time/int64(time.Minute)] = m
	}
	refused := rec.Throttled()
	if refused || admitted(rec) {
		h.precision = max(h.precision, rec.Precision)
		h.trace.times = append(h.trace.times, rec.Time)
		h.trace.refused = append(h.trace.refused, refused)
		h.trace.addEnd(rec, refused)
		if cl.costLogged {
			h.trace.costs = append(h.trace.costs, rec.Cost)
			cl.costs.add(rec.Cost)
		}
	}
	if rec.Remaining >= 0 {
		h.trace.remaining = max(h.trace.remaining, rec.Remaining)
		h.trace.headers++
	}
	if rec.Reset >= 0 && len(h.trace.resets) < maxResets {
		h.trace.resets = append(h.trace.resets, rec.Time+int64(rec.Reset))
	}
	switch {
	case refused:
		m.refused++
		if h.trace.status == 0 || rec.Status == 429 {
			h.trace.status = rec.Status
		}
		if rec.HasLatency && len(h.refusedAt) < maxLatencySamples {
			h.refusedAt = append(h.refusedAt, rec.Latency)
		}
	case admitted(rec):
		m.goodput++
		if rec.HasLatency && rec.Latency == 0 {
			h.zeros++
		}
		if rec.HasLatency && rec.Latency >= 0 { // 0: under the log's resolution
			if m.latency == nil {
				m.latency = metrics.NewCountHist()
			}
			m.latency.Add(rec.Latency.Microseconds())
			h.latencies.add(rec.Latency)
		}
	default:
		h.other++
	}
}

// reservoir keeps every value added up to its size, and beyond it a
// uniform sample of that size (reservoir sampling, from its own stream).
type reservoir[T any] struct {
	kept []T
	seen int64 // values added
	size int
	rng  *rand.Rand
}

// newReservoir returns a reservoir of size values drawing from src.
func newReservoir[T any](size int, src rand.Source) reservoir[T] {
	return reservoir[T]{size: size, rng: rand.New(src)}
}

// add offers v to the reservoir.
func (r *reservoir[T]) add(v T) {
	r.seen++
	if len(r.kept) < r.size {
		r.kept = append(r.kept, v)
		return
	}
	if i := r.rng.Int64N(r.seen); i < int64(r.size) {
		r.kept[i] = v
	}
}

// addTenant counts a record for its tenant, when tenants are logged.
func (cl *calibrationLog) addTenant(rec *logs.Record, path string) error {
	if !cl.tenantLogged {
		return nil
	}
	if rec.Tenant == "" {
		cl.untenanted++
		return nil
	}
	t := cl.byTenant[rec.Tenant]
	if t == nil {
		if len(cl.tenants) == maxReplayTenants {
			return fmt.Errorf("%w: %s:%d: more than %d tenants", ErrCalibrate, path, rec.Line, maxReplayTenants)
		}
		t = &tenantLog{name: rec.Tenant}
		cl.byTenant[rec.Tenant] = t
		cl.tenants = append(cl.tenants, t)
	}
	t.requests++
	switch {
	case rec.Throttled():
		t.refused++
	case admitted(rec):
		t.goodput++
	default:
		return nil
	}
	t.precision = max(t.precision, rec.Precision)
	t.times = append(t.times, rec.Time)
	return nil
}

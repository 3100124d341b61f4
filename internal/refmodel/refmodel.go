package refmodel

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

// Config is the model's parameters.
type Config struct {
	Seed          uint64
	Arrivals      int     // arrivals in all
	Rate          float64 // arrivals per second
	ClientRate    float64
	ClientBurst   float64
	Concurrency   int64
	MaxWaiting    int
	UpstreamRate  float64
	UpstreamBurst float64
	Median        time.Duration
	Sigma         float64
	RejectLatency time.Duration
}

// Default returns the reference parameters.
func Default(n int) Config {
	return Config{Seed: 1, Arrivals: n, Rate: 150, ClientRate: 90, ClientBurst: 90, Concurrency: 20,
		MaxWaiting: 500, UpstreamRate: 100, UpstreamBurst: 100, Median: 200 * time.Millisecond,
		Sigma: 0.5, RejectLatency: 5 * time.Millisecond}
}

// Result is what one run measured.
type Result struct {
	Completed, Rejected, Throttled int64
	MeanWait, P99Wait              time.Duration
	MeanInFlight                   float64 // time average
	LambdaW                        float64 // start rate × mean time in flight
	Elapsed                        time.Duration
	Events                         uint64
}

type model struct {
	cfg       Config
	eng       *sim.Engine
	bucket    *models.Line
	semaphore *models.Line
	upstream  *models.TokenBucket
	arrive    func() time.Duration
	service   func() time.Duration

	arrived  int
	waiting  int
	inflight int64
	arrivals []time.Duration // arrival instant per request slot
	free     []uint32

	result   Result
	waits    *hdrhistogram.Histogram
	waitSum  time.Duration
	started  int64
	busySum  time.Duration
	area     float64 // ∫ in-flight dt, in request·ns
	lastTick time.Duration
}

// handlers: one value per kind of event, arg = request slot.
type (
	arrival  model
	tokenOK  model
	permitOK model
	done     model
)

// Run simulates cfg and returns its measurements.
func Run(cfg Config) Result {
	eng := sim.New(cfg.Seed)
	m := &model{cfg: cfg, eng: eng}
	bucket, _ := models.NewTokenBucket(models.TokenBucketConfig{Rate: cfg.ClientRate, Burst: cfg.ClientBurst, InitialFill: 1})
	sem, _ := models.NewSemaphore(cfg.Concurrency)
	m.upstream, _ = models.NewTokenBucket(models.TokenBucketConfig{Rate: cfg.UpstreamRate, Burst: cfg.UpstreamBurst, InitialFill: 1})
	m.bucket = models.NewLine(bucket, eng, models.Unbounded)
	m.semaphore = models.NewLine(sem, eng, models.Unbounded)
	ar, sv := eng.Stream("arrivals"), eng.Stream("latency")
	mu := math.Log(float64(cfg.Median))
	m.arrive = func() time.Duration { return time.Duration(ar.ExpFloat64() / cfg.Rate * 1e9) }
	m.service = func() time.Duration { return time.Duration(math.Exp(mu + cfg.Sigma*sv.NormFloat64())) }
	m.waits = hdrhistogram.New(1, int64(time.Hour), 3)
	eng.At(m.arrive(), (*arrival)(m), 0)
	m.arrived = 1
	eng.Run()
	m.account(eng.Now())
	r := m.result
	r.Elapsed, r.Events = eng.Now(), eng.Events()
	if m.started > 0 {
		r.MeanWait = m.waitSum / time.Duration(m.started)
		r.P99Wait = time.Duration(m.waits.ValueAtQuantile(99))
		r.LambdaW = float64(m.started) / float64(r.Elapsed) * float64(m.busySum) / float64(m.started)
	}
	if r.Elapsed > 0 {
		r.MeanInFlight = m.area / float64(r.Elapsed)
	}
	return r
}

func (m *model) account(now time.Duration) {
	m.area += float64(m.inflight) * float64(now-m.lastTick)
	m.lastTick = now
}

func (m *model) slot(now time.Duration) uint32 {
	if k := len(m.free); k > 0 {
		i := m.free[k-1]
		m.free = m.free[:k-1]
		m.arrivals[i] = now
		return i
	}
	m.arrivals = append(m.arrivals, now)
	return uint32(len(m.arrivals) - 1)
}

func (a *arrival) Fire(now time.Duration, _ uint64) {
	m := (*model)(a)
	if m.arrived < m.cfg.Arrivals {
		m.eng.At(now+m.arrive(), a, 0)
		m.arrived++
	}
	if m.waiting >= m.cfg.MaxWaiting {
		m.result.Rejected++
		return
	}
	m.waiting++
	i := m.slot(now)
	if _, st := m.bucket.Acquire(now, 1, clock.Never, (*tokenOK)(m), uint64(i)); st == models.Granted {
		m.toSemaphore(now, i)
	}
}

func (t *tokenOK) Fire(now time.Duration, arg uint64) { (*model)(t).toSemaphore(now, uint32(arg)) }

func (m *model) toSemaphore(now time.Duration, i uint32) {
	if _, st := m.semaphore.Acquire(now, 1, clock.Never, (*permitOK)(m), uint64(i)); st == models.Granted {
		m.start(now, i)
	}
}

func (p *permitOK) Fire(now time.Duration, arg uint64) { (*model)(p).start(now, uint32(arg)) }

func (m *model) start(now time.Duration, i uint32) {
	m.account(now)
	m.waiting--
	w := now - m.arrivals[i]
	m.waitSum += w
	m.waits.RecordValue(int64(w) + 1)
	m.started++
	d := m.cfg.RejectLatency
	kind := uint64(1)
	if m.upstream.TakeAt(now, 1) {
		d, kind = m.service(), 0
	}
	m.busySum += d
	m.inflight++
	m.eng.At(now+d, (*done)(m), uint64(i)<<1|kind)
}

func (d *done) Fire(now time.Duration, arg uint64) {
	m := (*model)(d)
	m.account(now)
	m.inflight--
	if arg&1 == 0 {
		m.result.Completed++
	} else {
		m.result.Throttled++
	}
	m.free = append(m.free, uint32(arg>>1))
	m.semaphore.Release(now, 1)
}

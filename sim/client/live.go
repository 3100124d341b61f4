package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/clock/wallclock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
	"github.com/limitsim/limitsim/upstream"
)

// LiveOptions configures RunLive.
type LiveOptions struct {
	// Speed is how much faster than the wall clock the run goes: at 10
	// every duration of the scenario (arrivals, latencies, pauses, limiter
	// rates) is divided by 10. 0 means 1.
	Speed float64
	// MaxWall stops the run after this much wall-clock time, complete or
	// not (0: DefaultLiveMaxWall).
	MaxWall time.Duration
	// Interrupt, when set to true, stops the run as an interrupted one.
	Interrupt *atomic.Bool
	// Progress, when set, is advanced as Options.Progress is.
	Progress *atomic.Int64
	// Clock, when set, is advanced as Options.Clock is.
	Clock *atomic.Int64
	// Redis is the address of the Redis that cluster limiters are kept in;
	// empty starts redis-server on a loopback port for the run (only when
	// the scenario has a cluster limiter).
	Redis string
	// Nginx, when set, puts a real nginx in front of the loopback server
	// to enforce the scenario's nginx quota kinds.
	Nginx *LiveNginx
}

// DefaultLiveMaxWall is the wall-clock cap of a live run.
const DefaultLiveMaxWall = 15 * time.Minute

// ErrLiveCapped is returned (wrapped) when a live run reached its
// wall-clock cap; the outcome is then marked interrupted.
var ErrLiveCapped = errors.New("live run reached its wall-clock cap")

// RunLive runs the scenario for real, once (replication 0): a net/http
// server on a loopback port answers for every upstream with the same
// server model the simulation uses (its quotas, latency, workers, 429s,
// Retry-After and rate-limit headers), sleeping each answer's latency, and
// the client pipeline — the same limiters, ingest queue, 429 policy and
// retries — runs on a wall-clock event loop and sends each attempt as an
// HTTP request from its own goroutine. The same recorder takes the same
// measurements, so the outcome compares field for field with a simulated
// one. Traffic goes only to the server it starts. The run ends when every
// request has ended, on Interrupt, or at MaxWall (outcome marked
// interrupted, with ErrLiveCapped).
func RunLive(ctx context.Context, cfg *Config, opt LiveOptions) (*Outcome, error) {
	if cfg.Retry.AttemptTimeout > 0 {
		return nil, fmt.Errorf("%w: live: client.retry.attempt_timeout is simulated only (an abandoned HTTP attempt is not modeled)", ErrConfig)
	}
	speed := opt.Speed
	if speed <= 0 {
		speed = 1
	}
	maxWall := opt.MaxWall
	if maxWall <= 0 {
		maxWall = DefaultLiveMaxWall
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Everything slow is set up before the run's clock starts: Redis, the
	// server, the first connection.
	var lr *liveRedis
	if hasCluster(cfg) {
		var err error
		if lr, err = startRedis(ctx, opt.Redis); err != nil {
			return nil, fmt.Errorf("live: %w", err)
		}
		defer lr.close()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("live: listening on loopback: %w", err)
	}
	loop := wallclock.NewScaled(ctx, speed)
	defer loop.Close()
	eng := &liveEngine{Loop: loop, seed: cfg.Run.Seed}
	var stores storeMaker
	if lr != nil {
		stores = lr.maker(ctx, eng, speed, strconv.FormatInt(time.Now().UnixNano(), 36))
	}
	ls := &liveServer{loop: loop}
	srv := &http.Server{Handler: ls, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // Serve returns ErrServerClosed when Close stops it below
	defer srv.Close()
	runCfg, front, err := liveFront(ctx, cfg, opt, speed, ln.Addr().String())
	if err != nil {
		return nil, err
	}
	defer front.stop()
	lc := &liveClient{eng: eng, ctx: ctx, base: front.base(ln.Addr().String()), nginx: front,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4096, DisableCompression: true}}}
	defer lc.http.CloseIdleConnections()
	// One request before the run opens a connection, so that the first
	// attempt does not pay for it.
	if err := lc.ping(); err != nil {
		return nil, fmt.Errorf("live: reaching the loopback server: %w", err)
	}

	p, err := startLive(loop, runCfg, eng, stores, lc, ls, opt)
	if err != nil {
		return nil, err
	}
	runErr, err := watchLive(ctx, loop, p, opt.Interrupt, maxWall)
	if err != nil {
		return nil, err
	}
	return liveOutcome(loop, p, runErr, maxWall)
}

// liveOutcome is the outcome of live pipeline p, read on its loop once
// watchLive ended the run with runErr: a run capped at maxWall is
// interrupted, with ErrLiveCapped.
func liveOutcome(loop *wallclock.Loop, p *pipeline, runErr error, maxWall time.Duration) (*Outcome, error) {
	if errors.Is(runErr, errLiveDone) {
		runErr = nil
	}
	capped := errors.Is(runErr, ErrLiveCapped)
	if capped {
		runErr = sim.ErrInterrupted
	}
	type result struct {
		out *Outcome
		err error
	}
	res := make(chan result, 1)
	loop.Do(func(time.Duration) {
		out, err := p.outcome(runErr)
		res <- result{out, err}
	})
	r := <-res
	if r.err == nil && capped {
		return r.out, fmt.Errorf("%w (%v)", ErrLiveCapped, maxWall)
	}
	return r.out, r.err
}

// liveFront starts, with opt.Nginx, the nginx in front of the loopback
// server at upstreamAddr, which then enforces the nginx quota kinds: it
// returns the configuration the loopback server runs (without them) and
// the nginx (nil without one; its base is what the clients send to).
func liveFront(ctx context.Context, cfg *Config, opt LiveOptions, speed float64, upstreamAddr string) (*Config, *liveNginx, error) {
	if opt.Nginx == nil {
		return cfg, nil, nil
	}
	n, conf, err := startNginx(ctx, opt.Nginx.Binary, cfg, speed, upstreamAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("live: %w", err)
	}
	opt.Nginx.Config = conf
	return withoutNginxQuotas(cfg), n, nil
}

// hasCluster reports whether some limiter of cfg is a cluster limiter,
// kept in Redis in a live run.
func hasCluster(cfg *Config) bool {
	for _, l := range cfg.Limiters {
		if l.Scope == Cluster {
			return true
		}
	}
	return false
}

// startLive builds the live run's pipeline on the event loop, restarting
// the loop's clock first so that the run's time starts then, and starts
// its arrivals.
func startLive(loop *wallclock.Loop, cfg *Config, eng *liveEngine, stores storeMaker, lc *liveClient, ls *liveServer, opt LiveOptions) (*pipeline, error) {
	type built struct {
		p   *pipeline
		err error
	}
	ready := make(chan built, 1)
	loop.Do(func(time.Duration) {
		loop.Restart() // the run's time starts now, not when the loop was made
		p, err := buildPipeline(cfg, eng, stores)
		if err == nil {
			p.live, p.progress, p.clock = lc, opt.Progress, opt.Clock
			ls.p.Store(p)
			p.start()
		}
		ready <- built{p, err}
	})
	b := <-ready
	return b.p, b.err
}

// watchLive watches for the end of live run p from outside the loop (the
// loop itself only runs events) and returns why it ended: errLiveDone when
// every request has ended, the run's own error, sim.ErrInterrupted on
// interrupt, or ErrLiveCapped (wrapped) past maxWall. A cancelled ctx or a
// stopped loop are returned as err instead.
func watchLive(ctx context.Context, loop *wallclock.Loop, p *pipeline, interrupt *atomic.Bool, maxWall time.Duration) (runErr, err error) {
	wallEnd := time.Now().Add(maxWall)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for runErr == nil {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		state := make(chan error, 1)
		if !loop.Do(func(time.Duration) { state <- p.liveState() }) {
			return nil, errors.New("live: the event loop stopped")
		}
		err := <-state
		switch {
		case errors.Is(err, errLiveDone):
			runErr = errLiveDone
		case err != nil:
			runErr = err
		case interrupt != nil && interrupt.Load():
			runErr = sim.ErrInterrupted
		case time.Now().After(wallEnd):
			runErr = fmt.Errorf("%w (%v)", ErrLiveCapped, maxWall)
		}
	}
	return runErr, nil
}

// errLiveDone says every request of a live run has ended.
var errLiveDone = errors.New("live run done")

// liveState says, on the loop goroutine, whether a live run is over:
// errLiveDone when every request ended and no HTTP request is out, a
// guard's error, a stall, or nil to go on.
func (p *pipeline) liveState() error {
	e := p.eng.(*liveEngine)
	switch {
	case e.abort != nil:
		return e.abort
	case p.noMore && p.inSystem == 0 && e.external == 0:
		return errLiveDone
	case e.Pending() == 0 && p.inSystem > 0:
		return fmt.Errorf("%w: %d requests are parked and nothing is scheduled or in flight: a deadlock (limitsim run names its cycle)", ErrLiveStalled, p.inSystem)
	}
	return nil
}

// ErrLiveStalled is returned (wrapped) when a live run's requests are all
// parked with nothing scheduled or in flight.
var ErrLiveStalled = errors.New("live run stalled")

// liveEngine is a pipeline's engine in live mode: a wall-clock loop with
// the simulation's named random streams.
type liveEngine struct {
	*wallclock.Loop
	seed  uint64
	abort error
	// external counts what is out of the loop and will come back to it:
	// HTTP requests and Redis calls. Loop goroutine only.
	external int
}

// Pending counts the scheduled events and what is out of the loop: a run
// with an HTTP request or a Redis call out still has something to come.
func (e *liveEngine) Pending() int { return e.Loop.Pending() + e.external }

// Stream returns the named stream of the run's seed, as sim.Engine does.
func (e *liveEngine) Stream(name string) *rand.Rand { return rand.New(sim.StreamSource(e.seed, name)) }

// Abort records the first error that stops the run.
func (e *liveEngine) Abort(err error) {
	if e.abort == nil {
		e.abort = err
	}
}

// Seed returns the run's seed.
func (e *liveEngine) Seed() uint64 { return e.seed }

// liveClient sends a live run's attempts over HTTP.
type liveClient struct {
	eng  *liveEngine
	ctx  context.Context
	base string
	http *http.Client
	// nginx, when the run is behind one, explains an attempt it broke.
	nginx *liveNginx
}

// send sends request r's attempt from its own goroutine; the answer comes
// back to the loop as the simulation's response event would.
func (c *liveClient) send(p *pipeline, r *request) {
	if r.phase != phDone {
		r.phase = phInFlight
	}
	arg, host, cost := r.arg(), int(r.host), r.cost
	c.eng.external++
	go func() {
		a, err := c.roundTrip(host, cost)
		c.eng.Do(func(now time.Duration) {
			c.eng.external--
			if err != nil {
				p.eng.Abort(fmt.Errorf("live: upstream %s: %w", p.cfg.Workload.Hosts[host].Name, c.nginx.broke(err)))
				return
			}
			r := p.lookup(arg)
			if r == nil {
				return
			}
			r.answer = a // After is the server's service time, as in a simulation
			p.answered(now, r)
		})
	}()
}

// ping asks the server for /ping and reads the answer.
func (c *liveClient) ping() error {
	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.base+"/ping", nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// roundTrip makes one HTTP request of cost to host and reads its answer.
func (c *liveClient) roundTrip(host int, cost int64) (upstream.Answer, error) {
	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.base+"/h/"+strconv.Itoa(host), nil)
	if err != nil {
		return upstream.Answer{}, err
	}
	req.Header.Set(hdrRequestCost, strconv.FormatInt(cost, 10))
	resp, err := c.http.Do(req)
	if err != nil {
		return upstream.Answer{}, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return upstream.Answer{}, err
	}
	return parseAnswer(resp.StatusCode, resp.Header)
}

// The live protocol's headers carry times in the scenario's own time
// (seconds, decimal), so that a sped-up run reads the same values as a
// real-time one.
const (
	hdrRetryAfter = "Retry-After"
	hdrRemaining  = "X-RateLimit-Remaining"
	hdrReset      = "X-RateLimit-Reset"
	// hdrService is the time the server spent on the request (after any
	// wait for a worker): the client counts a reset from when service
	// began, as a simulated one does.
	hdrService = "X-Service-Time"
	// hdrRequestCost is the request's own cost (a model's input tokens,
	// which the provider counts from the body); hdrResponseCost the cost
	// its response revealed (the usage a model reports).
	hdrRequestCost  = "X-Request-Cost"
	hdrResponseCost = "X-Response-Cost"
	// The tokens family, for quotas that count cost, and the requests
	// family beside it, as language-model APIs name them.
	hdrRemainingRequests = "X-Ratelimit-Remaining-Requests"
	hdrResetRequests     = "X-Ratelimit-Reset-Requests"
	hdrLimitTokens       = "X-Ratelimit-Limit-Tokens"
	hdrRemainingTokens   = "X-Ratelimit-Remaining-Tokens"
	hdrResetTokens       = "X-Ratelimit-Reset-Tokens"
)

// writeAnswer writes a's status and headers.
func writeAnswer(w http.ResponseWriter, a upstream.Answer) {
	h := w.Header()
	h.Set(hdrService, strconv.FormatFloat(a.After.Seconds(), 'f', -1, 64))
	if a.HasRetryAfter {
		h.Set(hdrRetryAfter, strconv.FormatFloat(a.RetryAfter.Seconds(), 'f', -1, 64))
	}
	if a.Remaining >= 0 {
		h.Set(hdrRemaining, strconv.FormatInt(a.Remaining, 10))
	}
	if a.Reset > 0 {
		h.Set(hdrReset, strconv.FormatFloat(a.Reset.Seconds(), 'f', -1, 64))
	}
	if a.Cost > 0 {
		h.Set(hdrResponseCost, strconv.FormatInt(a.Cost, 10))
	}
	if a.RemainingCost >= 0 {
		if a.Remaining >= 0 {
			h.Set(hdrRemainingRequests, strconv.FormatInt(a.Remaining, 10))
			h.Set(hdrResetRequests, strconv.FormatFloat(a.Reset.Seconds(), 'f', -1, 64))
		}
		h.Set(hdrLimitTokens, strconv.FormatInt(a.LimitCost, 10))
		h.Set(hdrRemainingTokens, strconv.FormatInt(a.RemainingCost, 10))
		h.Set(hdrResetTokens, strconv.FormatFloat(a.ResetCost.Seconds(), 'f', -1, 64))
	}
	if a.OK {
		w.WriteHeader(http.StatusOK)
		return
	}
	if a.Status != 0 {
		w.WriteHeader(a.Status)
		return
	}
	w.WriteHeader(http.StatusTooManyRequests)
}

// parseAnswer reads an answer written by writeAnswer.
func parseAnswer(status int, h http.Header) (upstream.Answer, error) {
	a := upstream.Answer{Remaining: -1, RemainingCost: -1}
	switch status {
	case http.StatusOK:
		a.OK = true
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusForbidden:
		a.Status = status
	default:
		return a, fmt.Errorf("unexpected status %d", status)
	}
	secs := func(name string) (time.Duration, bool, error) {
		v := h.Get(name)
		if v == "" {
			return 0, false, nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return 0, false, fmt.Errorf("header %s: %q is not a number of seconds", name, v)
		}
		return time.Duration(f * float64(time.Second)), true, nil
	}
	var err error
	if a.After, _, err = secs(hdrService); err != nil {
		return a, err
	}
	if a.RetryAfter, a.HasRetryAfter, err = secs(hdrRetryAfter); err != nil {
		return a, err
	}
	if v := h.Get(hdrRemaining); v != "" {
		if a.Remaining, err = strconv.ParseInt(v, 10, 64); err != nil {
			return a, fmt.Errorf("header %s: %q is not a count", hdrRemaining, v)
		}
	}
	if a.Reset, _, err = secs(hdrReset); err != nil {
		return a, err
	}
	count := func(name string, into *int64) error {
		if v := h.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("header %s: %q is not a count", name, v)
			}
			*into = n
		}
		return nil
	}
	for _, c := range []struct {
		name string
		into *int64
	}{{hdrResponseCost, &a.Cost}, {hdrRemainingTokens, &a.RemainingCost}, {hdrLimitTokens, &a.LimitCost}} {
		if err := count(c.name, c.into); err != nil {
			return a, err
		}
	}
	if a.ResetCost, _, err = secs(hdrResetTokens); err != nil {
		return a, err
	}
	return a, nil
}

// liveServer answers a live run's HTTP requests for every upstream at
// /h/HOST: the pipeline's own server models (quotas, latency, workers),
// run on the loop, with the latency slept on the wall clock.
type liveServer struct {
	p    atomic.Pointer[pipeline] // set once the run is built
	loop *wallclock.Loop
}

func (s *liveServer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == "/ping" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	p := s.p.Load()
	host, err := strconv.Atoi(strings.TrimPrefix(req.URL.Path, "/h/"))
	if p == nil || err != nil || host < 0 || host >= len(p.servers) {
		http.NotFound(w, req)
		return
	}
	cost := int64(1)
	if v := req.Header.Get(hdrRequestCost); v != "" {
		if cost, err = strconv.ParseInt(v, 10, 64); err != nil || cost < 0 {
			http.Error(w, fmt.Sprintf("header %s: %q is not a count", hdrRequestCost, v), http.StatusBadRequest)
			return
		}
	}
	type started struct {
		a           upstream.Answer
		at, arrived time.Duration
	}
	ch := make(chan started, 1)
	if !s.loop.Do(func(now time.Duration) {
		arrived := now
		p.liveServe(now, host, cost, func(now time.Duration, a upstream.Answer) { ch <- started{a, now, arrived} })
	}) {
		http.Error(w, "the run is over", http.StatusServiceUnavailable)
		return
	}
	var st started
	select {
	case st = <-ch:
	case <-req.Context().Done():
		return
	}
	t := time.NewTimer(s.loop.Wall(st.a.After))
	select {
	case <-t.C:
	case <-req.Context().Done():
		t.Stop()
	}
	s.loop.Do(func(now time.Duration) { p.serverDone(now, host, &st.a, st.at, st.arrived) })
	writeAnswer(w, st.a)
}

// liveServe starts the server's work on a live request of cost to host,
// past its door and through its workers if it has them, and calls started
// with the answer when the work starts (at once for a refusal at the door).
func (p *pipeline) liveServe(now time.Duration, host int, cost int64, started func(time.Duration, upstream.Answer)) {
	var door upstream.Answer
	if !p.servers[host].Arrive(now, &door) {
		started(now, door)
		return
	}
	start := func(now time.Duration) {
		a := p.servers[host].Start(now, cost)
		p.costServed(host, cost, &a)
		p.rec.Served(now, host, a.After-a.Held, a.OK)
		started(now, a)
	}
	if q := p.serverQueues[host]; q != nil {
		h := clock.HandlerFunc(func(now time.Duration, _ uint64) { start(now) })
		if _, st := q.Put(now, h, 0); st != models.Granted {
			return // a worker starts it later
		}
	}
	start(now)
}

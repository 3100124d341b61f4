package client

import (
	"context"
	"fmt"
	"math"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
)

// clusterStore is the shared store of a cluster limiter: the model
// (models.Store) in a simulation, a real Redis in live mode.
type clusterStore interface {
	// Front returns one instance's limiter on the store.
	Front(maxWaiting models.Bound) models.Limiter
	// Calls returns the calls made to the store and how many failed.
	Calls() (calls, failed int64)
}

// storeMaker builds the store of cluster limiter l; nil builds the model.
type storeMaker func(l LimiterConfig) (clusterStore, error)

// redisStore is a cluster limiter kept in a real Redis through
// go-redis/redis_rate (a GCRA in a Lua script, on Redis's own clock). Its
// limit is set in wall-clock terms, so that a run at speed X sees the
// scenario's rate in its own time.
type redisStore struct {
	eng     *liveEngine
	ctx     context.Context
	limiter *redis_rate.Limiter
	key     string
	limit   redis_rate.Limit
	speed   float64
	config  models.StoreConfig
	burst   int64
	calls   int64 // loop goroutine only
	failed  int64
}

// redisLimit is rate per second with burst, as redis_rate takes it, on a
// wall clock speed times as fast: rate × 1000 per 1000 s ÷ speed, so that
// a fractional rate keeps its value.
func redisLimit(rate float64, burst int64, speed float64) redis_rate.Limit {
	return redis_rate.Limit{Rate: int(math.Round(rate * 1000)), Burst: int(burst),
		Period: time.Duration(1000 / speed * float64(time.Second))}
}

// Front returns an instance's limiter on the store.
func (s *redisStore) Front(models.Bound) models.Limiter {
	return &redisFront{store: s, calls: make(map[uint64]*redisCall)}
}

// Calls returns the calls made to Redis and how many failed.
func (s *redisStore) Calls() (calls, failed int64) { return s.calls, s.failed }

// redisFront is one instance's limiter on a redisStore, as a redis_rate
// client uses it: each acquisition calls Redis; a refusal waits the
// RetryAfter Redis answered and calls again, unqueued. A failed call
// admits (fail open) or waits the error back-off (fail closed).
type redisFront struct {
	store     *redisStore
	next      uint64
	calls     map[uint64]*redisCall
	remaining int64 // as the last answer said, for Usage
	answered  bool
}

type redisCall struct {
	units    int64 // what the acquisition asks for
	handler  clock.Handler
	arg      uint64
	timer    clock.Timer
	inFlight bool
}

var _ models.Limiter = (*redisFront)(nil)

// Acquire sends the first call; the grant comes back as an event.
func (f *redisFront) Acquire(now time.Duration, n int64, _ time.Duration, h clock.Handler, arg uint64) (models.Ticket, models.Status) {
	if n < 1 || n > f.store.burst {
		return 0, models.TooLarge
	}
	f.next++
	f.calls[f.next] = &redisCall{units: n, handler: h, arg: arg}
	f.call(f.next)
	return models.Ticket(f.next), models.Parked
}

// call sends call id to Redis from its own goroutine.
func (f *redisFront) call(id uint64) {
	c := f.calls[id]
	c.inFlight = true
	s := f.store
	s.eng.external++
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, storeCallTimeout)
		res, err := s.limiter.AllowN(ctx, s.key, s.limit, int(c.units))
		cancel()
		s.eng.Do(func(now time.Duration) {
			s.eng.external--
			f.answer(now, id, res, err)
		})
	}()
}

// answer reads Redis's answer to call id on the loop.
func (f *redisFront) answer(now time.Duration, id uint64, res *redis_rate.Result, err error) {
	s := f.store
	s.calls++
	if err != nil {
		s.failed++
	} else {
		f.remaining, f.answered = int64(res.Remaining), true
	}
	c := f.calls[id]
	if c == nil {
		return // withdrawn while the call was out (what Redis took stays taken)
	}
	c.inFlight = false
	switch {
	case err != nil && s.config.FailOpen, err == nil && res.Allowed > 0:
		delete(f.calls, id)
		c.handler.Fire(now, c.arg)
	case err != nil:
		c.timer = s.eng.At(clock.Add(now, s.config.ErrorBackoff), (*redisRetry)(f), id)
	default:
		wait := time.Duration(float64(res.RetryAfter) * s.speed) // Redis's wall time in scenario time
		c.timer = s.eng.At(clock.Add(now, max(wait, 1)), (*redisRetry)(f), id)
	}
}

type redisRetry redisFront

// Fire calls Redis again after a RetryAfter or a back-off.
func (h *redisRetry) Fire(_ time.Duration, id uint64) {
	f := (*redisFront)(h)
	if _, ok := f.calls[id]; ok {
		f.call(id)
	}
}

// Cancel withdraws a caller; a call already out is answered and dropped.
func (f *redisFront) Cancel(_ time.Duration, t models.Ticket) bool {
	c, ok := f.calls[uint64(t)]
	if !ok {
		return false
	}
	if !c.inFlight {
		f.store.eng.Cancel(c.timer)
	}
	delete(f.calls, uint64(t))
	return true
}

// Waiting returns this instance's callers not yet admitted.
func (f *redisFront) Waiting() int { return len(f.calls) }

// Usage is the share of the burst in use as Redis last answered.
func (f *redisFront) Usage(time.Duration) float64 {
	if !f.answered || f.store.burst <= 0 {
		return 0
	}
	return math.Min(1, math.Max(0, 1-float64(f.remaining)/float64(f.store.burst)))
}

// storeCallTimeout bounds every call a live cluster limiter makes to Redis,
// in wall-clock time whatever the speed: a call that has no answer by then
// fails, and the limiter does what on_store_error says. A Redis that is
// down or unreachable can thus slow a run but not hold it.
const storeCallTimeout = time.Second

// redisOptions are the go-redis options of a live run's client: each dial,
// read and write bounded (a dead Redis refuses or times out at once rather
// than after go-redis's 5 s defaults), no dial or command retries (a failed
// call is the limiter's to handle, as on_store_error says), and the call's
// context deadline (storeCallTimeout) obeyed on the socket.
func redisOptions(addr string) *redis.Options {
	return &redis.Options{Addr: addr, PoolSize: 64,
		DialTimeout: 500 * time.Millisecond, DialerRetries: 1,
		ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
		PoolTimeout: storeCallTimeout, MaxRetries: -1, ContextTimeoutEnabled: true}
}

// quietRedis silences go-redis's process-wide logger once: it logs every
// failed dial, and a store that is down is counted in the limiter's
// store.failed instead of flooding stderr. Once, so that live runs at
// once never write it together.
var quietRedis sync.Once

// quietLogger drops go-redis's log lines.
type quietLogger struct{}

// Printf drops the line.
func (quietLogger) Printf(context.Context, string, ...any) {}

// liveRedis is the Redis a live run keeps its cluster limiters in, and the
// redis-server it started, if any.
type liveRedis struct {
	client *redis.Client
	server *exec.Cmd
	Addr   string
}

// startRedis connects to addr, or with addr empty starts redis-server on
// a free loopback port (no persistence) and connects to it.
func startRedis(ctx context.Context, addr string) (*liveRedis, error) {
	lr := &liveRedis{Addr: addr}
	if addr == "" {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			return nil, fmt.Errorf("%w: a cluster limiter runs live against Redis: install redis-server (apt-get install redis-server) or give --redis ADDR", ErrLiveStore)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		lr.Addr = "127.0.0.1:" + strconv.Itoa(port)
		lr.server = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
		lr.server.SysProcAttr = childProcAttr()
		if err := lr.server.Start(); err != nil {
			return nil, fmt.Errorf("starting redis-server: %w", err)
		}
	}
	quietRedis.Do(func() { redis.SetLogger(quietLogger{}) })
	lr.client = redis.NewClient(redisOptions(lr.Addr))
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := lr.client.Ping(ctx).Err()
		if err == nil {
			return lr, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			lr.close()
			return nil, fmt.Errorf("%w: redis at %s does not answer: %w", ErrLiveStore, lr.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// close disconnects and stops the redis-server it started.
func (lr *liveRedis) close() {
	lr.client.Close()
	if lr.server != nil && lr.server.Process != nil {
		lr.server.Process.Kill()
		lr.server.Wait() //nolint:errcheck // killed on purpose
	}
}

// maker returns the storeMaker of a live run at speed on loop: one key
// per cluster limiter and run.
func (lr *liveRedis) maker(ctx context.Context, eng *liveEngine, speed float64, run string) storeMaker {
	lim := redis_rate.NewLimiter(lr.client)
	return func(l LimiterConfig) (clusterStore, error) {
		if l.Store == nil {
			return nil, fmt.Errorf("%w: client.limiter %s: a cluster limiter needs its store", ErrConfig, l.Name)
		}
		if l.Store.SyncInterval > 0 {
			return nil, fmt.Errorf("%w: client.limiter %s: sync_interval runs in simulation only; live, every acquisition calls Redis", ErrConfig, l.Name)
		}
		burst := int64(l.Params.Burst)
		c := *l.Store
		if c.ErrorBackoff <= 0 {
			c.ErrorBackoff = 100 * time.Millisecond
		}
		return &redisStore{eng: eng, ctx: ctx, limiter: lim, key: "limitsim:" + run + ":" + l.Name,
			limit: redisLimit(l.Params.Rate, burst, speed), speed: speed, config: c, burst: burst}, nil
	}
}

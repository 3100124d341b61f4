package models_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

// XRate grants each acquisition when rate.Limiter.ReserveN says it may
// act, whether at once or after a wait: driven with random arrivals and
// sizes beside a plain rate.Limiter that only reserves, every grant lands
// at the reference's time to act. A grant at once that took a different
// number of tokens than a reservation would (or took none) shifts every
// later grant.
func TestXRateGrantsAsReserveN(t *testing.T) {
	for _, burst := range []int{1, 3, 10} {
		e := sim.New(1)
		x, err := models.NewXRate(50, burst, e)
		if err != nil {
			t.Fatal(err)
		}
		ref := rate.NewLimiter(50, burst)
		epoch := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		rng := rand.New(rand.NewPCG(uint64(burst), 9))
		g := newGrants()
		want := map[uint64]time.Duration{}
		var now time.Duration
		atOnce := 0
		for i := range uint64(2000) {
			now += time.Duration(rng.ExpFloat64() * float64(25*time.Millisecond)) // 40 a second
			n := 1 + rng.IntN(burst)
			e.RunUntil(now)
			r := ref.ReserveN(epoch.Add(now), n)
			want[i] = now + r.DelayFrom(epoch.Add(now))
			switch _, st := x.Acquire(now, int64(n), clock.Never, g, i); st {
			case models.Granted:
				g.Fire(now, i)
				atOnce++
			case models.Parked:
			default:
				t.Fatalf("burst %d, acquisition %d of %d: status %v", burst, i, n, st)
			}
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if atOnce == 0 || atOnce == len(want) {
			t.Fatalf("burst %d: %d of %d granted at once; want some of both kinds", burst, atOnce, len(want))
		}
		for i, at := range want {
			if g.at[i] != at {
				t.Fatalf("burst %d, acquisition %d: granted at %v, ReserveN acts at %v", burst, i, g.at[i], at)
			}
		}
	}
}

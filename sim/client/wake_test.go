package client

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/sim"
)

// Callers paused until one instant resume within wakeSpread of it (after
// their resume jitter), in an order drawn from the wake stream: not all at
// one nanosecond, not in the order they paused, and without a draw from
// the jitter stream, whose fallback pauses stay those of the same seed.
// A pause to the end of time (a saturated Retry-After) stays there: the
// draw added to clock.Never had wrapped it into the past, and the caller
// sent through the pause.
func TestResumeAtSpreadsAPauseEnd(t *testing.T) {
	for _, jitter := range []models.Jitter{{}, {Kind: models.Fixed, A: 5 * ms}} {
		cfg := dd1(10)
		cfg.On429 = On429{Pause: PauseHost, ResumeJitter: jitter}
		p, err := newPipeline(cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		const until = 3 * time.Second
		from, to := until+jitter.A, until+jitter.A+wakeSpread
		var ats []time.Duration
		distinct := map[time.Duration]bool{}
		for range 64 {
			at := p.resumeAt(until)
			if at < from || at >= to {
				t.Fatalf("jitter %v: resumes at %v, outside [%v, %v)", jitter.A, at, from, to)
			}
			ats, distinct[at] = append(ats, at), true
		}
		if len(distinct) < 60 {
			t.Fatalf("jitter %v: 64 callers resumed at %d instants: lockstep", jitter.A, len(distinct))
		}
		inOrder := true
		for i := 1; i < len(ats); i++ {
			inOrder = inOrder && ats[i] >= ats[i-1]
		}
		if inOrder {
			t.Fatalf("jitter %v: callers resume in the order they paused", jitter.A)
		}
		if at := p.resumeAt(clock.Never); at != clock.Never {
			t.Fatalf("jitter %v: a pause to the end of time resumes at %v", jitter.A, at)
		}
		fresh := rand.New(sim.StreamSource(cfg.Run.Seed, "jitter"))
		if p.jitterRand.Uint64() != fresh.Uint64() {
			t.Fatalf("jitter %v: the wake order drew from the jitter stream", jitter.A)
		}
	}
}

package models_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
	"github.com/limitsim/limitsim/models"
)

// The SRE book's promise: while the backend accepts everything nothing is
// refused; when it accepts A per second of R > K·A offered, the client
// settles to sending about K·A and sheds the rest itself.
func TestSREThrottleSendsKTimesAccepts(t *testing.T) {
	s, err := models.NewSREThrottle(2, time.Minute, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	const offered, accepted = 100, 20 // per second
	var sent [300]int
	for sec := range 300 {
		admitted := 0
		for k := range offered {
			now := time.Duration(sec)*time.Second + time.Duration(k)*time.Second/offered
			if sec < 60 { // a healthy backend: everything accepted
				if _, st := s.Acquire(now, 1, clock.Never, nil, 0); st != models.Granted {
					t.Fatalf("refused at %v while the backend accepted everything", now)
				}
				s.Observe(now, false, 0)
				continue
			}
			if _, st := s.Acquire(now, 1, clock.Never, nil, 0); st == models.Granted {
				sent[sec]++
				admitted++
				s.Observe(now, admitted > accepted, 0) // the backend 429s beyond its 20/s
			}
		}
	}
	var late float64
	for _, n := range sent[240:] {
		late += float64(n)
	}
	late /= 60
	if math.Abs(late-2*accepted) > 0.15*2*accepted {
		t.Fatalf("sending %.1f/s against a backend accepting %d/s, want about K × %d = %d", late, accepted, accepted, 2*accepted)
	}
	if p := s.Usage(300 * time.Second); p < 0.5 {
		t.Fatalf("refusing with probability %.2f while offered 100/s against 20/s accepted", p)
	}
	// Once the backend is healthy again, refusals fade with the window.
	for k := range 60 * offered {
		now := 300*time.Second + time.Duration(k)*time.Second/offered
		if _, st := s.Acquire(now, 1, clock.Never, nil, 0); st == models.Granted {
			s.Observe(now, false, 0)
		}
	}
	if p := s.Usage(361 * time.Second); p != 0 {
		t.Fatalf("still refusing with probability %.2f a window after the backend recovered", p)
	}
}

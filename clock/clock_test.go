package clock_test

import (
	"math"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
)

// Named instants used across the tests.
const (
	maxT = time.Duration(math.MaxInt64)
	minT = time.Duration(math.MinInt64)
	sec  = time.Second
)

// TestAdd checks ordinary sums and saturation in both directions. It catches
// an Add that wraps around (a huge delay becoming an instant in the past), a
// saturation test off by one at the exact boundary, saturation to the wrong
// end, and a guard that fires for sums that do fit (mixed signs never
// overflow).
func TestAdd(t *testing.T) {
	cases := []struct {
		name string
		t, d time.Duration
		want time.Duration
	}{
		{"zero", 0, 0, 0},
		{"ordinary", 5 * sec, 3 * sec, 8 * sec},
		{"negative delay", 5 * sec, -7 * sec, -2 * sec},
		{"from a negative instant", -5 * sec, 2 * sec, -3 * sec},
		{"lands exactly on the largest instant", maxT - 10, 10, maxT},
		{"one past the largest instant", maxT - 10, 11, maxT},
		{"largest plus largest", maxT, maxT, maxT},
		{"never plus one", clock.Never, 1, clock.Never},
		{"huge delay from a positive now", sec, maxT, maxT},
		{"lands exactly on the smallest instant", minT + 10, -10, minT},
		{"one past the smallest instant", minT + 10, -11, minT},
		{"smallest plus smallest", minT, minT, minT},
		{"huge negative delay from a negative now", -sec, minT, minT},
		{"mixed signs at the extremes fit", maxT, minT, -1},
		{"huge delay from a negative now fits", -sec, maxT, maxT - sec},
		{"huge negative delay from a positive now fits", sec, minT, minT + sec},
		{"largest instant minus a little", maxT, -sec, maxT - sec},
	}
	for _, c := range cases {
		if got := clock.Add(c.t, c.d); got != c.want {
			t.Errorf("%s: Add(%d, %d) = %d, want %d", c.name, c.t, c.d, got, c.want)
		}
	}
}

// TestNever pins "no deadline" to the largest instant: a smaller value would
// let a far deadline fire, and Add must keep Never at Never.
func TestNever(t *testing.T) {
	if clock.Never != maxT {
		t.Fatalf("Never = %d, want math.MaxInt64", clock.Never)
	}
	if got := clock.Add(clock.Never, time.Hour); got != clock.Never {
		t.Fatalf("Add(Never, 1h) = %d, want Never", got)
	}
}

// fakeSched records the one At call After makes.
type fakeSched struct {
	now    time.Duration
	calls  int
	at     time.Duration
	h      clock.Handler
	arg    uint64
	result clock.Timer
}

func (f *fakeSched) Now() time.Duration { return f.now }
func (f *fakeSched) At(t time.Duration, h clock.Handler, arg uint64) clock.Timer {
	f.calls++
	f.at, f.h, f.arg = t, h, arg
	return f.result
}
func (f *fakeSched) Post(t time.Duration, h clock.Handler, arg uint64) { f.At(t, h, arg) }
func (f *fakeSched) Cancel(clock.Timer) bool                           { return false }

// TestAfter checks that After schedules at Now + d with the given handler and
// argument, saturates instead of wrapping to the past, and returns the
// scheduler's timer. It catches an After that ignores Now, adds without
// saturation, drops arg, or returns a zero timer.
func TestAfter(t *testing.T) {
	const arg = 42
	h := clock.HandlerFunc(func(time.Duration, uint64) {})
	cases := []struct {
		name   string
		now, d time.Duration
		want   time.Duration
	}{
		{"ordinary", 10 * sec, 250 * time.Millisecond, 10*sec + 250*time.Millisecond},
		{"zero delay", 10 * sec, 0, 10 * sec},
		{"huge delay saturates", 10 * sec, maxT, clock.Never},
		{"negative delay", 10 * sec, -sec, 9 * sec},
	}
	for _, c := range cases {
		f := &fakeSched{now: c.now, result: clock.MakeTimer(3, 7)}
		tm := clock.After(f, c.d, h, arg)
		if f.calls != 1 || f.at != c.want || f.arg != arg || f.h == nil {
			t.Errorf("%s: After(now %v, %v) called At %d times with (%d, arg %d), want once with (%d, arg %d)",
				c.name, c.now, c.d, f.calls, f.at, f.arg, c.want, arg)
		}
		if tm != f.result {
			t.Errorf("%s: After returned %+v, want the scheduler's timer %+v", c.name, tm, f.result)
		}
	}
}

// TestHandlerFunc checks that Fire passes now and arg through unchanged, in
// that order. It catches swapped or dropped arguments.
func TestHandlerFunc(t *testing.T) {
	const fireAt, arg = 1500 * time.Millisecond, uint64(1<<40 + 3)
	var gotNow time.Duration
	var gotArg uint64
	calls := 0
	var h clock.Handler = clock.HandlerFunc(func(now time.Duration, a uint64) {
		calls++
		gotNow, gotArg = now, a
	})
	h.Fire(fireAt, arg)
	if calls != 1 || gotNow != fireAt || gotArg != arg {
		t.Fatalf("Fire(%v, %d): %d calls with (%v, %d)", fireAt, arg, calls, gotNow, gotArg)
	}
}

// TestTimerParts checks that MakeTimer and Parts round-trip and that only a
// zero key makes the empty timer. It catches Parts returning the fields
// swapped or truncated, and an IsZero that looks at the slot (slot 0 is a
// valid slot for a live event).
func TestTimerParts(t *testing.T) {
	cases := []struct {
		slot uint32
		key  uint64
		zero bool
	}{
		{0, 0, true},
		{5, 0, true},
		{0, 1, false},
		{7, 9, false},
		{math.MaxUint32, math.MaxUint64, false},
	}
	for _, c := range cases {
		tm := clock.MakeTimer(c.slot, c.key)
		slot, key := tm.Parts()
		if slot != c.slot || key != c.key {
			t.Errorf("MakeTimer(%d, %d).Parts() = (%d, %d)", c.slot, c.key, slot, key)
		}
		if tm.IsZero() != c.zero {
			t.Errorf("MakeTimer(%d, %d).IsZero() = %v, want %v", c.slot, c.key, tm.IsZero(), c.zero)
		}
	}
	var empty clock.Timer
	if !empty.IsZero() || empty != clock.MakeTimer(0, 0) {
		t.Fatal("the zero Timer is not the empty timer")
	}
}

package models

import "strconv"

// Bound limits how many may wait in a line. The zero Bound is unbounded;
// AtMost(0) never lets anyone wait.
type Bound struct {
	n   int
	set bool
}

// Unbounded is the Bound that lets any number wait.
var Unbounded = Bound{}

// AtMost returns the Bound that lets at most n wait (n < 0 is taken as 0).
func AtMost(n int) Bound { return Bound{n: max(n, 0), set: true} }

// Max returns the bound and whether there is one.
func (b Bound) Max() (n int, ok bool) { return b.n, b.set }

// Admits reports whether one more may join a line holding waiting.
func (b Bound) Admits(waiting int) bool { return !b.set || waiting < b.n }

// MarshalTOML writes the bound as the count it is (a scenario leaves an
// unbounded line's max_waiting out).
func (b Bound) MarshalTOML() ([]byte, error) { return strconv.AppendInt(nil, int64(b.n), 10), nil }

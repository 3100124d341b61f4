package eventq

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/limitsim/limitsim/clock"
)

type rec struct{ got []uint64 }

func (r *rec) Fire(_ time.Duration, arg uint64) { r.got = append(r.got, arg) }

// Against a reference (a stable sort of the surviving events), with random
// cancellations that trigger compaction and a sequence counter that wraps
// into a renumbering mid-run.
func TestAgainstSortedReference(t *testing.T) {
	for _, nearWrap := range []bool{false, true} {
		var q Queue
		if nearWrap {
			q.seq = seqLimit - 3000
		}
		r := rand.New(rand.NewPCG(3, 4))
		type ev struct {
			at  time.Duration
			id  uint64
			tmr clock.Timer
		}
		var evs []ev
		h := &rec{}
		for i := range uint64(6000) {
			at := time.Duration(r.IntN(500)) // many ties
			evs = append(evs, ev{at, i, q.Push(at, h, i)})
		}
		alive := evs[:0:0]
		for _, e := range evs {
			if r.IntN(3) == 0 {
				alive = append(alive, e)
			} else if !q.Cancel(e.tmr) {
				t.Fatal("cancel failed")
			}
		}
		if q.Len() != len(alive) {
			t.Fatalf("len %d, want %d", q.Len(), len(alive))
		}
		slices.SortStableFunc(alive, func(a, b ev) int { return int(a.at - b.at) })
		for q.Len() > 0 {
			_, hh, arg, _ := q.Pop()
			hh.Fire(0, arg)
		}
		if len(h.got) != len(alive) {
			t.Fatalf("popped %d, want %d", len(h.got), len(alive))
		}
		for i, e := range alive {
			if h.got[i] != e.id {
				t.Fatalf("nearWrap=%v: position %d got %d want %d", nearWrap, i, h.got[i], e.id)
			}
		}
		if nearWrap && q.seq >= seqLimit-3000 {
			t.Fatal("sequence was not renumbered")
		}
	}
}

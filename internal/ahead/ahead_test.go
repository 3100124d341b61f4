package ahead

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// TestStreamsGiveTheirDrawsInOrder reads three streams, interleaved
// unevenly over many batches, and holds each value to the same source
// drawn directly: a batch handed back out of order, a value skipped or
// read twice at a batch's edge, or two streams' batches crossed would
// each show.
func TestStreamsGiveTheirDrawsInOrder(t *testing.T) {
	d := NewDrawer()
	defer d.Close()
	const n = 3
	var streams [n]*Stream
	var direct [n]*rand.Rand
	for i := range n {
		src := rand.New(rand.NewPCG(uint64(i), 7))
		direct[i] = rand.New(rand.NewPCG(uint64(i), 7))
		s, err := d.Stream(func() uint64 { return src.Uint64() })
		if err != nil {
			t.Fatal(err)
		}
		streams[i] = s
	}
	pick := rand.New(rand.NewPCG(99, 1))
	reads := [n]int{}
	for range 24 * BatchSize {
		i := pick.IntN(n)
		if i == 2 && pick.IntN(4) > 0 { // the third stream read a quarter as often
			continue
		}
		if got, want := streams[i].Next(), direct[i].Uint64(); got != want {
			t.Fatalf("stream %d value %d: %d, drawn directly %d", i, reads[i], got, want)
		}
		reads[i]++
	}
	for i, r := range reads {
		if r < 15*firstBatch+BatchSize { // the four first batches, from firstBatch up, and a full one
			t.Fatalf("stream %d read %d values: the test crosses too few batches", i, r)
		}
	}
}

// TestDrawerServesAtMostMaxStreams refuses the stream beyond the limit,
// says how many are free before each, and closes with streams never read.
func TestDrawerServesAtMostMaxStreams(t *testing.T) {
	d := NewDrawer()
	for i := range MaxStreams {
		if free := d.Free(); free != MaxStreams-i {
			t.Fatalf("before stream %d: %d free, want %d", i, free, MaxStreams-i)
		}
		if _, err := d.Stream(func() uint64 { return uint64(i) }); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
	}
	if free := d.Free(); free != 0 {
		t.Fatalf("%d free once every stream is taken", free)
	}
	if _, err := d.Stream(func() uint64 { return 0 }); !errors.Is(err, ErrFull) {
		t.Fatalf("stream %d: %v, want ErrFull", MaxStreams+1, err)
	}
	d.Close() // returns: the goroutine ends with batches filled and unread
}

// TestDrawsStayBounded reads many batches of one stream and counts the
// draws: never more than the stream's batches ahead of what was read.
func TestDrawsStayBounded(t *testing.T) {
	d := NewDrawer()
	var drawn uint64
	s, err := d.Stream(func() uint64 { drawn++; return drawn })
	if err != nil {
		t.Fatal(err)
	}
	const reads = 3*BatchSize + 17
	for i := range reads {
		if v := s.Next(); v != uint64(i+1) {
			t.Fatalf("value %d: %d", i, v)
		}
	}
	d.Close() // drawn is read after the goroutine ended
	if limit := uint64(reads + batchesPerStream*BatchSize); drawn > limit {
		t.Fatalf("%d values drawn for %d read: more than %d batches ahead", drawn, reads, batchesPerStream)
	}
}

// BenchmarkNext is the cost of reading one value drawn ahead.
func BenchmarkNext(b *testing.B) {
	d := NewDrawer()
	defer d.Close()
	var x uint64
	s, _ := d.Stream(func() uint64 { x++; return x })
	var sum uint64
	for b.Loop() {
		sum += s.Next()
	}
	_ = sum
}

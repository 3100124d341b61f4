package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// gcSettings reads the collector's percent and memory limit.
func gcSettings() (percent int, limit int64) {
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// setGC sets the collector's percent and memory limit for the test and
// puts the ones before back after it.
func setGC(t *testing.T, percent int, limit int64) {
	t.Helper()
	oldLimit := debug.SetMemoryLimit(limit)
	oldPercent := debug.SetGCPercent(percent)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})
}

var gcSink [][]byte

// TestHoldingGCHoldsTheCollectorOffAndPutsItBack: while a scenario loads
// no collection runs short of the heap given (or of a lower limit the
// user set), and afterwards the collector is as it was, whether the load
// returned or panicked; a collector left off would let a run's heap grow
// without bound.
func TestHoldingGCHoldsTheCollectorOffAndPutsItBack(t *testing.T) {
	setGC(t, 150, 1<<40)
	var inPercent int
	var inLimit int64
	var gcs uint32
	holdingGC(256<<20, func() {
		inPercent, inLimit = gcSettings()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 1 << 17 { // 16 MiB in small objects, several times the heap's goal
			gcSink = append(gcSink, make([]byte, 128))
			if len(gcSink) == 1024 {
				gcSink = gcSink[:0]
			}
		}
		runtime.ReadMemStats(&after)
		gcs = after.NumGC - before.NumGC
	})
	gcSink = nil
	if inPercent != -1 || inLimit != 256<<20 {
		t.Errorf("while holding: GC percent %d, memory limit %d; want -1 and %d", inPercent, inLimit, 256<<20)
	}
	if gcs != 0 {
		t.Errorf("%d collections ran while the collector was held off", gcs)
	}
	if p, l := gcSettings(); p != 150 || l != 1<<40 {
		t.Errorf("after: GC percent %d, memory limit %d; want 150 and %d", p, l, int64(1<<40))
	}

	// A lower limit the user set stays, during and after.
	setGC(t, 100, 32<<20)
	holdingGC(256<<20, func() { inPercent, inLimit = gcSettings() })
	if inPercent != -1 || inLimit != 32<<20 {
		t.Errorf("under a lower limit, while holding: GC percent %d, memory limit %d; want -1 and %d", inPercent, inLimit, 32<<20)
	}
	if p, l := gcSettings(); p != 100 || l != 32<<20 {
		t.Errorf("under a lower limit, after: GC percent %d, memory limit %d", p, l)
	}

	// A panic in the load leaves the collector as it was too.
	func() {
		defer func() { _ = recover() }()
		holdingGC(256<<20, func() { panic("load") })
	}()
	if p, l := gcSettings(); p != 100 || l != 32<<20 {
		t.Errorf("after a panic: GC percent %d, memory limit %d", p, l)
	}
}

// TestLoadPutsTheCollectorBack: run, validate and bench load through
// holdingGC, and a load that fails leaves the collector as one that
// succeeds does.
func TestLoadPutsTheCollectorBack(t *testing.T) {
	setGC(t, 120, 1<<40)
	if _, err := load("reference-model", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := load("no-such-scenario.toml", nil); err == nil {
		t.Fatal("a missing file loaded")
	}
	if p, l := gcSettings(); p != 120 || l != 1<<40 {
		t.Errorf("after loads: GC percent %d, memory limit %d; want 120 and %d", p, l, int64(1<<40))
	}
}

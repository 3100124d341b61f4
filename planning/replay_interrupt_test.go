package planning

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/sim/client"
)

// writeJSONLog writes n records, one every 10 ms from genT0, each
// answered 200.
func writeJSONLog(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"time\":%d,\"status\":200}\n", genT0.UnixMilli()+int64(10*i))
	}
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A replay stopped by its interrupt while it surveys the log (the first
// of its two readings, which a week of logs makes long) says so and
// runs nothing; without the interrupt the same log replays.
func TestReplaySurveyStopsOnInterrupt(t *testing.T) {
	path := writeJSONLog(t, 100)
	stop := new(atomic.Bool)
	log := ReplayLog{Path: path, Interrupt: stop}
	if _, _, err := Replay(replayScenario(t, 100, ""), log, client.Options{}); err != nil {
		t.Fatalf("not interrupted: %v", err)
	}
	stop.Store(true)
	_, _, err := Replay(replayScenario(t, 100, ""), log, client.Options{})
	if err == nil || !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "reading "+path+" at line") {
		t.Errorf("err %v, want ErrInterrupted naming %s", err, path)
	}
}

// A reading of a log looks at its interrupt every interruptEvery records:
// an interrupt set after the first few records stops it at the next look,
// not before, and not later.
func TestLogReadingLooksAtItsInterrupt(t *testing.T) {
	path := writeJSONLog(t, interruptEvery+5)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := logs.NewReader(f, path, logs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := ReplayLog{Path: path, Interrupt: new(atomic.Bool)}
	var rec logs.Record
	for {
		if rd.Records() == 3 {
			log.Interrupt.Store(true)
		}
		if err := log.interrupted(rd); err != nil {
			if rd.Records() != interruptEvery || !errors.Is(err, ErrInterrupted) {
				t.Fatalf("stopped after %d records (%v), want %d", rd.Records(), err, interruptEvery)
			}
			return
		}
		ok, err := rd.Next(&rec)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatalf("read all %d records without stopping", rd.Records())
		}
	}
}

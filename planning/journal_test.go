package planning

import (
	"bytes"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// resultsJSON is r as metrics.json holds it.
func resultsJSON(t *testing.T, r *metrics.Results) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := metrics.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A journaled replication reads back as the run gave it, under its own
// key only: another seed, another value or another type of value is
// another replication, and a torn record or one filed under another's
// name is no record.
func TestJournalReadsBackWhatItRecorded(t *testing.T) {
	src := writeSource(t, "two", twoInstances)
	j, err := OpenJournal(filepath.Join(t.TempDir(), "runs"))
	if err != nil {
		t.Fatal(err)
	}
	src.Journal = j
	at := []scenarios.Override{{Key: "client.limiter.bucket.rate", Value: 40.0}}
	ran, err := src.Simulate(at, 1, nil)
	if err != nil || j.Recorded() != 1 || j.Reused() != 0 {
		t.Fatalf("the run: %v; %d recorded, %d reused", err, j.Recorded(), j.Reused())
	}
	read, err := src.Simulate(at, 1, nil)
	if err != nil || j.Recorded() != 1 || j.Reused() != 1 {
		t.Fatalf("the run again: %v; %d recorded, %d reused", err, j.Recorded(), j.Reused())
	}
	if !bytes.Equal(resultsJSON(t, read), resultsJSON(t, ran)) {
		t.Fatal("the journaled results differ from the run's")
	}
	for _, v := range []any{"40", 41.0} {
		if journalKey([]scenarios.Override{{Key: "client.limiter.bucket.rate", Value: v}}, 1) == journalKey(at, 1) {
			t.Errorf("the value %#v has the key of 40.0", v)
		}
	}
	if journalKey(at, 2) == journalKey(at, 1) || j.lookup(at, 2) != nil {
		t.Error("another replication of the point shares the record")
	}
	// A record filed under another replication's name is not read for it.
	data, err := os.ReadFile(j.path(journalKey(at, 1)))
	if err != nil {
		t.Fatal(err)
	}
	other := []scenarios.Override{{Key: "client.limiter.bucket.rate", Value: 41.0}}
	os.WriteFile(j.path(journalKey(other, 1)), data, 0o644)
	if j.lookup(other, 1) != nil {
		t.Error("a record under a foreign name was read")
	}
	os.WriteFile(j.path(journalKey(at, 1)), data[:len(data)-1], 0o644)
	if j.lookup(at, 1) != nil {
		t.Error("a torn record was read")
	}
}

// A run stopped by the plan's interrupt is not recorded: it may have been
// cut short.
func TestJournalSkipsInterruptedRuns(t *testing.T) {
	src := writeSource(t, "two", twoInstances)
	j, err := OpenJournal(filepath.Join(t.TempDir(), "runs"))
	if err != nil {
		t.Fatal(err)
	}
	src.Journal = j
	spec := Spec{Source: src}
	spec.Interrupt = new(atomic.Bool)
	spec.Interrupt.Store(true)
	if _, err := src.Simulate(nil, 0, spec.Interrupt); err == nil || j.Recorded() != 0 {
		t.Fatalf("an interrupted run: %v, %d recorded", err, j.Recorded())
	}
}

// BenchmarkJournal is a replication run with no journal, run and
// recorded (a synced file and folder), and read back from the journal.
func BenchmarkJournal(b *testing.B) {
	src := writeSource(b, "two", twoInstances)
	at := []scenarios.Override{{Key: "client.limiter.bucket.rate", Value: 40.0}}
	b.Run("none", func(b *testing.B) {
		for b.Loop() {
			if _, err := src.Simulate(at, 0, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("recorded", func(b *testing.B) {
		for b.Loop() {
			j, err := OpenJournal(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			s := src
			s.Journal = j
			if _, err := s.Simulate(at, 0, nil); err != nil || j.Err() != nil {
				b.Fatal(err, j.Err())
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		j, err := OpenJournal(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		s := src
		s.Journal = j
		s.Simulate(at, 0, nil)
		for b.Loop() {
			if _, err := s.Simulate(at, 0, nil); err != nil || j.Reused() == 0 {
				b.Fatal(err)
			}
		}
	})
}

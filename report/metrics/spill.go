package metrics

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"sync"
)

// spillAbove is how many bytes of sealed blocks a series holds in memory.
// Beyond, it moves them to its spill file, so that a series' memory does
// not grow with the run's simulated time: a month of one-second intervals
// is about 30 MB packed, and with the collector's headroom a budget of
// 16 MiB cost twice as much again. Runs of the usual length (the
// 10⁸-request reference run, ten thousand tenants' or a thousand hosts'
// ten minutes, charts included) stay under it and never touch the disk.
const spillAbove = 4 << 20

// spillFile is where a series' first sealed blocks go: a temporary file,
// removed from its folder as soon as it is made (where the system allows;
// otherwise when the series is closed or collected), that the series reads
// back a block at a time.
type spillFile struct {
	file    *os.File
	removed bool    // the file is gone from its folder already
	ends    []int64 // each block's end in the file; block k starts at ends[k-1]
	mu      sync.Mutex
	closed  bool
	err     error // the first read that failed (reads may run at once: the charts while the CSV is written)
	done    runtime.Cleanup
}

// blocks returns the number of blocks in the file (0 for none).
func (spill *spillFile) blocks() int {
	if spill == nil {
		return 0
	}
	return len(spill.ends)
}

// failure returns the first read that failed, or nil.
func (spill *spillFile) failure() error {
	if spill == nil {
		return nil
	}
	spill.mu.Lock()
	defer spill.mu.Unlock()
	return spill.err
}

// read returns block k, read into buf (grown as needed, and returned), or
// nil if the read failed.
func (spill *spillFile) read(k int, buf []byte) ([]byte, []byte) {
	var from int64
	if k > 0 {
		from = spill.ends[k-1]
	}
	n := int(spill.ends[k] - from)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := spill.file.ReadAt(buf, from); err != nil {
		spill.mu.Lock()
		if spill.err == nil {
			spill.err = fmt.Errorf("reading the time series back from its temporary file: %w", err)
		}
		spill.mu.Unlock()
		return nil, buf
	}
	return buf, buf
}

// spillBlocks moves the sealed blocks held in memory to the spill file,
// making the file first. If the file cannot be made or written, the
// blocks stay in memory (and the series no longer tries): the run goes on
// as before, only using more memory.
func (s *Series) spillBlocks() {
	if s.stuck {
		return
	}
	if s.file == nil {
		f, err := newSpillFile()
		if err != nil {
			s.stuck = true
			return
		}
		s.file = f
	}
	spill := s.file
	at := int64(0)
	if n := len(spill.ends); n > 0 {
		at = spill.ends[n-1]
	}
	w := bufio.NewWriterSize(spill.file, 1<<16)
	ends := make([]int64, 0, len(s.blocks))
	for _, b := range s.blocks {
		if _, err := w.Write(b); err != nil {
			s.stuck = true
			return
		}
		at += int64(len(b))
		ends = append(ends, at)
	}
	if err := w.Flush(); err != nil {
		s.stuck = true
		return
	}
	spill.ends = append(spill.ends, ends...)
	clear(s.blocks)
	s.blocks = s.blocks[:0]
	s.held = 0
}

// newSpillFile makes a spill file in the system's temporary folder.
func newSpillFile() (*spillFile, error) {
	f, err := os.CreateTemp("", "limitsim-series-*")
	if err != nil {
		return nil, err
	}
	removed := os.Remove(f.Name()) == nil // an open file stays readable where this works
	spill := &spillFile{file: f, removed: removed}
	spill.done = runtime.AddCleanup(spill, func(f *os.File) {
		f.Close()
		if !removed {
			os.Remove(f.Name())
		}
	}, f)
	return spill, nil
}

// Close lets go of the series' spill file, if it has one: the rows moved
// there then read as NaN, and Err says why. A series that is not closed
// lets go of it when it is collected.
func (s *Series) Close() error {
	if s == nil || s.file == nil {
		return nil
	}
	spill := s.file
	spill.mu.Lock()
	defer spill.mu.Unlock()
	if spill.closed {
		return nil
	}
	spill.closed = true
	spill.done.Stop()
	err := spill.file.Close()
	if !spill.removed {
		os.Remove(spill.file.Name())
	}
	return err
}

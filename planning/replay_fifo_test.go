//go:build unix

package planning

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/limitsim/limitsim/sim/client"
)

// A log that is not a regular file is refused before it is read: a
// directory, and a pipe, which the second reading would find empty and
// call a log with no usable line.
func TestReplayAndCalibrateRefuseAPipeOrDirectory(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "log.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() { // a writer, so that the open of the FIFO does not block
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			fmt.Fprintf(f, "{\"time\":%d,\"status\":200}\n", genT0.UnixMilli())
			f.Close()
		}
	}()
	for _, path := range []string{dir, fifo} {
		log := ReplayLog{Path: path}
		_, _, err := Replay(replayScenario(t, 100, ""), log, client.Options{})
		if err == nil || !errors.Is(err, ErrReplay) || !strings.Contains(err.Error(), path+": not a regular file") {
			t.Errorf("replay of %s: %v, want ErrReplay naming it as no regular file", path, err)
		}
		if path == fifo {
			continue // one reading of a FIFO is enough
		}
		if _, err := Calibrate(log, 1); err == nil || !errors.Is(err, ErrCalibrate) || !strings.Contains(err.Error(), path+": not a regular file") {
			t.Errorf("calibrate of %s: %v, want ErrCalibrate naming it as no regular file", path, err)
		}
	}
}

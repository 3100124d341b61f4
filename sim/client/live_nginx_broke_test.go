package client

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// An attempt nginx breaks (its connections spent past 512 requests in
// flight) is the live server's limit, said as such with what nginx wrote,
// not an internal error; without nginx the error is as it was.
func TestNginxBrokenAttemptIsExplained(t *testing.T) {
	var none *liveNginx
	if err := none.broke(io.EOF); err != io.EOF {
		t.Errorf("without nginx: %v", err)
	}
	n := &liveNginx{prefix: t.TempDir(), stderr: &tailBuffer{max: 4096}}
	n.stderr.Write([]byte("[warn] 1024 worker_connections are not enough, reusing connections\n"))
	err := n.broke(io.EOF)
	if !errors.Is(err, ErrLiveServer) || !strings.Contains(err.Error(), "at most 512 requests in flight") ||
		!strings.Contains(err.Error(), "worker_connections are not enough") {
		t.Errorf("behind nginx: %v", err)
	}
}

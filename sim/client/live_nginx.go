package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/limitsim/limitsim/upstream"
)

// LiveNginx puts a real nginx in front of a live run's loopback server:
// the scenario's nginx quota kinds are enforced by nginx, configured by
// NginxConfig, and no longer by the loopback server.
type LiveNginx struct {
	// Binary is the nginx executable to start.
	Binary string
	// Config is set by RunLive to the configuration nginx ran with.
	Config string
}

// nginxStartLimit bounds how long nginx may take to listen, and
// nginxStopLimit how long it may take to exit once told to, before it is
// killed: watchdogs for a loaded machine, not measures.
const (
	nginxStartLimit = 20 * time.Second
	nginxStopLimit  = 5 * time.Second
)

// liveNginx is the nginx process a live run started.
type liveNginx struct {
	cmd    *exec.Cmd
	prefix string
	addr   string
	exited chan struct{} // closed when the process has been reaped
	err    error         // why it exited, once exited is closed
	stderr *tailBuffer
	once   sync.Once
}

// startNginx starts bin in a temporary prefix with the configuration
// NginxConfig writes for cfg at speed in front of upstreamAddr, on a free
// loopback port, and returns once nginx accepts connections there; its
// configuration is the second result.
func startNginx(ctx context.Context, bin string, cfg *Config, speed float64, upstreamAddr string) (*liveNginx, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("choosing a port for nginx: %w", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	conf, err := NginxConfig(cfg, speed, addr, upstreamAddr)
	if err != nil {
		return nil, "", err
	}
	prefix, err := os.MkdirTemp("", "limitsim-nginx-")
	if err != nil {
		return nil, "", fmt.Errorf("nginx prefix: %w", err)
	}
	n := &liveNginx{prefix: prefix, addr: addr, exited: make(chan struct{}), stderr: &tailBuffer{max: 4096}}
	for _, dir := range []string{"logs", "temp"} {
		if err := os.Mkdir(filepath.Join(prefix, dir), 0o755); err != nil {
			os.RemoveAll(prefix)
			return nil, "", fmt.Errorf("nginx prefix: %w", err)
		}
	}
	confPath := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		os.RemoveAll(prefix)
		return nil, "", fmt.Errorf("nginx prefix: %w", err)
	}
	n.cmd = exec.Command(bin, "-p", prefix+string(filepath.Separator), "-c", confPath,
		"-e", filepath.Join(prefix, "logs", "error.log"), "-g", "daemon off;")
	n.cmd.Stdout, n.cmd.Stderr = n.stderr, n.stderr
	n.cmd.SysProcAttr = childProcAttr()
	if err := n.cmd.Start(); err != nil {
		os.RemoveAll(prefix)
		return nil, "", fmt.Errorf("%w: starting %s: %w", ErrLiveServer, bin, err)
	}
	go func() {
		n.err = n.cmd.Wait()
		close(n.exited)
	}()
	if err := n.awaitListening(ctx); err != nil {
		n.stop()
		return nil, "", err
	}
	return n, conf, nil
}

// awaitListening polls nginx's port until it accepts a connection, nginx
// exits, ctx ends, or nginxStartLimit passes.
func (n *liveNginx) awaitListening(ctx context.Context) error {
	deadline := time.Now().Add(nginxStartLimit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := net.DialTimeout("tcp", n.addr, 100*time.Millisecond)
		if err == nil {
			conn.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: nginx does not listen on %s after %v%s", ErrLiveServer, n.addr, nginxStartLimit, n.said())
		}
		select {
		case <-n.exited:
			status := "exit status 0"
			if n.err != nil {
				status = n.err.Error()
			}
			return fmt.Errorf("%w: nginx exited before listening (%s)%s", ErrLiveServer, status, n.said())
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// said is what nginx wrote to its stderr and error log, for an error.
func (n *liveNginx) said() string {
	text := strings.TrimSpace(n.stderr.String())
	if log, err := os.ReadFile(filepath.Join(n.prefix, "logs", "error.log")); err == nil {
		text = strings.TrimSpace(text + "\n" + lastLines(string(log), 5))
	}
	if text == "" {
		return ""
	}
	return ":\n" + text
}

// stop tells nginx to exit (SIGTERM, its fast shutdown), kills it if it
// has not within nginxStopLimit, reaps it and removes its prefix. It may
// be called more than once.
func (n *liveNginx) stop() {
	if n == nil {
		return // no nginx: nothing to stop
	}
	n.once.Do(func() {
		select {
		case <-n.exited:
		default:
			if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				n.cmd.Process.Kill() //nolint:errcheck // it may have gone already
			}
			t := time.NewTimer(nginxStopLimit)
			select {
			case <-n.exited:
				t.Stop()
			case <-t.C:
				n.cmd.Process.Kill() //nolint:errcheck // it may have gone already
				<-n.exited
			}
		}
		os.RemoveAll(n.prefix)
	})
}

// lastLines is the last k lines of text.
func lastLines(text string, k int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-k):], "\n")
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

// Write keeps p, dropping what is older than the last max bytes.
func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

// String returns what is kept.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// withoutNginxQuotas is cfg with every nginx quota kind taken off its
// upstreams: what the loopback server enforces when nginx does those.
func withoutNginxQuotas(cfg *Config) *Config {
	c := *cfg
	c.Upstreams = make([]upstream.Config, len(cfg.Upstreams))
	for i, u := range cfg.Upstreams {
		u.Quotas = nil
		for _, q := range cfg.Upstreams[i].Quotas {
			if !IsNginxQuota(q) {
				u.Quotas = append(u.Quotas, q)
			}
		}
		c.Upstreams[i] = u
	}
	return &c
}

// FindNginx resolves --nginx's value: a path to the executable, or "auto"
// for nginx on PATH or in /usr/sbin (where Debian puts it, off a user's
// PATH).
func FindNginx(name string) (string, error) {
	if name != "auto" {
		path, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("nginx %q: %w", name, err)
		}
		return path, nil
	}
	if path, err := exec.LookPath("nginx"); err == nil {
		return path, nil
	}
	for _, path := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"} {
		if st, err := os.Stat(path); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return path, nil
		}
	}
	return "", errors.New("nginx not found on PATH nor in /usr/sbin (install it: apt-get install nginx-light; or give its path)")
}

// base is the address the clients send to: nginx's when the run is
// behind one (n not nil), else the loopback server's, upstreamAddr.
func (n *liveNginx) base(upstreamAddr string) string {
	if n == nil {
		return "http://" + upstreamAddr
	}
	return "http://" + n.addr
}

// nginxInFlight is the most requests in flight one nginx of the
// configuration serves: worker_connections 1024, two connections a
// request (the client's and the one to the loopback server).
const nginxInFlight = 512

// broke explains err, an attempt that failed behind nginx (n not nil):
// nginx closes the connections it cannot serve, most likely for more
// requests in flight than its connections allow. Without nginx, err is
// as it is.
func (n *liveNginx) broke(err error) error {
	if n == nil {
		return err
	}
	return fmt.Errorf("%w: nginx broke an attempt's connection (%v): it serves at most %d requests in flight (worker_connections 1024, two connections a request); offer less load, or run without --nginx%s",
		ErrLiveServer, err, nginxInFlight, n.said())
}

package client

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/upstream"
)

var updateNginx = flag.Bool("update", false, "rewrite testdata/nginx.conf.golden")

// nginxHosts is a scenario's upstreams with one of each nginx quota shape:
// limit_req nodelay (429s), limit_req delay=5 in requests per minute,
// limit_conn, and a host with a token bucket only, which nginx passes
// through unlimited to the loopback server.
func nginxHosts() *Config {
	none := upstream.RetryAfter{None: true}
	return &Config{Upstreams: []upstream.Config{
		{Host: "api", RetryAfter: none, Quotas: []upstream.Quota{
			{Kind: kindname.QuotaNginxLimitReq, Rate: 50, Burst: 20, NoDelay: true, Status: 429}}},
		{Host: "search", RetryAfter: none, Quotas: []upstream.Quota{
			{Kind: kindname.QuotaNginxLimitReq, Rate: 10.0 / 60, Per: time.Minute, Burst: 12, Delay: 5}}},
		{Host: "upload", RetryAfter: none, Quotas: []upstream.Quota{
			{Kind: kindname.QuotaNginxLimitConn, Permits: 8}}},
		{Host: "static", RetryAfter: upstream.RetryAfter{Fixed: time.Second}, Quotas: []upstream.Quota{
			{Kind: kindname.QuotaTokenBucket, Rate: 10, Burst: 10}}},
	}}
}

// The configuration of a nodelay, a delay and a limit_conn quota, at speed
// 2 (rates doubled; 10r/m stays per minute), is exactly the golden file:
// zones keyed on the server name, one location per host with its
// directives and statuses (the default 503 where the scenario sets none),
// kept-alive proxying, and the token-bucket-only host left to the
// loopback server.
func TestNginxConfigGolden(t *testing.T) {
	got, err := NginxConfig(nginxHosts(), 2, "127.0.0.1:8080", "127.0.0.1:9090")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "nginx.conf.golden")
	if *updateNginx {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("nginx.conf differs from %s (go test -run TestNginxConfigGolden -update):\n%s", path, got)
	}
}

// What nginx cannot enforce as the simulation models it is refused with
// ErrNginx, naming the host and quota.
func TestNginxConfigRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*Config)
		speed float64
		want  string
	}{
		{"no nginx quota", func(c *Config) { c.Upstreams = c.Upstreams[3:] }, 1, "nothing for nginx to enforce"},
		{"fractional rate", func(*Config) {}, 1.01, "upstream api: quota: rate 50r/s at speed 1.01 is 50.5r/s"},
		{"retry-after", func(c *Config) { c.Upstreams[0].RetryAfter = upstream.RetryAfter{Reset: true} }, 1, "upstream api: retry_after"},
		{"headers", func(c *Config) { c.Headers.PauseAtZero = true }, 1, "nginx sends no rate-limit headers"},
		{"two statuses", func(c *Config) {
			c.Upstreams[0].Quotas = append(c.Upstreams[0].Quotas, upstream.Quota{Kind: kindname.QuotaNginxLimitReq, Rate: 5, Burst: 1})
		}, 1, "quota[1]: status 503: nginx has one limit_req_status per location"},
		{"limit_req and a token bucket", func(c *Config) {
			c.Upstreams[1].Quotas = append(c.Upstreams[1].Quotas, upstream.Quota{Kind: kindname.QuotaTokenBucket, Rate: 100, Burst: 100})
		}, 1, "upstream search: quota[1]: a token_bucket with nginx's quotas on one host"},
		{"limit_req and limit_conn", func(c *Config) {
			c.Upstreams[2].Quotas = append(c.Upstreams[2].Quotas, upstream.Quota{Kind: kindname.QuotaNginxLimitReq, Rate: 5, Burst: 1})
		}, 1, "upstream upload: nginx_limit_req and nginx_limit_conn on one host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := nginxHosts()
			c.edit(cfg)
			_, err := NginxConfig(cfg, c.speed, "127.0.0.1:8080", "127.0.0.1:9090")
			if !errors.Is(err, ErrNginx) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want ErrNginx saying %q", err, c.want)
			}
		})
	}
}

// The loopback server behind nginx keeps every quota but nginx's, and
// the scenario's own configuration is left as it was.
func TestWithoutNginxQuotas(t *testing.T) {
	cfg := nginxHosts()
	got := withoutNginxQuotas(cfg)
	var kinds []string
	for _, u := range got.Upstreams {
		for _, q := range u.Quotas {
			kinds = append(kinds, u.Host+":"+q.Kind)
		}
	}
	want := "static:token_bucket"
	if strings.Join(kinds, " ") != want {
		t.Errorf("loopback quotas %v, want %s", kinds, want)
	}
	if len(cfg.Upstreams[1].Quotas) != 1 || len(cfg.Upstreams[0].Quotas) != 1 {
		t.Errorf("the scenario's own quotas changed: %+v", cfg.Upstreams)
	}
}

// The golden configuration is one nginx loads (nginx -t, in a prefix of
// its own). Set LIMITSIM_NGINX_TEST=1 to run it (CI does, after
// installing nginx-light).
func TestNginxConfigLoads(t *testing.T) {
	if os.Getenv("LIMITSIM_NGINX_TEST") == "" {
		t.Skip("set LIMITSIM_NGINX_TEST=1 to check the configuration with nginx -t (apt-get install nginx-light)")
	}
	bin, err := FindNginx("auto")
	if err != nil {
		t.Fatal(err)
	}
	conf, err := NginxConfig(nginxHosts(), 2, "127.0.0.1:8080", "127.0.0.1:9090")
	if err != nil {
		t.Fatal(err)
	}
	prefix := t.TempDir()
	for _, dir := range []string{"logs", "temp"} {
		if err := os.Mkdir(filepath.Join(prefix, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-t", "-p", prefix+"/", "-c", path, "-e", filepath.Join(prefix, "logs", "error.log"), "-g", "daemon off;").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "test is successful") {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}

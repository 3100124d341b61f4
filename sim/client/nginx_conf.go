package client

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/upstream"
)

// ErrNginx is a scenario a live run cannot put behind a real nginx: no
// nginx quota kind to enforce, or one nginx's configuration cannot say as
// the simulation models it.
var ErrNginx = errors.New("client: not expressible in nginx's configuration")

// IsNginxQuota reports whether q is one of nginx's quota kinds, which a
// live run with nginx leaves to nginx.
func IsNginxQuota(q upstream.Quota) bool {
	return q.Kind == kindname.QuotaNginxLimitReq || q.Kind == kindname.QuotaNginxLimitConn
}

// hostNginx reports whether upstream u carries an nginx quota kind.
func hostNginx(u upstream.Config) bool {
	return slices.ContainsFunc(u.Quotas, IsNginxQuota)
}

// NginxConfig is the nginx configuration a live run at speed puts in
// front of its loopback server at upstreamAddr: nginx listens on listen,
// and for each upstream host carrying nginx quota kinds a location
// /h/HOST enforces them (limit_req_zone and limit_req, limit_conn_zone and
// limit_conn, each zone keyed on the server's name, so that every client
// draws on one state, as the simulated server's quota is shared) before
// proxying, over kept-alive connections, to the loopback server; every
// other path goes through unlimited. Rates are the scenario's times speed
// (its durations are divided by speed). Every path is relative to nginx's
// prefix (-p), so the text is the same wherever it runs. It fails with
// ErrNginx when no host carries an nginx quota, or when one cannot be
// written as the simulation models it.
func NginxConfig(cfg *Config, speed float64, listen, upstreamAddr string) (string, error) {
	var zones, locations strings.Builder
	found := false
	for h, u := range cfg.Upstreams {
		if !hostNginx(u) {
			continue
		}
		found = true
		if err := nginxHost(&zones, &locations, cfg, h, speed); err != nil {
			return "", fmt.Errorf("%w: upstream %s: %w", ErrNginx, u.Host, err)
		}
	}
	if !found {
		return "", fmt.Errorf("%w: no upstream has a quota of kind %s or %s: nothing for nginx to enforce",
			ErrNginx, kindname.QuotaNginxLimitReq, kindname.QuotaNginxLimitConn)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# nginx in front of limitsim live's loopback server, generated from the
# scenario's nginx quota kinds at speed %s (rates are the scenario's times
# the speed). Started as
#   nginx -p PREFIX/ -c PREFIX/nginx.conf -e PREFIX/logs/error.log -g 'daemon off;'
# in a temporary PREFIX: every path below is relative to it. One process
# (no master, no workers), so that stopping it leaves nothing behind and
# it runs the same as root or not.
master_process off;
pid logs/nginx.pid;
error_log logs/error.log warn;

events {
    # One connection from the client, one to the loopback server: up to
    # 512 requests in flight.
    worker_connections 1024;
}

http {
    access_log off;
    client_body_temp_path temp/client_body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;
    keepalive_requests 1000000;
    # The client counts refusals and delays; nginx need not log each.
    limit_req_log_level info;
    limit_conn_log_level info;
%s
    upstream loopback {
        server %s;
        keepalive 512;
    }

    server {
        listen %s;
        server_name limitsim;

        # Kept-alive connections to the loopback server: no connection
        # set-up in a request's time.
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_read_timeout 1h;
%s
        location / {
            proxy_pass http://loopback;
        }
    }
}
`, strconv.FormatFloat(speed, 'f', -1, 64), zones.String(), upstreamAddr, listen, locations.String())
	return b.String(), nil
}

// nginxHost writes host h's zones and location.
func nginxHost(zones, locations *strings.Builder, cfg *Config, h int, speed float64) error {
	u := cfg.Upstreams[h]
	if !u.RetryAfter.None {
		return fmt.Errorf("retry_after: nginx sends no Retry-After with its refusals (set retry_after = \"\")")
	}
	if cfg.Headers.read() {
		return fmt.Errorf("client.headers: nginx sends no rate-limit headers for the client to read")
	}
	var directives []string
	statuses := map[string]int{}
	kinds := map[string]bool{}
	for i, q := range u.Quotas {
		if !IsNginxQuota(q) {
			continue
		}
		zone := fmt.Sprintf("h%d_q%d", h, i)
		key := "quota"
		if len(u.Quotas) > 1 {
			key = fmt.Sprintf("quota[%d]", i)
		}
		directive := "limit_req"
		if q.Kind == kindname.QuotaNginxLimitConn {
			directive = "limit_conn"
		}
		if s, ok := statuses[directive]; ok && s != q.RefusalStatus() {
			return fmt.Errorf("%s: status %d: nginx has one %s_status per location, and another quota refuses with %d", key, q.RefusalStatus(), directive, s)
		}
		statuses[directive] = q.RefusalStatus()
		kinds[directive] = true
		switch directive {
		case "limit_req":
			rate, err := nginxRate(q, speed)
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			d := fmt.Sprintf("burst=%d", int64(q.Burst))
			switch {
			case q.NoDelay:
				d += " nodelay"
			case q.Delay > 0:
				d += " delay=" + strconv.FormatInt(q.Delay, 10)
			}
			scenarioRate, _ := nginxRate(q, 1)
			fmt.Fprintf(zones, "\n    # upstream %s, %s: %s rate=%s %s\n", u.Host, key, q.Kind, scenarioRate, d)
			fmt.Fprintf(zones, "    limit_req_zone $server_name zone=%s:1m rate=%s;\n", zone, rate)
			directives = append(directives, fmt.Sprintf("limit_req zone=%s %s;", zone, d))
		default:
			fmt.Fprintf(zones, "\n    # upstream %s, %s: %s conn=%d\n", u.Host, key, q.Kind, q.Permits)
			fmt.Fprintf(zones, "    limit_conn_zone $server_name zone=%s:1m;\n", zone)
			directives = append(directives, fmt.Sprintf("limit_conn %s %d;", zone, q.Permits))
		}
	}
	for i, q := range u.Quotas {
		if !IsNginxQuota(q) && len(directives) > 0 {
			// nginx passes a request on before the loopback's quota
			// refuses it, and has counted it; the simulated server
			// checks every quota at once, and a refusal takes from none.
			return fmt.Errorf("quota[%d]: a %s with nginx's quotas on one host: nginx counts every request it passes, those this quota then refuses too, where the simulated server checks both at once; put them on separate hosts", i, q.Kind)
		}
	}
	if kinds["limit_req"] && kinds["limit_conn"] {
		// nginx runs limit_req first (a held request holds no connection
		// yet; one limit_conn refuses was counted by limit_req), while the
		// simulated server checks every quota at once.
		return errors.New("nginx_limit_req and nginx_limit_conn on one host: nginx applies limit_req before limit_conn, the simulated server both at once; put them on separate hosts")
	}
	for _, directive := range []string{"limit_req", "limit_conn"} {
		if s, ok := statuses[directive]; ok {
			directives = append(directives, fmt.Sprintf("%s_status %d;", directive, s))
		}
	}
	fmt.Fprintf(locations, "\n        # upstream %s\n        location = /h/%d {\n", u.Host, h)
	for _, d := range directives {
		fmt.Fprintf(locations, "            %s\n", d)
	}
	locations.WriteString("            proxy_pass http://loopback;\n        }\n")
	return nil
}

// nginxRate is q's rate at speed as nginx writes it: whole requests per
// second ("50r/s"), or per minute ("600r/m") when the scenario wrote it so.
func nginxRate(q upstream.Quota, speed float64) (string, error) {
	unit, per := "r/s", 1.0
	if q.Per == time.Minute {
		unit, per = "r/m", 60
	}
	n := q.Rate * per * speed
	if r := math.Round(n); math.Abs(n-r) > 1e-9*max(1, n) || r < 1 {
		return "", fmt.Errorf("rate %s%s at speed %s is %s%s: nginx takes whole requests (pick a speed that makes it whole)",
			strconv.FormatFloat(q.Rate*per, 'f', -1, 64), unit, strconv.FormatFloat(speed, 'f', -1, 64), strconv.FormatFloat(n, 'f', -1, 64), unit)
	}
	return strconv.FormatInt(int64(math.Round(n)), 10) + unit, nil
}

package planning

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/scenarios"
)

// maxCalibratedDuration bounds the run a calibrated scenario asks for:
// a plan runs it many times, and a week's log is not a week's run.
const maxCalibratedDuration = 10 * time.Minute

// Scenario renders the calibration's model as a scenario: the
// log's arrivals (each host's mean rate, its weight among the hosts; the
// tenants' shares or their own processes, and the costs' distribution,
// when logged), each host's latency fit and inferred quota, and a client with no
// limiter, no pause and no retry, so that each of its attempts is one line
// of the log: production as it ran, for `plan` to put limiters in front
// of.
func (c *Calibration) Scenario(name string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "name = %q\n", name)
	fmt.Fprintf(&b, "description = %q\n\n", fmt.Sprintf("Calibrated from %s: %d requests over %v from %s. Arrivals at the log's mean rate, latency and server quota fitted per host (calibration.json says how well); the client has no limiter and neither pauses nor retries, as production's lines are its attempts.",
		filepath.Base(c.Log), c.Records, time.Duration(c.SpanS*1e9).Round(time.Second), c.Start))
	span := time.Duration(c.SpanS * 1e9).Round(time.Second) // as the header writes it
	fmt.Fprintf(&b, "[run]\nseed = 1\nduration = %q\n\n", min(max(span, time.Minute), maxCalibratedDuration).String())
	c.writeWorkload(&b)
	b.WriteString("\n[client]\n\n[client.on_429]\npause = \"none\"\n\n[client.retry]\nattempts = 1\n")
	if c.refusesWith(503) {
		b.WriteString("\n[client.on_limit]\nstatuses = [429, 503]\n")
	}
	for _, h := range c.Hosts {
		if err := writeUpstream(&b, h); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// refusesWith reports whether a host's quota refuses with status.
func (c *Calibration) refusesWith(status int) bool {
	for _, h := range c.Hosts {
		if h.Quota.Kind != "" && h.Quota.Status == status {
			return true
		}
	}
	return false
}

// writeUpstream writes a host's [[upstream]] table.
func writeUpstream(b *strings.Builder, h HostCalibration) error {
	host := h.Host
	if host == "" {
		host = "*"
	}
	latency, err := scenarios.Latency{Dist: h.Latency.dist}.MarshalTOML()
	if err != nil {
		return fmt.Errorf("host %s: latency: %w", host, err)
	}
	fmt.Fprintf(b, "\n[[upstream]]\nhost = %q\nlatency = %s\n", host, latency)
	if h.Latency.RejectS > 0 {
		fmt.Fprintf(b, "reject_latency = %q\n", time.Duration(h.Latency.RejectS*1e9).String())
	}
	q := h.Quota
	status := ""
	if q.Status != 0 && q.Status != 429 {
		status = fmt.Sprintf(", status = %d", q.Status)
	}
	if q.Unit != "" {
		status += fmt.Sprintf(", unit = %q", q.Unit)
	}
	switch q.Kind {
	case kindname.QuotaFixedWindow, kindname.QuotaSlidingWindow:
		fmt.Fprintf(b, "quota = { kind = %q, limit = %d, window = %q%s }\n", q.Kind, q.Limit, q.Window, status)
	case kindname.QuotaConcurrency:
		fmt.Fprintf(b, "quota = { kind = %q, permits = %d%s }\n", q.Kind, q.Limit, status)
	case kindname.QuotaTokenBucket:
		fmt.Fprintf(b, "quota = { kind = %q, rate = %s, burst = %s%s }\n", q.Kind,
			strconv.FormatFloat(q.Rate, 'f', -1, 64), strconv.FormatFloat(q.Burst, 'f', -1, 64), status)
	}
	return nil
}

package upstream

import "fmt"

// SharedConfig is a quota several hosts count together (a top-level
// [[quota]]): one hourly quota spanning every endpoint of an API, each
// endpoint keeping its own quotas beside it.
type SharedConfig struct {
	// Name names the quota in the scenario and the results.
	Name  string
	Quota Quota
	// Hosts are the upstreams that count it (indices into the run's
	// upstreams, in order).
	Hosts []int
}

// SharedQuota is a shared quota's state during one run: every server that
// counts it takes from the same core, so a request to any of them must
// pass it, and its reset and remaining show in the answers of each.
type SharedQuota struct {
	q    serverQuota
	kind string
}

// NewSharedQuota builds the state of the shared quota c for one run.
func NewSharedQuota(c SharedConfig) (*SharedQuota, error) {
	sq, err := newServerQuota(c.Quota, RefusedNone)
	if err != nil {
		return nil, fmt.Errorf("quota %s: %w", c.Name, err)
	}
	sq.name = c.Name
	return &SharedQuota{q: *sq, kind: c.Quota.Kind}, nil
}

// Counts returns the requests the quota took from (admitted by every
// quota of the host they went to), the 429s it refused and the units the
// admitted requests took from it when they started (one each, or their
// cost), over every host that counts it.
func (s *SharedQuota) Counts() (admitted, refused, taken int64) {
	return s.q.admitted, s.q.refused, s.q.taken
}

// CountsCost reports whether the quota counts cost.
func (s *SharedQuota) CountsCost() bool { return s.q.cost }

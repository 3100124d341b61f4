package metrics

// SharedQuotaStats is one quota several upstreams count together (a
// top-level [[quota]]), over the whole run and every host it counts.
type SharedQuotaStats struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Unit is what the quota counts: "requests" or "cost".
	Unit string `json:"unit"`
	// Upstreams are the hosts that count it.
	Upstreams []string `json:"upstreams"`
	// Admitted counts the attempts it took from (admitted by every quota
	// of their host); Refused the 429s it refused (an attempt refused by
	// this quota and another counts for both).
	Admitted int64 `json:"admitted"`
	Refused  int64 `json:"refused"`
	// Taken is what the admitted attempts took from it when they started:
	// one each, or their cost (with any response reserve) for unit "cost".
	Taken int64 `json:"taken"`
	// QuotaRPS is what a rate or window quota admits per second over all
	// its hosts (one that counts cost: its rate ÷ a request's mean cost);
	// absent for a concurrency quota.
	QuotaRPS *float64 `json:"quota_rps,omitempty"`
}

// Package prefetch asks the processor to bring a value's cache line in
// ahead of its use, without waiting for it: the state the next arrival will
// reach (its tenant's records, its limiters), read while the current one is
// handled, so that the misses of thousands of tenants or hosts overlap with
// work instead of stalling it.
package prefetch

// Package retry holds the back-off between retries of a throttled
// request: none, constant, or exponential to a cap, with full, equal or
// decorrelated jitter.
//
// It imports models (for its random durations) and the standard library.
package retry

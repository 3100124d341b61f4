// Package par runs numbered jobs on a few goroutines: a plan's points, a
// run's or a comparison's replications. Jobs start in the order of their
// numbers, and a job that fails stops the start of every job after it, so
// that a caller reading the results in order reads what running them one
// after another would have given.
package par

// Package arrivals holds the arrival processes of a workload: Poisson,
// constant, on/off bursts, a linear ramp and a recorded trace. A process is
// a pure function of the previous arrival instant and a random stream, like
// a load generator's pacer; Spec describes one and builds a fresh process
// for each run.
//
// It imports only the standard library.
package arrivals

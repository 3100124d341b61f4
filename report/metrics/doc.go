// Package metrics is the contract between a run and everything that reads
// it: the Results struct behind metrics.json, the per-interval Series
// behind timeseries.csv, and the streaming Recorder the client model writes
// into on every event (HdrHistogram waits, time-weighted levels for
// Little's Law, fixed-width interval rows). Its memory depends on the
// layout and the simulated duration, never on the number of requests.
//
// It is on the hot path: it imports no rendering or plotting library, no
// engine and no file format.
package metrics

// Package metrics is the contract between a run and everything that reads
// it: the Results struct behind metrics.json, the per-interval Series
// behind timeseries.csv, and the streaming Recorder the client model writes
// into on every event (HdrHistogram waits, time-weighted levels for
// Little's Law, fixed-width interval rows). Its memory depends on the
// layout and the simulated duration, never on the number of requests.
//
// It is on the hot path: it imports no rendering or plotting library, no
// engine and no file format.
//
// # Where the recorder's concerns live
//
// The Recorder (recorder.go) composes one type per concern, each owning
// its state, and keeps only the events that touch several of them
// (Arrived, Ended, Sent, Answered). The concerns are: the requests'
// counts and end-to-end times (requestCounts, requestTimes: requests.go);
// the time-weighted stages of a request and the ingest queue's waits
// (requestStages: stages.go); each limiter and its scopes (limiterSet:
// limiters.go, with the adaptive limits read back in adaptation.go); each
// host and its quota (hostSet: hosts.go); each tenant (tenantSet:
// tenants.go); and the interval clock and rows (timeline: timeline.go,
// with Tick, Fold and the order of the concerns' columns). Each concern
// names its columns (appendColumns), fills them at each Tick
// (appendInterval), fills its part of the Results at Finish (finish.go),
// and records its own events in a Recorder method in its file. What they
// are built of is apart: the run-long and interval histograms (hist.go,
// intervalhist.go), the time-weighted levels (levels.go), the sketches of
// per-scope, per-tenant and per-host distributions (sketch.go), and the
// static Layout of a run (layout.go). The Results types are in results.go
// and the Series' storage in series.go, pack.go and spill.go.
//
// A new metric therefore touches its concern's file and, when it is in
// metrics.json, the field it fills in results.go: a counter of requests
// is a field of requestCounts, counted where the event is, appended by
// appendColumns and appendInterval for timeseries.csv and copied into
// Requests by results, all in requests.go. A per-host column needs only
// its suffix in hostColumnSuffixes and its value in appendInterval
// (hosts.go). Only a new kind of event touching several concerns adds a
// method to recorder.go, and only a new concern touches timeline.go and
// finish.go.
package metrics

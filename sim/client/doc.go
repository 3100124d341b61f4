// Package client is the simulated client: one request's life from arrival
// through the ingest queue, the limiters of its path, the 429 pause check
// and the upstream, to the 429 pause and the retry, for every client
// instance of a deployment, on the virtual clock of a sim.Engine.
//
// It is configured by a plain Config (no file format: scenarios.Build makes
// one from a scenario file) and streams what it sees into a
// metrics.Recorder. It builds limiters from the kinds registered in models
// and servers from upstream, and must not import the file format
// (scenarios), the rendering (report) or any plotting library.
package client

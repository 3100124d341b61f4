// Package ahead draws a random stream's values ahead of their use, on a
// goroutine of its own, so that a simulation with a processor to spare
// does not wait on its variates (an exponential gap, a lognormal latency:
// a table lookup or a chain of dependent floating-point steps each).
//
// A Stream hands out, in order, exactly the values its draw function
// returns when called again and again: the draws run in batches on the
// Drawer's goroutine, and the batches come back to the stream in the
// order they were asked for. A stream's draw function must be the only
// user of the random source it reads, and a pure function of it, so that
// drawing early changes when each value is computed and nothing else: a
// run gives the same results with its streams drawn ahead or not.
//
// Memory is bounded: each stream owns a few batches, which go back and
// forth between the stream and the goroutine. It imports the standard
// library only.
package ahead

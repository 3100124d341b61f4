// Package refmodel is one fixed limiter scenario wired by hand from
// limitsim's own engine and limiters, without the client pipeline or the
// recorder: Poisson arrivals, a FIFO client token bucket, a FIFO semaphore,
// a bound on the total waiting, and an upstream token-bucket quota
// answering 429 when empty. It is the model of the bespoke event loop that
// `limitsim bench --compare` measures against, and BenchmarkFullPath times
// it: the floor the engine and limiters alone set under `limitsim run` on
// the same model (the bundled reference-model scenario), so that the gap
// between the two is the pipeline's and the recorder's.
//
// It imports the engine, the limiters and HdrHistogram; nothing imports it.
package refmodel

// Package refmodel is one fixed limiter scenario built from limitsim's own
// engine and limiters, used to measure limitsim's speed against a bespoke
// event loop of the same model: Poisson arrivals, a FIFO client token
// bucket, a FIFO semaphore, a bound on the total waiting, and an upstream
// token-bucket quota answering 429 when empty.
//
// It imports the engine, the limiters and HdrHistogram; nothing imports it
// but the bench command.
package refmodel

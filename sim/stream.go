package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// Stream returns a new random source for the named stream: the same
// (seed, name) always yields the same sequence, and different names are
// independent. Give each component its own name ("arrivals", "latency/api",
// "jitter/on_429") so that changing one policy does not shift the numbers
// any other component draws: two policies compared on one seed see the same
// arrivals and the same latencies (common random numbers).
//
// Each call returns a fresh source positioned at the stream's start.
func (e *Engine) Stream(name string) *rand.Rand {
	return rand.New(StreamSource(e.seed, name))
}

// StreamSource returns the PCG source for (seed, name) without an engine.
func StreamSource(seed uint64, name string) *rand.PCG {
	h := fnv.New64a()
	h.Write([]byte(name))
	k := h.Sum64()
	return rand.NewPCG(splitmix(seed^splitmix(k)), splitmix(k+0x9e3779b97f4a7c15))
}

// splitmix is the SplitMix64 finaliser: a bijective mix of 64 bits.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

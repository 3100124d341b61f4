// Package fidelity holds limitsim's predictions against the seed article's
// own crawler run for real: seed_crawler.py runs the article's TokenBucket,
// Throttled and workers in python3's asyncio against an in-process upstream
// (a token-bucket quota per host, lognormal latency, 429 with or without
// Retry-After), measure.sh records three real runs of each scenario in
// reference.json, and this test runs the same scenarios (scenarios/*.toml)
// through limitsim and compares.
package fidelity

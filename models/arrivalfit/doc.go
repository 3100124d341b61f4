// Package arrivalfit judges recorded arrival instants: it estimates the
// rate over time, tests for Poisson by the dispersion index of counts per
// bin, and chooses the arrivals.Spec that describes them — constant, ramp,
// on/off, Poisson, or the recorded trace itself.
//
// It imports models/arrivals and gonum's distributions; it must not import
// the engine, the upstreams, the reports or the scenario format.
package arrivalfit

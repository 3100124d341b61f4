// Package planning holds whatever runs a scenario many times to give
// advice: a plan's grid, search, shards and merge with its Pareto front
// and recommendation; a comparison's paired differences and verdicts on
// common random numbers; the verification of a diagnosis's fix before
// it is printed; the replay of a production log through a configuration;
// and the calibration of a scenario from such a log, checked against it. The command line and the notebooks both call it;
// cmd/limitsim only parses flags and prints.
//
// Every run here owns its engine and recorder and lands at its index, so
// what a function returns does not depend on how many workers ran it.
package planning

// Command limitsim simulates rate-limiter and throttling configurations
// described in TOML scenario files.
//
//	limitsim run SCENARIO [-o DIR] [--json] [--set KEY=VALUE] [--assert EXPR]
//	                                          simulate and print the summary
//	limitsim validate SCENARIO [--set KEY=VALUE] check a scenario without running it
//	limitsim compare SCENARIO SCENARIO ...    side by side on common random numbers
//	limitsim plan SCENARIO --sweep KEY=SPEC   sweep keys; recommend the best feasible point
//	limitsim size --quota N/s ...             the sizing table for a published quota
//	limitsim report DIR                       redraw charts and reports from a run's outputs
//	limitsim scenarios [show NAME]            list or print the bundled examples
//	limitsim bench [-n REQUESTS]              time the reference scenario
//
// Exit codes: 0 success, 1 usage error, 2 invalid input, 3 model error found
// while simulating (a deadlock), 4 a guard stopped the run, 5 an --assert
// did not hold, 70 internal error, 130 interrupted.
//
// It is the edge where the file format (scenarios), the client model
// (sim/client) and the rendering (report) meet; nothing imports it.
package main

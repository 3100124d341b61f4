// Command limitsim simulates rate-limiter and throttling configurations
// described in TOML scenario files, sizes limits and plans sweeps.
//
// Every command is declared once, as a cobra.Command in the file of its
// name (run.go, plan.go, …; newRootCommand in cli.go gathers them), with
// its use line, help, example and flags. Help, usage, shell completion and
// docs/cli.md (see cliReference) are drawn from those declarations.
//
// A command's RunE returns nil or an error carrying its exit code (an
// exitError, made by usageError, badUsage, invalidInput, internalError,
// loadError, session.stopped, …): 0 success, 1 usage error, 2 invalid
// input, 3 model error found while simulating (a deadlock), 4 a guard
// stopped the run, 5 an --assert or --verify did not hold, 70 internal
// error, 130 interrupted (SIGINT), 143 terminated (SIGTERM). exitCodeOf
// (errors.go) is the one place that prints it, once, after "limitsim: "
// unless the message names the command already ("limitsim plan: ..."); a
// verbatimError (a scenario's "file:line: key: ..." problem) is printed
// as it is, and a messageList prints several messages in order. Warnings
// and progress, which end nothing, are printed on stderr where they
// arise.
//
// It is the edge where the file format (scenarios), planning (planning),
// the client model (sim/client) and the rendering (report) meet; nothing
// imports it.
package main

package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// commandHelp is what `limitsim help COMMAND` and `COMMAND -h` say beyond
// the flags: what the command does and an example.
var commandHelp = map[string]struct{ what, example string }{
	"run": {"Simulate a scenario and print its summary (or its JSON); -o writes every output, --trace a Perfetto trace.",
		"limitsim run seed-crawler -o out --set client.limiter.bucket.rate=80 --assert 'rate_429<0.01'"},
	"validate": {"Check a scenario file without simulating: every problem with its file, line and key.",
		"limitsim validate mine.toml"},
	"live": {"Run a scenario for real — HTTP to a loopback server answering with the scenario's upstream model, the same client on the wall clock — and hold it against its simulation.",
		"limitsim live seed-crawler --speed 4 -o live-out"},
	"compare": {"Run scenarios (or one scenario's variants) on the same arrivals and latencies and compare them: each later one against the first, better, worse or indistinguishable on every headline metric, from the paired confidence interval and the --threshold.",
		"limitsim compare token-bucket sliding-window --replications 5 --threshold 2% -o cmp"},
	"plan": {"Sweep or search scenario keys and recommend the configuration that best meets the objective under the constraints.",
		"limitsim plan seed-crawler --sweep client.limiter.bucket.rate=60:100:10 --objective max:goodput_rps --constraint 'rate_429<0.01'"},
	"merge": {"Merge the shards of a plan run with --shard into one plan.",
		"limitsim merge part1.json part2.json --json"},
	"report": {"Redraw the charts and reports of a finished run from its output folder, without simulating again.",
		"limitsim report out"},
	"scenarios": {"List the bundled example scenarios, or print one.",
		"limitsim scenarios show seed-crawler"},
	"fit": {"Fit a latency distribution to samples, or an arrival process to timestamps, and print the scenario keys to paste.",
		"limitsim fit latency samples.csv --chart fit.png"},
	"size": {"Size limiters from a published quota (and a window limit or a cost quota) and a latency profile: the article's sizing table and the keys to paste, with --verify by simulation.",
		"limitsim size --quota 5000/h --latency-p50 250ms --latency-p99 2s --instances 3 --verify"},
	"bench": {"Time `limitsim run` on a scenario, optionally against the bespoke reference implementations.",
		"limitsim bench -n 1000000 --compare ../shared/bench/reference-model"},
	"version": {"Print the version and the Go toolchain it was built with.", "limitsim version"},
	"completion": {"Print a shell completion script (subcommands, flags, bundled scenario names).",
		"source <(limitsim completion bash)"},
}

// wantsHelp reports whether args ask for help (-h, -help, --help).
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}

// flagLine matches a flag of the flag package's help with a name of two
// letters or more (spelt --name in limitsim's usage; -o and -n stay).
var flagLine = regexp.MustCompile(`(?m)^  -([A-Za-z][A-Za-z0-9-]+)`)

// commandFlags runs cmd with -h into a buffer and returns its flag list
// (spelt --flag) and its usage line.
func commandFlags(cmd string, st *session) (flags, usageLine string) {
	var b bytes.Buffer
	run([]string{cmd, "-h"}, io.Discard, &b, st)
	text := b.String()
	if i := strings.Index(text, "usage: "); i >= 0 {
		text, usageLine = text[:i], strings.TrimSpace(text[i:])
	}
	if i := strings.Index(text, ":\n"); i >= 0 && strings.HasPrefix(text, "Usage of ") {
		text = text[i+2:]
	}
	if !strings.HasPrefix(text, "  -") {
		text = "" // a command without flags
	}
	if usageLine == "" { // its line of the top-level usage
		for _, l := range strings.Split(usage, "\n") {
			if strings.HasPrefix(l, "  limitsim "+cmd) {
				usageLine = "usage: " + strings.TrimSpace(l)
				break
			}
		}
	}
	return flagLine.ReplaceAllString(text, "  --$1"), usageLine
}

// writeHelp prints a command's help on w: what it does, its usage, its
// flags and an example.
func writeHelp(w io.Writer, cmd string, st *session) bool {
	h, ok := commandHelp[cmd]
	if !ok {
		return false
	}
	flags, usageLine := commandFlags(cmd, st)
	fmt.Fprintf(w, "%s\n\n", h.what)
	if usageLine != "" {
		fmt.Fprintf(w, "%s\n\n", usageLine)
	}
	if strings.TrimSpace(flags) != "" {
		fmt.Fprintf(w, "flags:\n%s\n", flags)
	}
	fmt.Fprintf(w, "example:\n  %s\n", h.example)
	return true
}

// flagNames returns the flags of cmd as its usage spells them, for
// completion.
func flagNames(cmd string, st *session) []string {
	flags, _ := commandFlags(cmd, st)
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^  (--?[A-Za-z][A-Za-z0-9-]*)`).FindAllStringSubmatch(flags, -1) {
		out = append(out, m[1])
	}
	return out
}

package main

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/limitsim/limitsim/report/metrics"
	"github.com/limitsim/limitsim/scenarios"
)

// The flags several commands share are declared here, once each, so that
// they are spelt and explained the same wherever they appear.

// addOutputFlag declares -o/--output DIR; what says what is written there.
func addOutputFlag(fs *pflag.FlagSet, dir *string, what string) {
	fs.StringVarP(dir, "output", "o", "", "write "+what+" into this `directory`")
}

// addJSONFlag declares --json; what is what it prints instead of the table.
func addJSONFlag(fs *pflag.FlagSet, asJSON *bool, what string) {
	fs.BoolVar(asJSON, "json", false, "print "+what+" as JSON instead of the table")
}

// addQuietFlag declares --quiet.
func addQuietFlag(fs *pflag.FlagSet, quiet *bool) {
	fs.BoolVar(quiet, "quiet", false, "print no progress on stderr (it shows for work over a second)")
}

// addSetFlag declares the repeatable --set KEY=VALUE; where says which
// scenarios it applies to.
func addSetFlag(fs *pflag.FlagSet, sets *overrides, where string) {
	fs.Var(sets, "set", "override a key "+where+": `KEY=VALUE` (repeatable; limiters by name: client.limiter.NAME.FIELD, upstreams by host)")
}

// overrides collects repeated --set KEY=VALUE flags.
type overrides []scenarios.Override

func (o *overrides) String() string {
	set := make([]string, len(*o))
	for i, ov := range *o {
		switch v := ov.Value.(type) {
		case nil:
			set[i] = ov.Key + "="
		case string:
			set[i] = ov.Key + "=" + v // as written
			if v == "" || strings.ContainsAny(v, " \t\"") {
				set[i] = ov.Key + "=" + strconv.Quote(v) // distinct from a removal, and from its neighbours
			}
		default:
			set[i] = ov.Key + "=" + metrics.SetValue(v)
		}
	}
	return strings.Join(set, " ")
}

// Type names the flag's value in help.
func (o *overrides) Type() string { return "KEY=VALUE" }

// Set parses one KEY=VALUE.
func (o *overrides) Set(s string) error {
	ov, err := scenarios.ParseOverride(s)
	if err != nil {
		return err
	}
	*o = append(*o, ov)
	return nil
}

// assertions collects repeated --assert (and plan's --constraint) flags.
type assertions []metrics.Assertion

func (a *assertions) String() string {
	texts := make([]string, len(*a))
	for i, c := range *a {
		texts[i] = c.Text
	}
	return strings.Join(texts, ", ")
}

// Type names the flag's value in help.
func (a *assertions) Type() string { return "EXPR" }

// Set parses one PATH OP VALUE.
func (a *assertions) Set(s string) error {
	as, err := metrics.ParseAssertion(s)
	if err != nil {
		return err
	}
	*a = append(*a, as)
	return nil
}

// completeScenarios offers the bundled scenarios' names and files for a
// SCENARIO argument.
func completeScenarios(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	exs, err := scenarios.Examples()
	if err != nil {
		return nil, cobra.ShellCompDirectiveDefault
	}
	var names []string
	for _, e := range exs {
		names = append(names, e.Name+"\t"+firstSentence(e.Description))
	}
	return names, cobra.ShellCompDirectiveDefault
}

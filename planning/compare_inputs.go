package planning

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// comparedRunKeys are the keys of [run] that make two runs measure
// different things: how long they run, from what seed, from when.
var comparedRunKeys = []string{"seed", "duration", "requests", "warmup"}

// InputDifferences says what the compared scenarios are given
// differently besides their policies: the keys of [run] that set a run's
// horizon and seed, and every key of [workload], each with its values in
// the entries' order. A comparison of different workloads or horizons
// measures those as well as the policies. unpaired reports whether the
// seeds differ, so that replication k of each is not on the same seed.
func InputDifferences(entries []CompareEntry) (warnings []string, unpaired bool, err error) {
	tables := make([]map[string]any, len(entries))
	for i, e := range entries {
		text, err := e.Scenario.Resolved()
		if err != nil {
			return nil, false, err
		}
		if _, err := toml.Decode(text, &tables[i]); err != nil {
			return nil, false, fmt.Errorf("%s: the scenario as run does not read back: %w", e.Name, err)
		}
	}
	var differ []string
	for _, section := range []string{"run", "workload"} {
		var keys []string
		for _, t := range tables {
			sub, _ := t[section].(map[string]any)
			for k := range sub {
				if (section == "workload" || slices.Contains(comparedRunKeys, k)) && !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
		slices.Sort(keys)
		base, _ := tables[0][section].(map[string]any)
		for _, k := range keys {
			values := make([]string, len(tables))
			same := true
			for i, t := range tables {
				sub, _ := t[section].(map[string]any)
				values[i] = valueText(sub[k])
				same = same && reflect.DeepEqual(sub[k], base[k])
			}
			if !same {
				differ = append(differ, fmt.Sprintf("%s.%s (%s)", section, k, strings.Join(values, ", ")))
				unpaired = unpaired || section == "run" && k == "seed"
			}
		}
	}
	if len(differ) > 0 {
		warnings = append(warnings, "the runs are given different inputs besides their policies: "+strings.Join(differ, "; ")+
			": a difference below may be theirs as well as the policies'")
	}
	return warnings, unpaired, nil
}

// valueText writes a scenario's value as it reads: "-" when a scenario
// does not set it.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		return x
	}
	return fmt.Sprint(v)
}

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/limitsim/limitsim/planning"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/scenarios"
)

// A plan's -o folder holds its journal, .journal: plan.json, the plan's
// command line and what its results depend on (its fingerprint), written
// when the plan starts, and runs/, every replication the plan finished
// (planning.Journal). `plan --resume DIR` runs the plan again reading
// the replications from the journal, so its outputs are those of a plan
// never stopped.
const (
	journalDir  = ".journal"
	journalPlan = "plan.json"
	journalRuns = "runs"
)

// planRecord is what a plan's folder records of the plan when it starts.
type planRecord struct {
	// Args are the plan's command line after `plan`, without -o and
	// --resume; Dir the working folder it was given in.
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
	// Inputs are what the plan's results depend on, by name: a digest of
	// the scenario's text and of each data file it reads, the swept
	// values, the text of every flag that changes a result, the shard,
	// and the limitsim build (its version and executable). A resumed
	// plan's must be the same.
	Inputs map[string]string `json:"inputs"`
}

// notResultFlags are the plan's flags that change no result: where the
// outputs go, how fast they come, how they are printed.
var notResultFlags = []string{"output", "resume", "workers", "quiet", "json", "max-points", "sweep", "shard", "help"}

// resultFlags is the text of every flag of fs that changes a plan's
// results (all but notResultFlags, so that a flag added later counts),
// by its name with its dashes.
func resultFlags(fs *pflag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if !slices.Contains(notResultFlags, f.Name) {
			out["--"+f.Name] = f.Value.String()
		}
	})
	return out
}

// planInputs are the inputs of a plan (planRecord.Inputs): its result
// flags, the limitsim build, the scenario at path as first loaded, the
// data files it reads, the swept values and the shard.
func planInputs(o *planOptions, path string, first *scenarios.Scenario, sws []planning.Sweep, shard string) (map[string]string, error) {
	in := maps.Clone(o.flagInputs)
	in["limitsim"] = versionLine()
	in["limitsim executable"] = executableDigest()
	text, err := scenarioText(path)
	if err != nil {
		return nil, err
	}
	in["scenario"] = digest(text)
	for _, p := range first.DataFiles() {
		rc, err := first.OpenDataFile(p)
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", p, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", p, err)
		}
		in["data file "+p] = digest(data)
	}
	var sweeps []string
	for _, sw := range sws {
		values := make([]string, len(sw.Values))
		for i, v := range sw.Values {
			values[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		sweeps = append(sweeps, sw.Key+"="+strings.Join(values, ","))
	}
	in["--sweep"] = strings.Join(sweeps, " ")
	in["--shard"] = shard
	return in, nil
}

// scenarioText is the text of the scenario at path: a file, or a bundled
// example by name (as scenarios.Loader.Open tells them apart).
func scenarioText(path string) ([]byte, error) {
	if _, err := os.Stat(path); err != nil && !strings.ContainsAny(path, `/\`) && !strings.HasSuffix(path, ".toml") {
		return scenarios.ExampleSource(path)
	}
	return os.ReadFile(path)
}

// executableDigest is a digest of the running limitsim executable: a
// build from other sources (a development build's version line does not
// change with them) is another simulator, whose runs a resumed plan must
// not mix with its own. Go builds are reproducible, so the same sources
// built again are the same executable.
func executableDigest() string {
	path, err := os.Executable()
	if err != nil {
		return "unknown: " + err.Error()
	}
	f, err := os.Open(path)
	if err != nil {
		return "unknown: " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// changedInputs names what differs between a plan's recorded inputs and
// now: "the scenario", "data file x.csv", "--constraint (was …, now …)".
func changedInputs(was, now map[string]string) string {
	keys := map[string]bool{}
	for k := range was {
		keys[k] = true
	}
	for k := range now {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		a, inWas := was[k]
		b, inNow := now[k]
		switch {
		case inWas && inNow && a == b:
		case k == "scenario":
			out = append(out, "the scenario's text")
		case strings.HasPrefix(k, "data file "):
			switch {
			case !inWas:
				out = append(out, k+" (now read, not before)")
			case !inNow:
				out = append(out, k+" (no longer read)")
			default:
				out = append(out, k)
			}
		case k == "limitsim":
			out = append(out, fmt.Sprintf("the limitsim build (was %s, now %s)", a, b))
		case k == "limitsim executable":
			out = append(out, "the limitsim executable (rebuilt or upgraded since)")
		default:
			out = append(out, fmt.Sprintf("%s (was %q, now %q)", k, a, b))
		}
	}
	return strings.Join(out, "; ")
}

// planArgs are a plan's arguments after `plan`, without -o and --resume
// (what planRecord.Args records).
func planArgs(args []string) []string {
	if len(args) > 0 && args[0] == "plan" {
		args = args[1:]
	}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...)
		case a == "-o" || a == "--output" || a == "--resume":
			i++ // and its value
		case strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "--resume=") || (strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--")):
		default:
			out = append(out, a)
		}
	}
	return out
}

// readPlanRecord reads the record of the plan in folder dir; nil when the
// folder holds no journal.
func readPlanRecord(dir string) (*planRecord, error) {
	path := filepath.Join(dir, journalDir, journalPlan)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec planRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.Inputs == nil {
		return nil, fmt.Errorf("%s is not a plan's record (%v)", path, err)
	}
	return &rec, nil
}

// cmdResume runs `plan --resume DIR` given without a scenario: the plan
// DIR records, with the flags given now (--workers, --quiet) after its
// own. A flag that changes a result is refused with the plan's changed
// fingerprint.
func cmdResume(env *environment, o *planOptions) error {
	rec, err := readPlanRecord(o.resume)
	if err != nil {
		return invalidInput(fmt.Errorf("limitsim plan --resume %s: %w", o.resume, err))
	}
	if rec == nil {
		return noJournal(o.resume)
	}
	args := append(append(append([]string{"plan"}, rec.Args...), planArgs(env.args)...), "--resume", o.resume)
	again := *env
	again.args = args
	cmd := newPlanCommand(&again)
	if err := cmd.ParseFlags(args[1:]); err != nil {
		return badUsage(fmt.Errorf("limitsim plan --resume %s: the recorded command line: %w", o.resume, err))
	}
	pos := cmd.Flags().Args()
	if len(pos) != 1 {
		return invalidInput(fmt.Errorf("limitsim plan --resume %s: the recorded command line %q names no scenario", o.resume, rec.Args))
	}
	// A scenario given by a relative path is found from where the plan
	// started.
	if wd, err := os.Getwd(); err == nil && wd != rec.Dir && !filepath.IsAbs(pos[0]) {
		if _, err := os.Stat(filepath.Join(rec.Dir, pos[0])); err == nil {
			pos[0] = filepath.Join(rec.Dir, pos[0])
		}
	}
	return cmd.RunE(cmd, pos)
}

// noJournal is the refusal of --resume on a folder with no journal.
func noJournal(dir string) error {
	return invalidInput(fmt.Errorf("limitsim plan --resume %s: the folder holds no plan journal (%s): nothing to resume; a plan run with -o %s records one",
		dir, filepath.Join(dir, journalDir, journalPlan), dir))
}

// resumeCommand is the command line that continues the plan in dir.
func resumeCommand(dir string) string {
	if dir == "" || strings.ContainsAny(dir, " \t\n'\"\\$`") {
		dir = "'" + strings.ReplaceAll(dir, "'", `'\''`) + "'"
	}
	return "limitsim plan --resume " + dir
}

// openPlanJournal records the plan in its -o folder and sets the
// journal its replications are read from and recorded in. A fresh plan
// reuses the journal of the same plan (its fingerprint the same) and
// replaces that of a finished other one; it refuses the journal of an
// interrupted other plan, which holds work that would be lost. --resume
// refuses a folder with no journal or another fingerprint. done reports
// a --resume of a finished plan: nothing to run, and nothing is written.
func openPlanJournal(o *planOptions, spec *planning.Spec, first *scenarios.Scenario, sws []planning.Sweep, shard string) (done bool, err error) {
	inputs, err := planInputs(o, spec.Source.Path, first, sws, shard)
	if err != nil {
		return false, loadError(err)
	}
	dir := o.outDir
	old, err := readPlanRecord(dir)
	if err != nil {
		return false, invalidInput(fmt.Errorf("limitsim plan: -o %s: %w", dir, err))
	}
	_, serr := os.Stat(filepath.Join(dir, incompleteMarker))
	incomplete := serr == nil
	switch {
	case o.resume != "" && old == nil:
		return false, noJournal(dir)
	case old != nil && !maps.Equal(old.Inputs, inputs) && o.resume != "":
		return false, invalidInput(fmt.Errorf("limitsim plan --resume %s: the plan changed since it started, so its finished runs are not this plan's: %s; run the plan afresh into another folder",
			dir, changedInputs(old.Inputs, inputs)))
	case old != nil && !maps.Equal(old.Inputs, inputs) && incomplete:
		return false, invalidInput(fmt.Errorf("limitsim plan: -o %s holds an interrupted plan with other inputs (%s): continue it with '%s', write this plan into another folder, or remove %s to discard its finished runs",
			dir, changedInputs(old.Inputs, inputs), resumeCommand(dir), filepath.Join(dir, journalDir)))
	case old != nil && !maps.Equal(old.Inputs, inputs):
		// A finished plan of other inputs: its outputs are replaced, and
		// its journal with them.
		if err := os.RemoveAll(filepath.Join(dir, journalDir)); err != nil {
			return false, outputsFailed("limitsim plan: -o "+dir, dir, &report.OutputError{Op: "removing", Path: filepath.Join(dir, journalDir), Err: err})
		}
	case o.resume != "" && !incomplete:
		fmt.Fprintf(o.stderr, "limitsim plan --resume %s: the plan is complete: nothing to resume, and its outputs are left as they are\n", dir)
		return true, nil
	}
	return false, startJournal(o, spec, inputs)
}

// startJournal writes the plan's record into its folder, marks the folder
// incomplete until the plan's outputs are written, and opens the journal
// of its replications.
func startJournal(o *planOptions, spec *planning.Spec, inputs map[string]string) error {
	dir := o.outDir
	wd, _ := os.Getwd()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // a constraint's < as written
	enc.SetIndent("", "  ")
	if err := enc.Encode(planRecord{Args: planArgs(o.args), Dir: wd, Inputs: inputs}); err != nil {
		return internalError(err)
	}
	prefix := "limitsim plan: -o " + dir
	jdir := filepath.Join(dir, journalDir)
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		return outputsFailed(prefix, dir, &report.OutputError{Op: "writing", Path: jdir, Err: err})
	}
	if err := planning.WriteDurably(filepath.Join(jdir, journalPlan), buf.Bytes()); err != nil {
		return outputsFailed(prefix, dir, err)
	}
	note := fmt.Sprintf("a plan is writing this folder; if this file remains, it was stopped before its end: '%s' continues it\n", resumeCommand(dir))
	if err := (report.Folder{Dir: dir, FS: o.session.fsys}).Mark(incompleteMarker, note); err != nil {
		return outputsFailed(prefix, dir, err)
	}
	j, err := planning.OpenJournal(filepath.Join(jdir, journalRuns))
	if err != nil {
		return outputsFailed(prefix, dir, err)
	}
	o.journal, spec.Source.Journal = j, j
	o.session.outputs.Store(&outputState{dir: dir, stage: planJournaled})
	return nil
}

// journalSummary says on stderr what the journal saved, when it did (not
// progress: --quiet keeps it), and what it failed to record.
func journalSummary(o *planOptions) {
	j := o.journal
	if err := j.Err(); err != nil {
		fmt.Fprintf(o.stderr, "limitsim plan: warning: the journal in %s misses runs (%v): a resumed plan runs them again\n", o.outDir, err)
	}
	if n := j.Reused(); n > 0 {
		fmt.Fprintf(o.stderr, "limitsim plan: %d runs read from the journal in %s, %d run now\n", n, o.outDir, j.Recorded())
	}
}

// resumeArgs lets `plan --resume DIR` be given without a scenario.
func resumeArgs(o *planOptions) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if o.resume != "" && len(args) == 0 {
			return nil
		}
		return exactArgs(1)(cmd, args)
	}
}

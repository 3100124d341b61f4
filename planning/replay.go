package planning

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/limitsim/limitsim/logs"
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/sim/client"
)

// ErrReplay is wrapped by a replay's errors about its log or its fit
// with the scenario (bad input, not a failure of the simulation).
var ErrReplay = errors.New("replay")

// LatencySource says where a replayed request's latency comes from.
type LatencySource uint8

// Latency sources.
const (
	// LatencyRecorded: an admitted request takes the latency its record
	// logged (the scenario's model when it logged none, or was refused).
	LatencyRecorded LatencySource = iota
	// LatencyModel: every request takes the scenario's upstream model.
	LatencyModel
)

// String returns the source's name, as --latency reads it.
func (l LatencySource) String() string {
	if l == LatencyModel {
		return "model"
	}
	return "recorded"
}

// ReplayLog is the log a replay reads, and how.
type ReplayLog struct {
	Path    string
	Options logs.Options
	Latency LatencySource
	// RefuseUnmatched: a record whose method and URL path match none of
	// the scenario's paths (when it declares methods to match) fails the
	// replay, rather than taking a path drawn by weight.
	RefuseUnmatched bool
	// Interrupt, when set, stops the reading of the log (a replay's
	// survey, a calibration) with ErrInterrupted; a replay's run stops
	// on client.Options.Interrupt.
	Interrupt *atomic.Bool
}

// interruptEvery is how many records a reading of a log (a replay's
// survey, a calibration) reads between two looks at its interrupt.
const interruptEvery = 1 << 14

// interrupted is the error of a reading of the log by rd that its
// interrupt stops, or nil: it looks every interruptEvery records.
func (log *ReplayLog) interrupted(rd *logs.Reader) error {
	if rd.Records()%interruptEvery == 0 && log.Interrupt != nil && log.Interrupt.Load() {
		return fmt.Errorf("%w: reading %s at line %d", ErrInterrupted, log.Path, rd.Lines())
	}
	return nil
}

// maxReplayTenants bounds the distinct tenants a log may name.
const maxReplayTenants = 1 << 16

// Replay runs cfg, one replication, with the arrivals of a recorded log
// in place of its workload: each at its logged instant (spread within its
// second, from the seeded stream "replay/spread", when logged to the
// second), to its host and tenant, with its cost and, by log.Latency, its
// latency. The log is read twice, each time as a stream: once to learn
// its span, hosts and tenants, once to replay it. It returns the run's
// outcome and the comparison with what production saw.
func Replay(cfg *client.Config, log ReplayLog, opt client.Options) (*client.Outcome, *report.ReplayComparison, error) {
	r, err := PrepareReplay(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	return r.Run(opt)
}

// PreparedReplay is a replay whose log has been read once: its span,
// hosts and tenants are known, and so is the configuration it runs.
type PreparedReplay struct {
	log              ReplayLog
	sv               *logSurvey
	run              *client.Config
	hostOf, tenantOf map[string]int
}

// PrepareReplay reads the log once and sets up the replay of it through
// cfg (see Replay).
func PrepareReplay(cfg *client.Config, log ReplayLog) (*PreparedReplay, error) {
	if m := newPathMatcher(cfg.Paths); m != nil {
		log.Options.Match = m.match
	}
	sv, err := survey(log)
	if err != nil {
		return nil, err
	}
	if log.RefuseUnmatched && sv.unmatched > 0 {
		return nil, fmt.Errorf("%w: %s matched no [[client.path]] by method and URL path (first: %s): declare their methods, or draw them by weight (--log-unmatched draw)",
			ErrReplay, records(sv.unmatched), strings.Join(sv.firstUnmatched, ", "))
	}
	run, hostOf, tenantOf, err := replayConfig(cfg, sv)
	if err != nil {
		return nil, err
	}
	return &PreparedReplay{log: log, sv: sv, run: run, hostOf: hostOf, tenantOf: tenantOf}, nil
}

// Config is the configuration the replay runs: the scenario's, with the
// log's tenants and span (for progress reports: client.ProgressTotal).
func (r *PreparedReplay) Config() *client.Config { return r.run }

// Run replays the log, reading it a second time, and returns the run's
// outcome and the comparison with what production saw.
func (r *PreparedReplay) Run(opt client.Options) (*client.Outcome, *report.ReplayComparison, error) {
	log, sv, run := r.log, r.sv, r.run
	f, err := openLog(log.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrReplay, err)
	}
	defer f.Close()
	rd, err := logs.NewReader(f, log.Path, log.Options)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrReplay, err)
	}
	t := newTally(sv.origin, run.Workload.Tenants)
	t.named = len(sv.tenants) > 0
	feed := &recordFeed{reader: rd, survey: sv, hostOf: r.hostOf, tenantOf: r.tenantOf, latency: log.Latency, tally: t,
		spread: newSpreader(run.Run.Seed), costLogged: log.Options.Mapping.Cost != ""}
	opt.Recorded, opt.Observer = feed, t
	out, err := client.Run(run, opt)
	if err != nil {
		return nil, nil, err
	}
	if feed.err != nil {
		out.Series.Close()
		return nil, nil, fmt.Errorf("%w: %w", ErrReplay, feed.err)
	}
	c := t.comparison()
	c.Log, c.Format, c.Latency, c.ModelLatencies = log.Path, sv.format.String(), log.Latency.String(), feed.modelLatencies
	c.Lines, c.Records, c.BadLines, c.FirstBad = sv.lines, sv.records, sv.bad, sv.named
	c.RecordsWithoutStatus = sv.unstatused
	c.Start = time.Unix(0, sv.origin).UTC().Truncate(time.Minute).Format(time.RFC3339)
	c.SpanS, c.Spread = time.Duration(sv.last-sv.first).Seconds(), sv.spread
	c.PathsMatched, c.PathsUnmatched, c.FirstUnmatched = sv.matched, sv.unmatched, sv.firstUnmatched
	return out, c, nil
}

// logSurvey is what the first pass learns of a log.
type logSurvey struct {
	first, last, origin int64         // Unix ns: the first and last records, and the run's instant 0
	spread              bool          // some record was logged to the second or coarser
	widest              time.Duration // the coarsest such precision
	hosts, tenants      []string
	hostFirst           []string // file:line of each host's first record
	records, lines, bad int64
	unstatused          int64 // records without a status
	named               []string
	format              logs.Format
	// matched and unmatched count the records whose method and URL path
	// matched a path, and those that matched none; firstUnmatched names
	// the first few of these, file:line.
	matched, unmatched int64
	firstUnmatched     []string
}

// survey reads the log once: its span, its hosts and tenants in order of
// first appearance, its bad lines.
func survey(log ReplayLog) (*logSurvey, error) {
	f, err := openLog(log.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReplay, err)
	}
	defer f.Close()
	rd, err := logs.NewReader(f, log.Path, log.Options)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReplay, err)
	}
	sv := &logSurvey{}
	hosts, tenants := map[string]bool{}, map[string]bool{}
	var rec logs.Record
	for {
		if err := log.interrupted(rd); err != nil {
			return nil, err
		}
		ok, err := rd.Next(&rec)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrReplay, err)
		}
		if !ok {
			break
		}
		if rd.Records() == 1 {
			sv.first, sv.origin = rec.Time, rec.Time-rec.Time%int64(max(rec.Precision, 1))
		}
		sv.last = rec.Time
		sv.countMatch(log.Path, &rec)
		if rec.Precision >= time.Second {
			sv.spread, sv.widest = true, max(sv.widest, rec.Precision)
		}
		if rec.Host != "" && !hosts[rec.Host] {
			hosts[rec.Host] = true
			sv.hosts = append(sv.hosts, rec.Host)
			sv.hostFirst = append(sv.hostFirst, fmt.Sprintf("%s:%d", log.Path, rec.Line))
		}
		if rec.Tenant != "" && !tenants[rec.Tenant] {
			if len(tenants) == maxReplayTenants {
				return nil, fmt.Errorf("%w: %s:%d: more than %d tenants", ErrReplay, log.Path, rec.Line, maxReplayTenants)
			}
			tenants[rec.Tenant] = true
			sv.tenants = append(sv.tenants, rec.Tenant)
		}
	}
	sv.records, sv.lines, sv.format = rd.Records(), rd.Lines(), rd.Format()
	sv.unstatused = rd.WithoutStatus()
	sv.bad, sv.named = badLines(rd)
	return sv, nil
}

// records counts records in words: "1 record", "1,204 records".
func records(n int64) string {
	if n == 1 {
		return "1 record"
	}
	return report.Grouped(n) + " records"
}

// countMatch counts rec as matched to a path, or not (naming it among
// the first few).
func (sv *logSurvey) countMatch(path string, rec *logs.Record) {
	switch {
	case rec.Match > 0:
		sv.matched++
	case rec.Match == matchNone:
		sv.unmatched++
		if len(sv.firstUnmatched) < logs.MaxBadNamed {
			sv.firstUnmatched = append(sv.firstUnmatched, fmt.Sprintf("%s:%d", path, rec.Line))
		}
	}
}

// replayConfig is cfg with the log's workload: its tenants added to the
// scenario's (every tenant's own arrival process dropped), one
// replication long enough for the last record. It returns with it the
// scenario's host and tenant index of each name the log uses.
func replayConfig(cfg *client.Config, sv *logSurvey) (*client.Config, map[string]int, map[string]int, error) {
	run := *cfg
	run.Run.Replications, run.Run.Requests, run.Run.Warmup = 1, 0, 0
	run.Run.Duration = time.Duration(sv.last-sv.origin) + sv.widest + 1
	w := &run.Workload
	w.Backlog = false
	hostOf := map[string]int{}
	for n, h := range sv.hosts {
		i := -1
		for k, s := range w.Hosts {
			if s.Name == h {
				i = k
			}
		}
		if i < 0 && len(w.Hosts) > 1 {
			return nil, nil, nil, fmt.Errorf("%w: %s: the log names host %q, which is none of the scenario's hosts %v: name them alike, or replay through a scenario of one host", ErrReplay, sv.hostFirst[n], h, shareNames(w.Hosts))
		}
		hostOf[h] = max(i, 0)
	}
	if len(sv.hosts) == 0 && len(w.Hosts) > 1 {
		return nil, nil, nil, fmt.Errorf("%w: the log names no host and the scenario %q has %d, %v: map the log's host field (--log-host, or [log] host), or replay through a scenario of one host", ErrReplay, run.Name, len(w.Hosts), shareNames(w.Hosts))
	}
	tenants := make([]client.Tenant, 0, len(w.Tenants)+len(sv.tenants))
	tenantOf := map[string]int{}
	for i, t := range w.Tenants {
		tenants = append(tenants, client.Tenant{Share: t.Share})
		tenantOf[t.Name] = i
	}
	for _, name := range sv.tenants {
		if _, ok := tenantOf[name]; !ok {
			tenantOf[name] = len(tenants)
			tenants = append(tenants, client.Tenant{Share: client.Share{Name: name, Weight: 1}})
		}
	}
	if len(tenants) > maxReplayTenants {
		return nil, nil, nil, fmt.Errorf("%w: %d tenants with the scenario's: at most %d", ErrReplay, len(tenants), maxReplayTenants)
	}
	w.Tenants = tenants
	return &run, hostOf, tenantOf, nil
}

func shareNames(ss []client.Share) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// openLog opens the log at path, which must be a regular file: replay and
// calibrate read it twice, and a pipe (<(zcat access.log.gz)) would give
// nothing the second time, a directory nothing at all.
func openLog(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file (a directory, pipe or device): the log is read twice; write it to a file first", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// badLines returns the bad lines rd counted and the first it named, as
// `file:line: why`.
func badLines(rd *logs.Reader) (int64, []string) {
	n, first := rd.Bad()
	var named []string
	for _, b := range first {
		named = append(named, b.String())
	}
	return n, named
}

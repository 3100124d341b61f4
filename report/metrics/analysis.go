package metrics

// Verdict is the article's reading of one limiter from its three numbers.
type Verdict struct {
	Limiter string `json:"limiter"`
	// Verdict is one of: not binding | binding | now the bottleneck |
	// demand exceeds quota (a rate or window limiter pinned) | saturated:
	// demand exceeds permits (a concurrency limiter pinned) | local limit
	// set too high.
	Verdict  string  `json:"verdict"`
	WaitP99S float64 `json:"wait_p99_s"`
	// Utilisation is the limiter's utilisation_max: the busiest scope's.
	Utilisation float64 `json:"utilisation"`
	Saturation  float64 `json:"saturation"`
	Rate429     float64 `json:"rate_429"`
	Why         string  `json:"why"`
}

// Diagnosis is one failure mode recognised in a run, with the fix from the
// article's failure-mode table.
type Diagnosis struct {
	Code     string `json:"code"`
	Severity string `json:"severity"` // warning | critical
	Title    string `json:"title"`
	Evidence string `json:"evidence"`
	Cause    string `json:"cause"`
	Fix      Fix    `json:"fix"`
}

// Fix is a diagnosis's remedy: in words, and where a change of scenario
// keys applies it, as overrides in the --set syntax (a key of the scenario
// to its new value; null removes the key). Set is empty when no change of
// keys alone fixes the run; Text then says what to do.
type Fix struct {
	Text string         `json:"text"`
	Set  map[string]any `json:"set,omitempty"`
}

func (f Fix) String() string { return f.Text }

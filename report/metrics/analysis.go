package metrics

// Verdict is the article's reading of one limiter from its three numbers.
type Verdict struct {
	Limiter    string  `json:"limiter"`
	Verdict    string  `json:"verdict"` // not binding | binding | now the bottleneck | demand exceeds quota | local limit set too high
	WaitP99S   float64 `json:"wait_p99_s"`
	Saturation float64 `json:"saturation"`
	Rate429    float64 `json:"rate_429"`
	Why        string  `json:"why"`
}

// Diagnosis is one failure mode recognised in a run, with the fix from the
// article's failure-mode table.
type Diagnosis struct {
	Code     string `json:"code"`
	Severity string `json:"severity"` // warning | critical
	Title    string `json:"title"`
	Evidence string `json:"evidence"`
	Cause    string `json:"cause"`
	Fix      string `json:"fix"`
}

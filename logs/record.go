package logs

import (
	"errors"
	"fmt"
	"time"
)

// ErrNoRecords is returned when a log has no usable line.
var ErrNoRecords = errors.New("logs: no usable line")

// ErrHeader is wrapped by the error for a CSV log whose header line does
// not parse.
var ErrHeader = errors.New("logs: bad CSV header")

// ErrOptions is wrapped by errors in Options or Mapping.
var ErrOptions = errors.New("logs: invalid options")

// Format is a log's line format.
type Format uint8

// Log formats.
const (
	FormatAuto Format = iota // guessed from the first line
	FormatCLF                // common or combined log format (+ request_time)
	FormatJSON               // JSON lines
	FormatCSV                // CSV with a header line
)

// String returns the format's name as ParseFormat reads it.
func (f Format) String() string {
	switch f {
	case FormatCLF:
		return "clf"
	case FormatJSON:
		return "json"
	case FormatCSV:
		return "csv"
	}
	return "auto"
}

// ParseFormat reads a format name: auto, clf (also common, combined),
// json (also jsonl) or csv.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "", "auto":
		return FormatAuto, nil
	case "clf", "common", "combined":
		return FormatCLF, nil
	case "json", "jsonl":
		return FormatJSON, nil
	case "csv":
		return FormatCSV, nil
	}
	return 0, fmt.Errorf("%w: format %q: want auto, clf, json or csv", ErrOptions, s)
}

// Mapping names the fields that hold each value (see the package doc).
type Mapping struct {
	Time        string // the timestamp's field
	TimeFormat  string // clf, rfc3339, unix, unix_ms, or a Go layout; "" guesses
	Host        string // the host or endpoint; "" for one host
	Status      string // the HTTP status
	Latency     string // the time the request took
	LatencyUnit string // "s" (default) or "ms", for numbers
	Tenant      string // the API key or tenant; "" for one tenant
	Cost        string // the request's cost (tokens); "" for cost 1
	Method      string // the request's HTTP method (CLF: from the request line)
	Path        string // the request's URL path (CLF: from the request line)
	Remaining   string // the rate-limit remaining header, when logged
	Reset       string // the rate-limit reset header (seconds), when logged
}

// Options configure a Reader.
type Options struct {
	Format  Format
	Mapping Mapping
	// Reorder is how far back in time a line may be and still be put in
	// its place (0: 5 s; negative: none, every late line is bad).
	Reorder time.Duration
	// MaxHeld bounds the records held for reordering (0: 65,536).
	MaxHeld int
	// Match, when set and the mapping names a method or a URL path (a CLF
	// log always does), is called with each record's method and URL path
	// (nil when not logged; the path without its query string, scheme or
	// host), and what it returns is the record's Match. The slices are
	// the line's own: valid only during the call. It lets a caller class
	// records by request without a string for each.
	Match func(method, path []byte) int32
}

// Default reordering bounds.
const (
	DefaultReorder = 5 * time.Second
	DefaultMaxHeld = 1 << 16
)

// MaxBadNamed is how many bad lines a Reader names.
const MaxBadNamed = 5

// MaxLine is the longest line a Reader reads; a longer one is bad.
const MaxLine = 64 << 10

// Record is one logged request.
type Record struct {
	// Time is when the request was logged, in Unix nanoseconds, and
	// Precision how finely it was logged (time.Second for CLF).
	Time      int64
	Precision time.Duration
	Host      string // "" when not mapped
	Tenant    string // "" when not mapped
	Status    int    // 0 when not logged
	// Latency is the time the request took; HasLatency is false when the
	// log does not say.
	Latency    time.Duration
	HasLatency bool
	Cost       int64 // 1 when not mapped
	// Remaining is the rate-limit remaining header (-1 when not logged);
	// Reset its reset header (-1 when not logged).
	Remaining int64
	Reset     time.Duration
	// Match is what Options.Match returned for the record's method and
	// URL path (0 when it was not called).
	Match int32
	Line  int64 // the line number in its file
}

// Throttled reports whether the record's status is a refusal by a rate
// limit or an overload (429 or 503).
func (r *Record) Throttled() bool { return r.Status == 429 || r.Status == 503 }

// BadLine is one bad line: where, and why.
type BadLine struct {
	File   string
	Line   int64
	Reason string
}

// String reads `file:line: why`.
func (b BadLine) String() string { return fmt.Sprintf("%s:%d: %s", b.File, b.Line, b.Reason) }

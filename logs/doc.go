// Package logs reads access logs one record at a time: the arrivals,
// statuses, latencies, tenants and costs a production service recorded,
// for a replay to drive a candidate configuration with.
//
// # Formats
//
// Three formats share one reader, chosen by Options.Format or, when it is
// FormatAuto, by the first line that is neither blank nor a # comment (a
// UTF-8 byte-order mark opening the log is skipped):
//
//   - Common and combined log format, the nginx and Apache defaults:
//     `$remote_addr - $remote_user [$time_local] "$request" $status
//     $body_bytes_sent` and, combined, `"$http_referer"
//     "$http_user_agent"`. A last unquoted number after them is
//     `$request_time` (seconds), as nginx configurations commonly append
//     it. Its fields are named as nginx names its variables: remote_addr,
//     remote_user, time_local, request, method, path, status,
//     body_bytes_sent, http_referer, http_user_agent and request_time.
//     The time is `02/Jan/2006:15:04:05 -0700`, to the second.
//   - JSON lines: one object a line; fields by key. Numbers and strings are
//     both read where a number is expected.
//   - CSV: comma-separated, with a header line naming the columns; a field
//     may be quoted ("a, b", with "" for a quote) but may not span lines.
//
// # Field mapping
//
// Mapping names the field that holds each value: Time (required; for JSON
// and CSV "time" when unset, for CLF time_local), Host, Status, Latency,
// Tenant, Cost, and the rate-limit headers Remaining and Reset when they
// are logged. An unset Host, Tenant or Cost reads as none (one host, one
// tenant, cost 1). A Tenant field that logs no value ("-", as CLF logs
// the $remote_user of an anonymous request, or empty) gives the record
// none (Record.Tenant ""); a Host field's "-" is a host's name, and an
// empty one a bad line. Unset Status and Latency read "status" and
// "request_time" (JSON, CSV) when those fields exist; in CLF, status and
// request_time.
//
// Requests: Method and Path name the fields of the request's HTTP method
// and URL path; in CLF they default to method and path, the first two
// words of the request line ("GET /a?b HTTP/2.0"; "-" has neither). When
// one is named and Options.Match is set, the reader calls Match with each
// record's method and URL path (without query string, fragment, scheme
// or host; nil when not logged) and keeps its answer in Record.Match: a
// caller classes requests by them without a string for each of what may
// be millions of distinct URLs.
//
// Timestamps: TimeFormat "clf" (02/Jan/2006:15:04:05 -0700), "rfc3339"
// (fractions optional), "unix" (seconds, fractions optional), "unix_ms",
// or a Go layout that gives at least a date ("2006-01-02 15:04:05"; one
// without a time zone reads UTC); unset reads a number as Unix seconds
// and a string as RFC 3339 or CLF. A record's Precision is how finely
// its time was logged: one second for CLF and whole Unix seconds, a
// millisecond for three decimals, a minute for a layout without seconds,
// and so on.
//
// Latencies: a number is seconds (nginx's $request_time), or milliseconds
// with LatencyUnit "ms"; a string may also be a Go duration such as 120ms.
// "-" or an empty value is no latency (Record.HasLatency false), in the
// default field or one the mapping names. Several separated by commas or
// colons are summed: nginx's $upstream_response_time lists the time of
// each server a request was passed to ("0.012, 0.034") and of each
// internal redirect ("0.100 : 0.020"); a "-" among them adds nothing.
//
// # Order and memory
//
// Records come out in time order. A line up to Options.Reorder earlier
// than the latest line read so far (default 5 s: nginx logs a request when
// it ends, so a slow request's line follows quicker ones that started
// after it) is held and put in its place; one later than that is counted
// bad. At most Options.MaxHeld records (default 65,536) are held at once:
// past that the earliest is released early, and a line that then comes
// behind it is counted bad, its reason naming the cap (a late line's
// reason gives how far it is behind the latest record read). Lines are read through a fixed 64 KiB buffer; a
// longer line is counted bad, and host and tenant names are kept once
// each up to 4,096 of them. So the reader's memory is bounded by the
// buffer, the names and MaxHeld records, whatever the log's length:
// BenchmarkReadTenMillion reads 10⁷ combined-format lines generated on
// the fly and reports the peak live heap, the same (under a megabyte) as
// BenchmarkReadMillion's for a tenth of them.
//
// # Bad lines
//
// A line that does not parse is counted and skipped; the first
// MaxBadNamed are kept as `file:line: why`. A log with no usable line is
// ErrNoRecords.
package logs

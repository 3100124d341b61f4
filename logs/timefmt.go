package logs

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// clfLayout is the time of the common log format ($time_local).
const clfLayout = "02/Jan/2006:15:04:05 -0700"

// CheckTimeFormat checks a Mapping's TimeFormat: a known name, or a Go
// layout that gives at least a date (year, month and day), with or
// without a time zone (without one, times read as UTC).
func CheckTimeFormat(f string) error {
	_, err := layoutGrain(f)
	return err
}

// layoutGrain is how finely a time format places a time: a second for a
// known name or a layout with seconds (finer when a line's time has a
// fraction), a minute, an hour or a day for a layout that stops there.
// It checks the format: a layout must read back what it formats, and
// give a date. A time unlike the reference one (2006-01-02 15:04:05)
// tells a layout's elements from its literal text, as the reference time
// formats a layout without a zone back into itself.
func layoutGrain(f string) (time.Duration, error) {
	switch f {
	case "", "clf", "rfc3339", "unix", "unix_ms":
		return time.Second, nil
	}
	probe := time.Date(2023, 10, 9, 13, 55, 36, 123456789, time.UTC)
	text := probe.Format(f)
	read, err := time.Parse(f, text)
	if d := probe.Sub(read); err == nil && text != f && d >= 0 && d < time.Second {
		return time.Second, nil // to the second, or a fraction of one
	}
	for _, grain := range []time.Duration{time.Minute, time.Hour, 24 * time.Hour} {
		if err == nil && text != f && read.Equal(probe.Truncate(grain)) {
			return grain, nil
		}
	}
	return 0, fmt.Errorf("%w: time format %q: want clf, rfc3339, unix, unix_ms or a Go layout of a date and time such as 2006-01-02 15:04:05", ErrOptions, f)
}

var errTimeRange = errors.New("out of range (1970 to 2262)")

// parseTime reads a timestamp as Unix nanoseconds, with the precision it
// was written to.
func parseTime(raw []byte, format string) (int64, time.Duration, error) {
	switch format {
	case "unix", "unix_ms":
		return parseUnixAs(raw, format)
	case "clf":
		if t, ok := parseCLFTime(raw); ok {
			return t, time.Second, nil
		}
		return parseLayout(raw, clfLayout)
	case "rfc3339":
		return parseLayout(raw, time.RFC3339Nano)
	case "":
		if len(raw) > 0 && (raw[0] >= '0' && raw[0] <= '9') && !bytes.ContainsAny(raw, "-/:T") {
			return parseUnix(raw, 0)
		}
		if t, p, err := parseLayout(raw, time.RFC3339Nano); err == nil {
			return t, p, nil
		}
		return parseLayout(raw, clfLayout)
	}
	return parseLayout(raw, format)
}

// secondsOrMillis is where a Unix time's magnitude tells milliseconds
// from seconds: 10¹¹ seconds is past the year 5000, 10¹¹ milliseconds
// is 1973-03-03.
const secondsOrMillis = 1e11

// parseUnixAs reads a Unix time in the unit format names ("unix" or
// "unix_ms"), refusing one whose magnitude says it is in the other unit:
// seconds read as milliseconds would put the log in January 1970,
// silently, and milliseconds read as seconds past the year 2262.
func parseUnixAs(raw []byte, format string) (int64, time.Duration, error) {
	whole, _, _ := bytes.Cut(raw, []byte("."))
	w, err := strconv.ParseInt(string(whole), 10, 64)
	switch {
	case err != nil:
	case format == "unix" && w >= secondsOrMillis:
		return 0, 0, errors.New("too large for Unix seconds: Unix milliseconds? (time format unix_ms)")
	case format == "unix_ms" && w < secondsOrMillis:
		return 0, 0, errors.New("as Unix milliseconds, before 1973-03-03: Unix seconds? (time format unix)")
	}
	if format == "unix_ms" {
		return parseUnix(raw, time.Millisecond)
	}
	return parseUnix(raw, time.Second)
}

// parseUnix reads a decimal number of units (0: guessed from the
// magnitude: seconds below 10¹¹, milliseconds below 10¹⁴, microseconds
// below 10¹⁷, else nanoseconds), exactly: the fraction's digits are read
// as digits, not as a float.
func parseUnix(raw []byte, unit time.Duration) (int64, time.Duration, error) {
	whole, frac, _ := bytes.Cut(raw, []byte("."))
	w, err := strconv.ParseInt(string(whole), 10, 64)
	if err != nil || w < 0 || len(frac) > 9 {
		return 0, 0, errors.New("not a Unix time (digits, optionally a fraction)")
	}
	if unit == 0 {
		switch {
		case w < secondsOrMillis:
			unit = time.Second
		case w < 1e14:
			unit = time.Millisecond
		case w < 1e17:
			unit = time.Microsecond
		default:
			unit = time.Nanosecond
		}
	}
	if w > math.MaxInt64/int64(unit) {
		return 0, 0, errTimeRange
	}
	ns := w * int64(unit)
	prec := unit
	if len(frac) > 0 {
		f, ferr := strconv.ParseUint(string(frac), 10, 64)
		if ferr != nil {
			return 0, 0, errors.New("not a Unix time (digits, optionally a fraction)")
		}
		scale := int64(1)
		for range len(frac) {
			scale *= 10
		}
		prec = max(unit/time.Duration(scale), time.Nanosecond)
		ns += int64(f) * int64(unit) / scale
	}
	return ns, prec, nil
}

// parseLayout reads a time in layout, with the precision of its
// fraction of a second (a second when it has none).
func parseLayout(raw []byte, layout string) (int64, time.Duration, error) {
	t, err := time.Parse(layout, string(raw))
	if err != nil {
		return 0, 0, fmt.Errorf("not a time in %s", layoutName(layout))
	}
	if t.Year() < 1970 || t.Year() > 2261 {
		return 0, 0, errTimeRange
	}
	return t.UnixNano(), fractionPrecision(raw), nil
}

// LayoutPrecision is how finely text, a time written in the Go layout,
// was logged, as a record's Precision says: the precision of its
// fraction of a second (a second without one), or the layout's grain
// when coarser (a minute for 2006-01-02 15:04).
func LayoutPrecision(layout, text string) time.Duration {
	p := fractionPrecision([]byte(text))
	if grain, err := layoutGrain(layout); err == nil && grain > time.Second {
		return grain
	}
	return p
}

// fractionPrecision is the precision of the fraction of a second that
// follows the first '.' between digits in a time (a second without one).
func fractionPrecision(raw []byte) time.Duration {
	i := bytes.IndexByte(raw, '.')
	if i <= 0 || raw[i-1] < '0' || raw[i-1] > '9' {
		return time.Second
	}
	digits := 0
	for _, c := range raw[i+1:] {
		if c < '0' || c > '9' {
			break
		}
		digits++
	}
	p := time.Second
	for range min(digits, 9) {
		p /= 10
	}
	return p
}

func layoutName(layout string) string {
	switch layout {
	case clfLayout:
		return "the common log format (02/Jan/2006:15:04:05 -0700)"
	case time.RFC3339Nano:
		return "RFC 3339 (2006-01-02T15:04:05Z07:00)"
	}
	return "the layout " + layout
}

// months are the CLF month names, in order.
const months = "JanFebMarAprMayJunJulAugSepOctNovDec"

// parseCLFTime reads 02/Jan/2006:15:04:05 -0700 without allocating (as
// time.Parse does, for the zone of every line).
func parseCLFTime(raw []byte) (int64, bool) {
	if len(raw) != 26 || raw[2] != '/' || raw[6] != '/' || raw[11] != ':' || raw[14] != ':' || raw[17] != ':' || raw[20] != ' ' {
		return 0, false
	}
	num := func(b []byte) int {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	m := bytes.Index([]byte(months), raw[3:6])
	day, year, hour, minute, sec := num(raw[0:2]), num(raw[7:11]), num(raw[12:14]), num(raw[15:17]), num(raw[18:20])
	zh, zm := num(raw[22:24]), num(raw[24:26])
	if min(hour, minute, sec) < 0 || m < 0 || m%3 != 0 || day < 1 || year < 1970 || year > 2261 || hour > 23 || minute > 59 || sec > 59 || zh < 0 || zh > 23 || zm < 0 || zm > 59 || (raw[21] != '+' && raw[21] != '-') {
		return 0, false
	}
	month := time.Month(m/3 + 1)
	t := time.Date(year, month, day, hour, minute, sec, 0, time.UTC)
	if t.Day() != day { // 31/Feb
		return 0, false
	}
	offset := int64(zh*3600+zm*60) * int64(time.Second)
	if raw[21] == '-' {
		offset = -offset
	}
	return t.UnixNano() - offset, true
}

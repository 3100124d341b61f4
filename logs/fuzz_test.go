package logs

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"
)

// FuzzReader feeds arbitrary logs through every format: no panic, records
// in time order, every line either a record, bad, blank, a comment or a
// header; with requests matched, every record is matched, its URL path
// without a query string (and, in CLF, method and path single words).
func FuzzReader(f *testing.F) {
	f.Add([]byte(`1.2.3.4 - u [10/Oct/2023:13:55:36 +0000] "GET / HTTP/1.1" 200 5 "-" "ua" 0.1`+"\n"), uint8(0))
	f.Add([]byte("{\"time\":\"2023-10-10T13:55:36.5Z\",\"status\":429,\"request_time\":0.2}\n{\"time\":1}\n"), uint8(2))
	f.Add([]byte("time,status,request_time\n1696946136.001,200,0.1\n\"1\",\"2\n"), uint8(3))
	f.Add([]byte("time\n5\n3\n9\n1\n"), uint8(0))
	f.Add([]byte(`1.2.3.4 - - [10/Oct/2023:13:55:36 +0000] "-" 400 0 "-" "-"`+"\n"+`1.2.3.4 - - [10/Oct/2023:13:55:37 +0000] "GET https://h/a?b HTTP/2.0" 200 5`+"\n"), uint8(9))
	f.Add([]byte("time,method,path\n1,GET,/a?b#c\n2,,http://h\n"), uint8(11))
	f.Fuzz(func(t *testing.T, log []byte, format uint8) {
		opt := Options{Format: Format(format % 4), Mapping: Mapping{Tenant: ""}, MaxHeld: 4}
		if format&4 != 0 {
			opt.Mapping.Cost, opt.Mapping.Remaining = "cost", "remaining"
		}
		matched := int32(0)
		if format&8 != 0 {
			opt.Mapping.Method, opt.Mapping.Path = "method", "path" // CLF's own names
			opt.Match = func(method, path []byte) int32 {
				if bytes.ContainsAny(path, "?#") || opt.Format == FormatCLF && (bytes.ContainsRune(method, ' ') || bytes.ContainsRune(path, ' ')) {
					t.Fatalf("method %q, path %q", method, path)
				}
				matched++
				return matched
			}
		}
		r, err := NewReader(bytes.NewReader(log), "fuzz.log", opt)
		if err != nil {
			t.Fatal(err)
		}
		var prev int64
		for n := 0; ; n++ {
			var rec Record
			ok, err := r.Next(&rec)
			if err != nil {
				if !errors.Is(err, ErrNoRecords) && !errors.Is(err, ErrOptions) && !errors.Is(err, ErrHeader) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !ok {
				break
			}
			if n > 0 && rec.Time < prev {
				t.Fatalf("record at line %d (%d) before the previous (%d)", rec.Line, rec.Time, prev)
			}
			if rec.Precision <= 0 || rec.Cost < 1 || rec.Latency < 0 || (opt.Match != nil) != (rec.Match > 0) {
				t.Fatalf("record %+v", rec)
			}
			prev = rec.Time
		}
		if bad, _ := r.Bad(); r.Records()+bad > r.Lines() {
			t.Fatalf("%d records and %d bad lines of %d", r.Records(), bad, r.Lines())
		}
	})
}

// FuzzCLFTime holds the CLF fast path to time.Parse: whatever one
// accepts in the fast path's shape, the other reads the same instant.
func FuzzCLFTime(f *testing.F) {
	f.Add("10/Oct/2023:13:55:36 +0000")
	f.Add("29/Feb/2023:13:55:36 -0700")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseCLFTime([]byte(s))
		if !ok {
			return
		}
		want, err := time.Parse(clfLayout, s)
		if err != nil || got != want.UnixNano() {
			t.Fatalf("%q: fast path %d, time.Parse %v, %v", s, got, want.UnixNano(), err)
		}
	})
}

// FuzzLatency holds the exact decimal reading of a latency against
// strconv's: where both read a number they agree to the nanosecond.
func FuzzLatency(f *testing.F) {
	for _, s := range []string{"0.269", "12", "12.", "0.0000000015", "86399.999999999", "1e3", "-1", ".5", "120ms"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, ms bool) {
		scale := time.Second
		if ms {
			scale = time.Millisecond
		}
		d, ok := parseDecimal([]byte(s), scale)
		if !ok {
			return
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%q read as %v, but strconv refuses it: %v", s, d, err)
		}
		if want := v * float64(scale); math.Abs(float64(d)-want) > 1+want*1e-15 {
			t.Fatalf("%q read as %d ns, strconv %.1f", s, d, want)
		}
	})
}

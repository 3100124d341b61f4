package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeFitInput writes content to name in dir and returns its path.
func writeFitInput(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Poisson arrivals logged to the whole second (CLF) are Poisson, not an
// over-dispersed trace: a second's ties are spread within it before the
// judgment, as calibrate spreads them, the same way every run, and the
// output says so. At 20/s the ties made the dispersion index about 3, at
// 100/s about 50, and the fit advised replaying the log.
func TestFitArrivalsWholeSeconds(t *testing.T) {
	dir := t.TempDir()
	layout := "02/Jan/2006:15:04:05 -0700"
	for _, rate := range []float64{20, 100} {
		src := rand.New(rand.NewPCG(uint64(rate), 5))
		var b strings.Builder
		at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		for i := range int(rate * 300) {
			at = at.Add(time.Duration(src.ExpFloat64() / rate * 1e9))
			fmt.Fprintf(&b, "10.0.0.%d - - [%s] \"GET / HTTP/1.1\" 200 12\n", i%250, at.Format(layout))
		}
		log := writeFitInput(t, dir, fmt.Sprintf("clf%v.log", rate), b.String())
		process, workload, got := fitArrivalsJSON(t, log, "--column", "4", "--time-format", layout)
		if process != "poisson" || math.Abs(got-rate) > 0.05*rate {
			t.Errorf("Poisson at %v/s logged to the second judged %s at %v/s", rate, process, got)
		}
		validateWorkload(t, dir, workload)
		args := []string{"fit", "arrivals", log, "--column", "4", "--time-format", layout}
		code, once, errOut := cli(args...)
		if code != exitOK || !strings.Contains(once, "times logged to the second: spread within their second") {
			t.Errorf("exit %d, the text does not say the times were spread:\n%s%s", code, once, errOut)
		}
		if _, again, _ := cli(args...); again != once {
			t.Errorf("two fits of one file differ:\n%s\n%s", once, again)
		}
	}
	// Whole seconds without a tie, or with a tie in no more than 1% of
	// them (a duplicate line), are judged as logged: evenly spaced stays
	// constant. Spreading a whole file for one tie had judged it a trace.
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "%d\n", 1_790_000_000+i)
	}
	if process, _, _ := fitArrivalsJSON(t, writeFitInput(t, dir, "even.txt", b.String())); process != "constant" {
		t.Errorf("one arrival a second, on the second, judged %s", process)
	}
	b.WriteString("1790000299\n1790000299\n")
	if process, _, _ := fitArrivalsJSON(t, writeFitInput(t, dir, "dup.txt", b.String())); process != "constant" {
		t.Errorf("one arrival a second with one second logged thrice, judged %s", process)
	}
}

// Unix milliseconds read as seconds are out of range; the error suggests
// the unit that reads them.
func TestFitArrivalsMillisecondsHint(t *testing.T) {
	path := writeFitInput(t, t.TempDir(), "ms.txt", "1796032800118\n1796032800200\n")
	code, _, errOut := cli("fit", "arrivals", path)
	if want := "ms.txt:1: timestamp 1796032800118 is out of range (it must be a number ≥ 0): Unix milliseconds? (--time-format ms)"; code != exitInvalid || !strings.Contains(errOut, want) {
		t.Errorf("exit %d: %s, want %q", code, errOut, want)
	}
}

package planning

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/upstream"
)

func hostWithLatencies(ds ...time.Duration) *hostLog {
	h := &hostLog{latencies: newReservoir[time.Duration](len(ds)+1, rand.NewPCG(1, 2))}
	for _, d := range ds {
		h.latencies.add(d)
		if d == 0 {
			h.zeros++
		}
	}
	return h
}

// Latencies logged as 0 (under a millisecond, as nginx logs them) are
// fitted as half the least above 0, not left out: with a fifth of the
// answers at 0, leaving them out put the fit's median at the others'.
// The log's own quantiles count them as 0.
func TestCalibrateFitsZeroLatencies(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ds []time.Duration
	for i := range 1000 {
		d := time.Duration(80+rng.IntN(40)) * time.Millisecond
		if i%5 == 0 {
			d = 0
		}
		ds = append(ds, d)
	}
	l, err := fitLatencies(hostWithLatencies(ds...))
	if err != nil {
		t.Fatal(err)
	}
	if l.Zeros != 200 || l.Samples != 1000 {
		t.Errorf("zeros %d of %d", l.Zeros, l.Samples)
	}
	got, zeros, err := positiveLatencies([]time.Duration{0, 3 * time.Millisecond, time.Millisecond, 0})
	if err != nil || zeros != 2 || got[0] != 500*time.Microsecond || got[3] != 500*time.Microsecond || got[1] != 3*time.Millisecond {
		t.Errorf("positiveLatencies: %v %d %v", got, zeros, err)
	}
	if _, _, err := positiveLatencies([]time.Duration{0, 0}); err == nil || !strings.Contains(err.Error(), "every latency is logged as 0") {
		t.Errorf("all zero: %v", err)
	}
	if l.DataP50S >= 0.098 || l.DataP50S < 0.09 {
		t.Errorf("the log's p50 %v: the zeros not counted", l.DataP50S)
	}
	// The fit's median with the zeros in is under the others' alone
	// (about 100 ms), near the log's own.
	if l.P50S >= 0.098 || l.P50S < 0.08 {
		t.Errorf("the fit's p50 %v: the zeros left out", l.P50S)
	}
}

// Latencies all alike are written as a constant, not refused.
func TestCalibrateWritesAConstantLatency(t *testing.T) {
	l, err := fitLatencies(hostWithLatencies(100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := l.dist.(upstream.Constant); !ok || c.Value != 100*time.Millisecond || l.Family != "constant" || l.P99S != 0.1 {
		t.Errorf("%+v", l)
	}
}

package planning

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/models/arrivalfit"
	"github.com/limitsim/limitsim/models/arrivals"
	"github.com/limitsim/limitsim/sim"
	"github.com/limitsim/limitsim/upstream"
)

// ErrCalibrate is wrapped by a calibration's errors about its log (bad
// input, not a failure of the simulation).
var ErrCalibrate = errors.New("calibrate")

// DefaultCalibrationThreshold is the largest mean absolute percentage
// error, of each figure compared minute by minute, under which a
// calibrated model is trusted for planning.
const DefaultCalibrationThreshold = 0.10

// Calibration is a scenario calibrated from a production log: what was
// fitted per host, and how the model, run on the log's own arrivals,
// compares with the log minute by minute.
type Calibration struct {
	Log      string   `json:"log"`
	Format   string   `json:"format"`
	Records  int64    `json:"records"`
	BadLines int64    `json:"bad_lines"`
	FirstBad []string `json:"first_bad,omitempty"`
	Start    string   `json:"start"` // RFC 3339 UTC, the first record's
	SpanS    float64  `json:"span_s"`
	// Hosts are the fits, one a host in the order the log first names
	// them.
	Hosts []HostCalibration `json:"hosts"`
	// Cost is the logged costs' distribution (nil when the log maps no
	// cost field), Tenants the logged tenants (when it maps a tenant
	// field), in the order the log first names them.
	Cost    *CostCalibration    `json:"cost,omitempty"`
	Tenants []TenantCalibration `json:"tenants,omitempty"`
	// Minutes compare the model with the log, minute by minute; Errors
	// sums them up.
	Minutes []CalibrationMinute `json:"minutes"`
	Errors  CalibrationErrors   `json:"errors"`
	// Threshold is the largest error under which the model is Trusted;
	// Verdict says so in a sentence.
	Threshold float64 `json:"threshold"`
	// Workload compares the written scenario, run with its own arrivals,
	// with the whole log (see CheckWorkload).
	Workload *WorkloadCheck `json:"workload_check,omitempty"`
	Trusted  bool           `json:"trusted"`
	Verdict  string         `json:"verdict"`

	log        ReplayLog
	production map[int64]*minuteLog
	// first and last are the log's first and last instants (Unix ns).
	first, last int64
	// ownArrivals: the scenario's tenants bring their own arrivals; else
	// workload is the workload's process (see planArrivals).
	ownArrivals bool
	workload    arrivals.Spec
	// untenanted counts the records that logged no tenant: with any, the
	// tenants do not bring their own arrivals, which would leave them
	// out of the workload.
	untenanted int64
}

// Calibrate reads the log once and fits each host's model: its arrival
// process, the latency of its admitted requests, and its server quota
// (counting requests, or cost when the log maps a cost field); and, when
// logged, the costs' distribution and each tenant's share and arrival
// process (seed names the streams that spread times logged to the second
// and sample latencies and costs beyond the first 200,000). Check then
// runs the model on the log's arrivals.
func Calibrate(log ReplayLog, seed uint64) (*Calibration, error) {
	cl, err := readCalibrationLog(log, seed)
	if err != nil {
		return nil, err
	}
	hosts, err := fitHosts(log.Path, cl, seed)
	if err != nil {
		return nil, err
	}
	c := &Calibration{Log: log.Path, Format: cl.format.String(), Records: cl.records, BadLines: cl.bad, FirstBad: cl.named,
		Start: time.Unix(0, cl.first).UTC().Format(time.RFC3339), SpanS: time.Duration(cl.last - cl.first).Seconds(),
		Hosts: hosts, log: log, production: cl.minutes, first: cl.first, last: cl.last, untenanted: cl.untenanted}
	if cl.costLogged {
		c.Cost = fitCost(cl.costs.kept, cl.costs.seen)
	}
	if cl.tenantLogged {
		c.Tenants = fitTenants(cl, seed)
	}
	c.planArrivals()
	return c, nil
}

// HostCalibration is one host's fits.
type HostCalibration struct {
	Host     string             `json:"host"` // "" when the log names none
	Requests int64              `json:"requests"`
	Admitted int64              `json:"admitted"`
	Refused  int64              `json:"refused"`
	Other    int64              `json:"other_statuses"`
	Arrivals ArrivalCalibration `json:"arrivals"`
	Latency  LatencyCalibration `json:"latency"`
	Quota    QuotaInference     `json:"quota"`
}

// ArrivalCalibration is a host's or a tenant's arrival fit: the process
// the fit chose (see arrivalfit.Judge) and the one the scenario uses.
type ArrivalCalibration struct {
	Process string `json:"process"` // the fit's choice
	Reason  string `json:"reason"`
	// InScenario says what the written scenario gives these arrivals,
	// and why when it is not the fit's process.
	InScenario string  `json:"in_scenario"`
	Rate       float64 `json:"rate"` // mean requests per second, refusals included
	PeakMinute float64 `json:"peak_minute_rate"`
	GapCV      float64 `json:"gap_cv"`
	Dispersion float64 `json:"dispersion"`
	spec       arrivals.Spec
}

// LatencyCalibration is a host's latency fit over its admitted
// requests: the family with the smallest Kolmogorov–Smirnov statistic.
type LatencyCalibration struct {
	Family  string  `json:"family"`
	KS      float64 `json:"ks"`
	Samples int64   `json:"samples"`
	// P50S and P99S are the fit's; DataP50S and DataP99S the samples'.
	P50S     float64 `json:"p50_s"`
	P99S     float64 `json:"p99_s"`
	DataP50S float64 `json:"data_p50_s"`
	DataP99S float64 `json:"data_p99_s"`
	// RejectS is the median latency of the refusals (0: none logged).
	RejectS float64 `json:"reject_latency_s,omitempty"`
	// Zeros are the answers whose latency is logged as 0, under the log's
	// resolution: fitted as half the least latency above 0.
	Zeros int64 `json:"logged_zero,omitempty"`
	// resolution, with latencies logged as 0, is ¾ of the least above 0:
	// a quantile under it is 0, as the log writes it.
	resolution time.Duration
	// quantum is the step every latency is logged in (1 ms for nginx's
	// request_time), 0 when finer than a millisecond: a model's quantile
	// is compared rounded to it, as the log would write it.
	quantum time.Duration
	dist    upstream.Dist
}

// fitHosts fits every host of the log at path.
func fitHosts(path string, cl *calibrationLog, seed uint64) ([]HostCalibration, error) {
	out := make([]HostCalibration, 0, len(cl.hosts))
	for _, h := range cl.hosts {
		if cl.interrupt != nil && cl.interrupt.Load() {
			return nil, fmt.Errorf("%w: %s: stopped before fitting host %q", ErrInterrupted, path, h.name)
		}
		hc := HostCalibration{Host: h.name, Refused: countTrue(h.trace.refused), Other: h.other}
		hc.Requests = int64(len(h.trace.times)) + h.other
		hc.Admitted = int64(len(h.trace.times)) - hc.Refused
		label := path
		if h.name != "" {
			label = fmt.Sprintf("%s: host %s", path, h.name)
		}
		if len(h.trace.times) == 0 {
			return nil, fmt.Errorf("%w: %s: no request answered or refused (status below 400, 429 or 503) to fit", ErrCalibrate, label)
		}
		a, err := fitArrivals("calibrate/spread/"+h.name, h.trace.times, h.precision, seed)
		if err != nil && len(cl.hosts) > 1 && len(h.trace.times) < arrivalfit.MinArrivals && cl.last > cl.first {
			a, err = fewArrivals(h.trace.times, time.Duration(cl.last-cl.first)), nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: arrivals: %w", ErrCalibrate, label, err)
		}
		if h.latencies.seen < 2 {
			return nil, fmt.Errorf("%w: %s: %d answered requests with a latency logged; a latency fit needs at least two (--log-latency names the field)", ErrCalibrate, label, h.latencies.seen)
		}
		l, err := fitLatencies(h)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: latency of the admitted requests: %w", ErrCalibrate, label, err)
		}
		if h.precision >= time.Second {
			h.trace.ends, h.trace.coarse = nil, true // instants to the second say nothing of what was in service
		}
		hc.Arrivals, hc.Latency, hc.Quota = a, l, inferQuota(&h.trace)
		out = append(out, hc)
	}
	return out, nil
}

// fitArrivals judges the arrival process of a host's or a tenant's
// instants times, logged to precision (spread within their second when
// logged to the second or coarser, as a replay spreads them, from the
// named stream of seed: a second's ties are no burst).
func fitArrivals(stream string, times []int64, precision time.Duration, seed uint64) (ArrivalCalibration, error) {
	offsets := make([]time.Duration, len(times))
	for i, t := range times {
		offsets[i] = time.Duration(t - times[0])
	}
	if precision >= time.Second {
		arrivalfit.SpreadTies(offsets, times[0], precision, rand.New(sim.StreamSource(seed, stream)))
		first := offsets[0] // below 0 when the first window began before the first record
		for i := range offsets {
			offsets[i] -= first
		}
	}
	fit, err := arrivalfit.Judge(offsets)
	if err != nil {
		return ArrivalCalibration{}, err
	}
	return ArrivalCalibration{Process: fit.Spec.Kind.String(), Reason: fit.Reason, Rate: roundSignificant(fit.Rate, 4),
		PeakMinute: peakMinuteRate(times), GapCV: fit.GapCV, Dispersion: fit.Dispersion, spec: fit.Spec}, nil
}

// fewArrivals is the arrivals of a host or tenant among others with too
// few requests to judge (arrivalfit.MinArrivals), instants times:
// Poisson at their mean rate over the log's span.
func fewArrivals(times []int64, span time.Duration) ArrivalCalibration {
	n := len(times)
	rate := roundSignificant(float64(n)/span.Seconds(), 4)
	return ArrivalCalibration{Process: arrivals.KindPoisson.String(), Rate: rate, PeakMinute: peakMinuteRate(times),
		Reason: fmt.Sprintf("%d arrivals, too few to judge (%d needed): Poisson at their mean rate over the log's span", n, arrivalfit.MinArrivals),
		spec:   arrivals.Spec{Kind: arrivals.KindPoisson, Rate: rate}}
}

// peakMinuteRate is the most requests of one epoch-aligned minute among
// Unix instants times (in order), per second.
func peakMinuteRate(times []int64) float64 {
	if len(times) == 0 {
		return 0
	}
	first, last := times[0], times[len(times)-1]
	// A minute the log covers only in part (its first and last, or all of
	// a log shorter than one) counts over the part it covers, so that 50
	// requests in a log of 50 s are 1/s, not 50 a minute; a part shorter
	// than half a minute (or half the log) is too short to count.
	least := min(time.Minute, time.Duration(last-first)) / 2
	rate := func(minute int64, n int) float64 {
		from, to := max(minute*int64(time.Minute), first), min((minute+1)*int64(time.Minute), last)
		covered := time.Duration(to - from)
		if covered < least || covered <= 0 {
			return 0
		}
		return float64(n) / covered.Seconds()
	}
	var n int
	var peak float64
	minute := times[0] / int64(time.Minute)
	for _, t := range times {
		if m := t / int64(time.Minute); m != minute {
			peak = max(peak, rate(minute, n))
			minute, n = m, 0
		}
		n++
	}
	return max(peak, rate(minute, n))
}

// fitLatencies fits a host's admitted latencies. A latency logged as 0
// is under the log's resolution (nginx's request_time is to the
// millisecond): it is fitted as half the least latency above 0 logged,
// not left out, which would bias the fit upward. Latencies all alike are
// a constant.
func fitLatencies(h *hostLog) (LatencyCalibration, error) {
	samples, zeros, err := positiveLatencies(h.latencies.kept)
	if err != nil {
		return LatencyCalibration{}, err
	}
	s := slices.Clone(h.latencies.kept)
	slices.Sort(s)
	q := func(s []time.Duration, p float64) float64 {
		return s[min(max(int(float64(len(s))*p+0.999999999)-1, 0), len(s)-1)].Seconds()
	}
	l := LatencyCalibration{Samples: h.latencies.seen, DataP50S: q(s, 0.5), DataP99S: q(s, 0.99), Zeros: h.zeros}
	if zeros > 0 {
		// Between the zeros' stand-in (half the least above 0) and the
		// least above 0, clear of either's histogram rounding.
		l.resolution = slices.Min(samples) * 3 / 2
	}
	l.quantum = latencyQuantum(h.latencies.kept)
	if slices.Min(samples) == slices.Max(samples) {
		c := upstream.Constant{Value: samples[0]}
		l.Family, l.dist, l.P50S, l.P99S = "constant", c, c.Value.Seconds(), c.Value.Seconds()
	} else {
		fits, err := upstream.FitLatency(samples)
		if err != nil {
			return LatencyCalibration{}, err
		}
		best := fits[0]
		family, _ := upstream.FamilyOf(best.Dist)
		l.Family, l.KS, l.dist = family.Name, best.KS, best.Dist
		l.P50S, l.P99S = best.Quantile(0.5).Seconds(), best.Quantile(0.99).Seconds()
	}
	if len(h.refusedAt) > 0 {
		r := slices.Clone(h.refusedAt)
		slices.Sort(r)
		l.RejectS = time.Duration(q(r, 0.5) * 1e9).Round(time.Millisecond).Seconds()
	}
	return l, nil
}

// positiveLatencies are latencies with each 0 taken as half the least
// above 0, and how many were 0; an error when every one is 0.
func positiveLatencies(latencies []time.Duration) ([]time.Duration, int64, error) {
	least := time.Duration(0)
	var zeros int64
	for _, d := range latencies {
		switch {
		case d <= 0:
			zeros++
		case least == 0 || d < least:
			least = d
		}
	}
	if zeros == 0 {
		return latencies, 0, nil
	}
	if least == 0 {
		return nil, zeros, errors.New("every latency is logged as 0, under the log's resolution: log it finer (--log-latency names the field, --log-latency-unit its unit)")
	}
	out := make([]time.Duration, len(latencies))
	for i, d := range latencies {
		out[i] = max(d, least/2)
	}
	return out, zeros, nil
}

// alignment is the widest window of the hosts' fixed-window quotas (a
// minute at least): the replay's instant 0 is put on a multiple of it,
// so that its windows fall where the server's did.
func alignment(hosts []HostCalibration) time.Duration {
	a := time.Minute
	for _, h := range hosts {
		if h.Quota.Kind == kindname.QuotaFixedWindow {
			a = max(a, h.Quota.window)
		}
	}
	return a
}

// sortedMinutes are the keys of m in order.
func sortedMinutes[V any](m map[int64]V) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp.Compare[int64])
	return keys
}

// minQuantumSamples is the fewest latencies latencyQuantum reads a step
// from.
const minQuantumSamples = 50

// latencyQuantum is the coarsest step of a second, 100 ms, 10 ms or 1 ms
// that every latency is a multiple of: the resolution the log writes them
// in (nginx's request_time is to the millisecond). 0 when finer.
func latencyQuantum(latencies []time.Duration) time.Duration {
	if len(latencies) < minQuantumSamples {
		return 0 // a few values may share a coarser step by chance
	}
	for _, q := range []time.Duration{time.Second, 100 * time.Millisecond, 10 * time.Millisecond, time.Millisecond} {
		if !slices.ContainsFunc(latencies, func(d time.Duration) bool { return d%q != 0 }) {
			return q
		}
	}
	return 0
}

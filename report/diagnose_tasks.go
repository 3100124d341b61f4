package report

import (
	"fmt"

	"github.com/limitsim/limitsim/report/metrics"
)

// taskFloodParked is the least number of requests parked on a limiter
// at once that taskFlood reports, when it is also taskFloodRatio times
// the requests in flight at their peak: the seed's fetch_all of 5,000
// URLs stays under it, as the article means it to.
const (
	taskFloodParked = 10_000
	taskFloodRatio  = 100
)

// taskFlood: a task for every request, created up front (ingest =
// "tasks", no bound refusing any), so many parked on the limiters that
// memory follows the size of the input rather than the concurrency (the
// article's fetch_all: for very large inputs, limit task creation too,
// with a bounded queue and a fixed worker pool). A line that grows over
// the run is memory_growth instead.
func taskFlood(a *analysis) {
	r := a.r
	if r.Queue.Kind == "queue" || r.Requests.Rejected > 0 || a.has("memory_growth") {
		return
	}
	var parked int64
	var at string
	for _, l := range r.Limiters {
		if l.MaxWaiting > parked {
			parked, at = l.MaxWaiting, l.Name
		}
	}
	inFlight := max(1, r.InFlight.Max)
	if parked < taskFloodParked || parked < taskFloodRatio*inFlight {
		return
	}
	// The workers and the queue are each instance's.
	workers := (inFlight + int64(max(1, r.Instances)) - 1) / int64(max(1, r.Instances))
	a.add(metrics.Diagnosis{Code: "task_flood", Severity: "warning", Title: "A task for every request, created up front",
		Evidence: fmt.Sprintf("%s requests waited on %s at once, with %s in flight at most", Grouped(parked), at, Grouped(inFlight)),
		Cause:    "ingest = \"tasks\" makes each request a task as it arrives and parks it on the limiters: memory follows the size of the input, not the concurrency",
		Fix: metrics.Fix{Text: fmt.Sprintf("limit task creation: a bounded ingest queue and a fixed pool of %s workers an instance (ingest = \"queue\", queue_capacity = %s, queue_full = \"block\"), which serve as fast and hold %s requests an instance at most",
			Grouped(workers), Grouped(workers), Grouped(2*workers)),
			Set: map[string]any{"client.ingest": "queue", "client.workers": workers, "client.queue_capacity": workers, "client.queue_full": "block"}}})
}

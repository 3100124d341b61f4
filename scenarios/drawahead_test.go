package scenarios

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/limitsim/limitsim/sim/client"
)

// TestDrawingAheadChangesNothing runs every bundled scenario with its
// variates drawn ahead on another goroutine and without, and holds the
// results of each to be byte for byte the same: a stream read by both
// sides, a value skipped at a batch's edge or a latency drawn ahead past
// a latency_schedule change would each move some figure.
func TestDrawingAheadChangesNothing(t *testing.T) {
	exs, err := Examples()
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exs {
		t.Run(ex.Name, func(t *testing.T) {
			t.Parallel()
			sc, err := Parse("examples/"+ex.Name+".toml", ex.Source)
			if err != nil {
				t.Fatal(err)
			}
			sc.Run.Replications = min(sc.Run.Replications, 2)
			var results [2][]byte
			for i, mode := range []client.DrawAhead{client.DrawAheadNever, client.DrawAheadAlways} {
				out, err := sc.Simulate(client.Options{DrawAhead: mode})
				if err != nil {
					t.Fatal(err)
				}
				out.Series.Close()
				if results[i], err = json.Marshal(out.Results); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(results[0], results[1]) {
				t.Fatalf("results differ with the variates drawn ahead:\n%s\n%s", results[0], results[1])
			}
		})
	}
}

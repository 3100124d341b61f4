package scenarios

import (
	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/sim/client"
)

// simulate builds sc, runs it and analyses the results, as `limitsim run`
// does.
func simulate(sc *Scenario) (*client.Outcome, error) {
	out, err := sc.Simulate(client.Options{})
	if err != nil {
		return nil, err
	}
	report.Analyze(out.Results, out.Series)
	return out, nil
}

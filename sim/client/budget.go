package client

import "time"

// budgetSlots is how many slots a retry budget's window is kept in.
const budgetSlots = 20

// budget counts one instance's requests and retries over a sliding
// window, in slots of window ÷ budgetSlots, for Retry.Budget.
type budget struct {
	reqs, retries [budgetSlots]float64
	at            [budgetSlots]int64 // the slot number each entry counts for
}

func (b *budget) slot(now, window time.Duration) (i int64, cur int64) {
	cur = int64(now / max(1, window/budgetSlots))
	i = cur % budgetSlots
	if b.at[i] != cur {
		b.at[i], b.reqs[i], b.retries[i] = cur, 0, 0
	}
	return i, cur
}

// request counts a request starting at now.
func (b *budget) request(now, window time.Duration) {
	i, _ := b.slot(now, window)
	b.reqs[i]++
}

// allow reports whether a retry at now stays within ratio × the requests
// of the window, and counts it if so.
func (b *budget) allow(now time.Duration, ratio float64, window time.Duration) bool {
	i, cur := b.slot(now, window)
	var reqs, retries float64
	for k := range budgetSlots {
		if cur-b.at[k] < budgetSlots {
			reqs += b.reqs[k]
			retries += b.retries[k]
		}
	}
	if retries+1 > ratio*reqs {
		return false
	}
	b.retries[i]++
	return true
}

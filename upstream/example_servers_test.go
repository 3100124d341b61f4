package upstream_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/limitsim/limitsim/internal/kindname"
	"github.com/limitsim/limitsim/upstream"
)

// nginx's `limit_req rate=50r/s burst=2` without nodelay, four requests
// at one instant: the first finds excess 0, the next two are held 20 ms
// per request ahead of them before their 50 ms of service, the fourth
// exceeds the burst and is refused with nginx's default 503.
func Example_nginxLimitReq() {
	s, err := upstream.NewServer(upstream.Config{Host: "api", Latency: upstream.Constant{Value: 50 * time.Millisecond},
		Quotas:     []upstream.Quota{{Kind: kindname.QuotaNginxLimitReq, Rate: 50, Burst: 2}},
		RetryAfter: upstream.RetryAfter{None: true}}, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		panic(err)
	}
	for range 4 {
		a := s.Start(0, 1)
		fmt.Printf("ok %v, status %d, held %v, answered after %v\n", a.OK, a.Status, a.Held, a.After)
	}
	// Output:
	// ok true, status 0, held 0s, answered after 50ms
	// ok true, status 0, held 20ms, answered after 70ms
	// ok true, status 0, held 40ms, answered after 90ms
	// ok false, status 503, held 0s, answered after 0s
}

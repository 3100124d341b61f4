package logs_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/limitsim/limitsim/logs"
)

// A combined log with nginx's request time appended, read one record at
// a time with the API key as the tenant: the second line, logged later
// but for an earlier request, comes out first; the bad line is named.
func ExampleReader() {
	log := `10.0.0.1 - key-a [10/Oct/2023:13:55:37 +0000] "GET /v1 HTTP/1.1" 200 12 "-" "curl" 0.120
10.0.0.2 - key-b [10/Oct/2023:13:55:36 +0000] "GET /v1 HTTP/1.1" 429 0 "-" "curl" 0.002
a line that is not a log line
`
	r, err := logs.NewReader(strings.NewReader(log), "access.log", logs.Options{Mapping: logs.Mapping{Tenant: "remote_user"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	var rec logs.Record
	for {
		ok, err := r.Next(&rec)
		if err != nil || !ok {
			break
		}
		fmt.Println(time.Unix(0, rec.Time).UTC().Format(time.TimeOnly), rec.Tenant, rec.Status, rec.Latency)
	}
	bad, named := r.Bad()
	fmt.Println(bad, named[0])
	// Output:
	// 13:55:36 key-b 429 2ms
	// 13:55:37 key-a 200 120ms
	// 1 access.log:3: not a common or combined log line (addr ident user [time] "request" status bytes)
}

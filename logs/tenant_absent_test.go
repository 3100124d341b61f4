package logs

import "testing"

// A tenant field that logs no value ("-", as CLF's $remote_user of an
// anonymous request, or empty) gives the record no tenant, rather than a
// tenant named "-" or a bad line; a tenant field the line lacks is still
// a bad line.
func TestTenantWithoutValueIsNone(t *testing.T) {
	log := `203.0.113.7 - key-a [10/Oct/2023:13:55:36 +0000] "GET / HTTP/1.1" 200 1
203.0.113.8 - - [10/Oct/2023:13:55:37 +0000] "GET / HTTP/1.1" 200 1
`
	recs, _ := readAll(t, log, Options{Mapping: Mapping{Tenant: "remote_user"}})
	if len(recs) != 2 || recs[0].Tenant != "key-a" || recs[1].Tenant != "" {
		t.Fatalf("records %+v: want tenants key-a and none", recs)
	}
	log = `{"time":1696946136,"key":""}
{"time":1696946137,"key":"-"}
{"time":1696946138}
`
	recs, r := readAll(t, log, Options{Mapping: Mapping{Tenant: "key"}})
	bad, named := r.Bad()
	if len(recs) != 2 || recs[0].Tenant != "" || recs[1].Tenant != "" || bad != 1 || named[0].Line != 3 {
		t.Errorf("records %+v, bad lines %v: want two without a tenant, line 3 bad", recs, named)
	}
}

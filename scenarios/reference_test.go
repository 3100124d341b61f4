package scenarios

import (
	"flag"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models"
	"github.com/limitsim/limitsim/upstream"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated tables in docs/scenario.md")

// The scenario reference lists exactly the registered kinds, each with the
// keys the decoder accepts for it, and every key as declared: a kind added
// to the table, or a key added to a kind, shows up in the docs or fails
// here.
func TestReferenceListsEveryKind(t *testing.T) {
	const path = "../docs/scenario.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	for _, block := range []struct{ name, want string }{{"kinds", KindsReference()}, {"keys", KeysReference()}} {
		begin := strings.Index(s, "<!-- "+block.name+":begin")
		end := strings.Index(s, "<!-- "+block.name+":end -->")
		if begin < 0 || end < begin {
			t.Fatalf("%s lacks the %s:begin/%s:end markers", path, block.name, block.name)
		}
		begin += strings.Index(s[begin:], "-->\n") + len("-->\n")
		if *updateDocs {
			s = s[:begin] + block.want + s[end:]
			continue
		}
		if got := s[begin:end]; got != block.want {
			t.Fatalf("the %s table in %s is stale (go test ./scenarios -run TestReferenceListsEveryKind -update-docs):\n%s", block.name, path, block.want)
		}
	}
	if *updateDocs {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := KindsReference()
	for _, k := range models.Kinds() {
		if !strings.Contains(want, "| `"+k.Name+"` |") {
			t.Errorf("kind %s missing from the reference", k.Name)
		}
	}
}

// Every key a registered kind lists has a decoder: a key added to the
// kinds table with a field or a default of a type the decoder does not
// read would otherwise be reported to users as a bug in their file.
func TestEveryKindKeyDecodes(t *testing.T) {
	for _, k := range models.Kinds() {
		for _, key := range k.Keys {
			d := &decoder{file: "t.toml", lines: keyIndex{}}
			tb := d.table("client.limiter[0]", map[string]any{})
			var l Limiter
			d.limiterKey(tb, &l.Params, k, key)
			for _, p := range d.probs {
				if strings.Contains(p.Msg, "nothing decodes") {
					t.Errorf("kind %s: %s", k.Name, p.Msg)
				}
			}
		}
	}
	d := &decoder{file: "t.toml", lines: keyIndex{}}
	var l Limiter
	colour := models.Key{Name: "colour", Field: func(p *models.Params) any { return &p.MaxWaiting }}
	d.limiterKey(d.table("x", map[string]any{}), &l.Params, models.Kind{Name: "made_up"}, colour)
	if len(d.probs) != 1 || !strings.Contains(d.probs[0].Msg, "nothing decodes") {
		t.Fatalf("an undecoded key is not reported: %v", d.probs)
	}
}

// Every key a quota kind lists decodes and encodes: a kind added to the
// quota table without them fails here, not in a user's file.
func TestEveryQuotaKindKeyDecodesAndEncodes(t *testing.T) {
	for _, k := range upstream.QuotaKinds() {
		d := &decoder{file: "t.toml", lines: keyIndex{}}
		tb := d.table("upstream[0].quota", map[string]any{})
		q := upstream.Quota{Kind: k.Name}
		for _, key := range k.Keys {
			d.quotaParam(tb, &q, k, key)
		}
		for _, p := range d.probs {
			if strings.Contains(p.Msg, "nothing decodes") {
				t.Errorf("quota kind %s: %s", k.Name, p.Msg)
			}
		}
		if slices.Contains(k.Keys, "schedule") { // optional: written only when set
			q.Schedule = []upstream.RateStep{{At: time.Minute, Rate: 2}}
		}
		if slices.Contains(k.Keys, "unit") { // optional: written only when it counts cost
			q.Unit = upstream.UnitCost
		}
		text, err := Quota(q).MarshalTOML()
		if err != nil {
			t.Errorf("quota kind %s does not encode: %v", k.Name, err)
		}
		for _, key := range k.Keys {
			if !strings.Contains(string(text), key+" = ") {
				t.Errorf("quota kind %s encodes as %s, without %s", k.Name, text, key)
			}
		}
	}
}

// An upstream may publish several quotas at once: `quota` takes an array
// of them, builds them all, and a resolved scenario writes them back as
// an array that loads to the same quotas.
func TestSeveralQuotasDecodeAndRoundTrip(t *testing.T) {
	src := `name = "multi"
[run]
duration = "10s"
[workload]
rate = 10.0
[[upstream]]
host = "*"
latency = { dist = "constant", value = "10ms" }
quota = [{ kind = "token_bucket", rate = 10.0, burst = 10 }, { kind = "fixed_window", limit = 5000, window = "1h" }, { kind = "concurrency", permits = 100 }]
`
	sc, err := Parse("multi.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.Build()
	if err != nil {
		t.Fatal(err)
	}
	if q := cfg.Upstreams[0].Quotas; len(q) != 3 || q[1].Kind != "fixed_window" || q[1].Limit != 5000 || q[2].Permits != 100 {
		t.Fatalf("quotas %+v", q)
	}
	text, err := sc.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, `quota = [{ kind = "token_bucket"`) {
		t.Fatalf("resolved scenario does not write the quotas as an array:\n%s", text)
	}
	back, err := Parse("resolved.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Upstreams[0].Quota, sc.Upstreams[0].Quota) {
		t.Fatalf("round trip: %+v, want %+v", back.Upstreams[0].Quota, sc.Upstreams[0].Quota)
	}
}

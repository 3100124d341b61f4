package scenarios

import (
	"fmt"
	"strings"

	"github.com/limitsim/limitsim/models"
)

// KindsReference renders the limiter kinds table of the scenario reference
// (docs/scenario.md) from the kinds registered in models.
func KindsReference() string {
	var b strings.Builder
	b.WriteString("| kind | keys | behaviour |\n| --- | --- | --- |\n")
	for _, k := range models.Kinds() {
		keys := make([]string, len(k.Keys))
		for i, key := range k.Keys {
			keys[i] = "`" + key.Name + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, strings.Join(keys, ", "), k.Doc)
	}
	return b.String()
}

// KeysReference renders the table of the limiter kinds' keys in the
// scenario reference from their declarations in models: one row for each
// key as declared, with the kinds that read it so.
func KeysReference() string {
	type row struct {
		key   models.Key
		kinds []string
	}
	var rows []*row
	byText := map[string]*row{}
	for _, k := range models.Kinds() {
		for _, key := range k.Keys {
			text := strings.Join([]string{key.Name, key.TypeText(), key.DefaultText(), key.Doc}, "|")
			r := byText[text]
			if r == nil {
				r = &row{key: key}
				byText[text] = r
				rows = append(rows, r)
			}
			r.kinds = append(r.kinds, "`"+k.Name+"`")
		}
	}
	var b strings.Builder
	b.WriteString("| key | kinds | type | default | meaning |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.key.Name, strings.Join(r.kinds, ", "), r.key.TypeText(), r.key.DefaultText(), r.key.Doc)
	}
	return b.String()
}

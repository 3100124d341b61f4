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

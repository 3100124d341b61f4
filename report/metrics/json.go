package metrics

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the results as indented JSON. Field order is fixed by the
// struct and maps are sorted by encoding/json, so the bytes are reproducible.
func WriteJSON(w io.Writer, r *Results) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

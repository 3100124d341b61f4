package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// WriteJSON writes the results as indented JSON. Field order is fixed by the
// struct and maps are sorted by encoding/json, so the bytes are reproducible.
//
// Lists longer than streamAbove (ten thousand tenants, their scopes, a
// thousand hosts) are written an entry at a time: encoding/json builds the
// whole document twice in memory (compact, then indented) before writing
// it, which for ten thousand tenants is some 15 MB on top of the run. The
// bytes are those encoding/json writes for the whole.
func WriteJSON(w io.Writer, r *Results) error {
	skeleton, lists := withPlaceholders(r)
	var buf bytes.Buffer
	encoder := json.NewEncoder(&buf)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(skeleton); err != nil {
		return err
	}
	doc := buf.Bytes()
	if len(lists) == 0 {
		_, err := w.Write(doc)
		return err
	}
	var spans []span
	for _, list := range lists {
		from, to, indent, err := placeholderSpan(doc, list.marker)
		if err != nil {
			return err
		}
		spans = append(spans, span{from, to, indent, list})
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	out := bufio.NewWriterSize(w, 64<<10) // thousands of small entries: not a write each
	at := 0
	for _, s := range spans {
		out.Write(doc[at:s.from])
		for i := range s.list.n {
			if i > 0 {
				out.WriteString(",\n")
				out.Write(s.indent)
			}
			b, err := json.MarshalIndent(s.list.entry(i), string(s.indent), "  ")
			if err != nil {
				return err
			}
			out.Write(b)
		}
		at = s.to
	}
	out.Write(doc[at:])
	return out.Flush() // the first write error, if any
}

// span is a placeholder entry in a document, from its "{" to past its
// "}", the indent of its lines, and the list to write in its place.
type span struct {
	from, to int
	indent   []byte
	list     streamedList
}

// streamAbove is the length above which a list of the results is written
// an entry at a time.
const streamAbove = 256

// streamedList is a list whose entries WriteJSON writes one at a time in
// place of the placeholder entry named marker.
type streamedList struct {
	marker string
	n      int
	entry  func(i int) any
}

// withPlaceholders returns a copy of r whose long lists hold one
// placeholder entry each, named by a marker no name can hold, and the
// lists to write in their place. r is not changed.
func withPlaceholders(r *Results) (*Results, []streamedList) {
	var lists []streamedList
	marker := func() string { return fmt.Sprintf("\x00limitsim list %d\x00", len(lists)) }
	skeleton := *r
	if n := len(r.Tenants); n > streamAbove {
		m := marker()
		skeleton.Tenants = []TenantStats{{Name: m}}
		lists = append(lists, streamedList{m, n, func(i int) any { return &r.Tenants[i] }})
	}
	if n := len(r.Upstreams); n > streamAbove {
		m := marker()
		skeleton.Upstreams = []UpstreamStats{{Host: m}}
		lists = append(lists, streamedList{m, n, func(i int) any { return &r.Upstreams[i] }})
	}
	cloned := false
	for limiter := range r.Limiters {
		scopes := r.Limiters[limiter].Scopes
		if len(scopes) <= streamAbove {
			continue
		}
		if !cloned {
			skeleton.Limiters, cloned = slices.Clone(r.Limiters), true
		}
		m := marker()
		skeleton.Limiters[limiter].Scopes = []ScopeStats{{Key: m}}
		lists = append(lists, streamedList{m, len(scopes), func(i int) any { return &scopes[i] }})
	}
	return &skeleton, lists
}

// placeholderSpan finds the entry holding marker in an indented document:
// from its opening brace to just past its closing one, and the indent of
// its lines.
func placeholderSpan(doc []byte, marker string) (from, to int, indent []byte, err error) {
	quoted, _ := json.Marshal(marker)
	at := bytes.Index(doc, quoted)
	if at < 0 {
		return 0, 0, nil, fmt.Errorf("writing JSON: placeholder %q not found", marker)
	}
	// The marker's line is indented one step deeper than its entry's.
	line := bytes.LastIndexByte(doc[:at], '\n') + 1
	depth := 0
	for line+depth < len(doc) && doc[line+depth] == ' ' {
		depth++
	}
	if depth < 2 {
		return 0, 0, nil, fmt.Errorf("writing JSON: placeholder %q at depth %d", marker, depth)
	}
	indent = doc[line : line+depth-2]
	open := append(append([]byte("\n"), indent...), '{')
	closing := append(append([]byte("\n"), indent...), '}')
	start := bytes.LastIndex(doc[:at], open)
	end := bytes.Index(doc[at:], closing)
	if start < 0 || end < 0 {
		return 0, 0, nil, fmt.Errorf("writing JSON: placeholder %q has no entry around it", marker)
	}
	return start + len(open) - 1, at + end + len(closing), indent, nil
}

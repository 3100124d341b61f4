package scenarios

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by every scenario validation error.
var ErrInvalid = errors.New("invalid scenario")

// Problem is one thing wrong with a scenario file.
type Problem struct {
	File string
	Line int    // 0 when the problem has no single line
	Key  string // dotted path, "" for the whole file
	Msg  string
}

func (p Problem) String() string {
	loc := printable(p.File)
	key := printable(p.Key)
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if p.Key == "" {
		return fmt.Sprintf("%s: %s", loc, p.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, key, p.Msg)
}

// printable quotes text holding control characters, so that one problem is
// one line and nothing reaches the terminal raw.
func printable(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) && r != ' ' {
			return strconv.Quote(s)
		}
	}
	return s
}

// Problems is every problem found in a scenario, in line order. It is the
// error Load returns for an invalid file.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.Is(err, ErrInvalid) hold.
func (ps Problems) Unwrap() error { return ErrInvalid }

func (ps Problems) sorted() Problems {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	return ps
}

// nearest returns the candidate closest to s in edit distance, if close
// enough to be a plausible typo.
func nearest(s string, candidates []string) (string, bool) {
	best, bestD := "", len(s)+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(1, min(3, len(s)/3))
	if bestD <= limit {
		return best, true
	}
	// "rate_limt" → "rate": a valid key that is the first word of the typo.
	if head, _, ok := strings.Cut(s, "_"); ok {
		for _, c := range candidates {
			if strings.EqualFold(c, head) {
				return c, true
			}
		}
	}
	return best, false
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and swaps of adjacent letters ("raet" → "rate")
// each count one.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b))
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

package prefetch

import "testing"

// A prefetch only hints: it must not fault on a nil pointer or one to the
// last byte of a value, and must leave the value as it was. An
// implementation that loaded through the pointer (a MOV where a PREFETCH
// belongs) faults on nil.
func TestOfNeverFaultsNorWrites(t *testing.T) {
	Of[int](nil)
	Of[struct{}](nil)
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i)
	}
	Of(&b[0])
	Of(&b[len(b)-1])
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("byte %d changed to %d", i, b[i])
		}
	}
}

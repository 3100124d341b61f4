package metrics

import (
	"testing"
	"unsafe"
)

// A scope's and a tenant's records are one cache line each on 64-bit
// platforms: with ten thousand of them, each request reaches a different
// one, and a record straddling two lines costs two loads from memory. An
// array of them large enough to matter starts on a page, so each record
// starts a line.
func TestPerScopeRecordsFillOneCacheLine(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return // the sizes below are for 64-bit platforms
	}
	if n := unsafe.Sizeof(scopeRecord{}); n != 64 {
		t.Errorf("scopeRecord is %d bytes, want 64", n)
	}
	if n := unsafe.Sizeof(tenantRecord{}); n != 64 {
		t.Errorf("tenantRecord is %d bytes, want 64", n)
	}
}

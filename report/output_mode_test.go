//go:build unix

package report

import (
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
)

// Output files get 0644 less the umask, as any Go tool's do, not the 0600
// of os.CreateTemp; no temporary file is left behind.
func TestWriteFileHonoursTheUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	err := Folder{Dir: dir}.WriteFile("metrics.json", func(w io.Writer) (int64, error) {
		n, err := io.WriteString(w, "{}\n")
		return int64(n), err
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir + "/metrics.json")
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want -rw-r--r--", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

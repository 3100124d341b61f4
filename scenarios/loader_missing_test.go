package scenarios

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

// A scenario file that is not there is said so in the command line's
// words, not the file system's ("stat nosuch.toml: no such file or
// directory"), and is still a missing file to errors.Is.
func TestOpenMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nosuch.toml")
	_, err := NewLoader().Open(path, nil)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || err.Error() != path+": no such file (see `limitsim scenarios` for the bundled examples)" {
		t.Errorf("%v", err)
	}
}

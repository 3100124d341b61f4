package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LockFile is the file, in an output folder, that a command writing the
// folder holds locked while it writes: it names the holder's process id
// and command line. It is not an output: no manifest lists it and no
// writer removes it but its holder.
const LockFile = ".limitsim-lock"

// OutputsLockedError is LockOutputs' error for a folder another process
// is writing.
type OutputsLockedError struct {
	Dir     string
	PID     int    // 0 when the holder had not yet written its id
	Command string // the holder's command line, "" when unknown
}

func (e *OutputsLockedError) Error() string {
	holder := "another process"
	if e.PID > 0 {
		holder = "process " + strconv.Itoa(e.PID)
	}
	if e.Command != "" {
		holder += " (" + e.Command + ")"
	}
	return fmt.Sprintf("%s is being written by %s; wait for it to end or choose another folder", e.Dir, holder)
}

// LockOutputs takes output folder dir, which must exist, for one writer:
// it holds an exclusive flock(2) on dir's LockFile, recording in it this
// process's id and command (its command line), and returns the function
// that releases the folder. A folder another process holds is refused at
// once with an *OutputsLockedError naming the holder. The kernel releases
// the lock of a process that dies, so a lock file left behind is taken
// over, whatever process it names. Locks belong to open files: a second
// LockOutputs of the same folder in one process is refused too.
func LockOutputs(dir, command string) (unlock func(), err error) {
	path := filepath.Join(dir, LockFile)
	// The holder removes the file when it ends: a writer that opened it
	// just before then locks a file no longer in the folder, and opens it
	// again.
	for range 100 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("locking the folder: %w", err)
		}
		if err := tryLock(f); err != nil {
			if errors.Is(err, errLocked) {
				err = lockHolder(dir, f)
			} else {
				err = fmt.Errorf("locking the folder: %s: %w", path, err)
			}
			f.Close()
			return nil, err
		}
		if !samePath(f, path) {
			f.Close()
			continue
		}
		if err := recordHolder(f, command); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking the folder: %s: %w", path, err)
		}
		return func() {
			if samePath(f, path) {
				os.Remove(path) // while still locked: see above
			}
			f.Close() // releases the lock
		}, nil
	}
	return nil, fmt.Errorf("locking the folder: %s kept being replaced", path)
}

// errLocked is tryLock's error for a file another open file holds.
var errLocked = errors.New("locked")

// samePath reports whether f is still the file at path.
func samePath(f *os.File, path string) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	pi, err := os.Stat(path)
	return err == nil && os.SameFile(fi, pi)
}

// recordHolder writes this process's id and command into f, the lock
// file it holds: the id on the first line, the command on the second.
func recordHolder(f *os.File, command string) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"+command+"\n"), 0)
	return err
}

// lockHolder is the error for dir, whose lock file f another process
// holds. That process writes its id just after taking the lock: an empty
// file is read again for a short while.
func lockHolder(dir string, f *os.File) error {
	e := &OutputsLockedError{Dir: dir}
	for wait := time.Millisecond; wait <= 32*time.Millisecond; wait *= 2 {
		buf := make([]byte, 4096)
		n, _ := f.ReadAt(buf, 0)
		first, rest, _ := strings.Cut(string(buf[:n]), "\n")
		if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && strings.HasSuffix(rest, "\n") {
			e.PID, e.Command = pid, strings.TrimSpace(rest)
			return e
		}
		time.Sleep(wait)
	}
	return e
}

package report

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestLockOutputsRefusesASecondWriter(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockOutputs(dir, "limitsim run first -o out")
	if err != nil {
		t.Fatal(err)
	}
	// Locks belong to open files: a second open in this process conflicts.
	_, err = LockOutputs(dir, "limitsim run second -o out")
	var le *OutputsLockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || le.Command != "limitsim run first -o out" || le.Dir != dir {
		t.Fatalf("second writer: %#v (%v), want the first one named", le, err)
	}
	unlock()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the released folder still holds %s (%v)", LockFile, err)
	}
	unlock, err = LockOutputs(dir, "limitsim run second -o out")
	if err != nil {
		t.Fatalf("once released: %v", err)
	}
	unlock()
}

func TestLockOutputsTakesOverALockLeftBehind(t *testing.T) {
	// A process that has ended: its id runs no more, and it holds nothing.
	gone := exec.Command(os.Args[0], "-test.run=^$")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, LockFile)
	if err := os.WriteFile(path, []byte(strconv.Itoa(gone.Process.Pid)+"\nlimitsim run gone -o out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unlock, err := LockOutputs(dir, "limitsim report out")
	if err != nil {
		t.Fatalf("a lock left by process %d: %v", gone.Process.Pid, err)
	}
	defer unlock()
	got, err := os.ReadFile(path)
	if want := strconv.Itoa(os.Getpid()) + "\nlimitsim report out\n"; err != nil || string(got) != want {
		t.Errorf("lock file %q (%v), want %q", got, err, want)
	}
}

// The lock file is no output: a manifest never lists it and pruning never
// removes it, even from a manifest edited to list it.
func TestLockFileIsNoOutput(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockOutputs(dir, "limitsim run a -o out")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	for name, text := range map[string]string{OutputsManifest: LockFile + "\nold.csv\n", "old.csv": "x"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := PruneOutputs(dir, []string{"metrics.json", LockFile}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Errorf("pruning removed the lock file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "old.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old.csv, listed, was kept (%v)", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, OutputsManifest)); string(got) != "metrics.json\n" {
		t.Errorf("manifest %q, want only metrics.json", got)
	}
}

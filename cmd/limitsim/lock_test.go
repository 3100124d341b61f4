package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/report"
)

// folderFiles reads every file in dir, by relative path.
func folderFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameFiles reports how files differs from the folder's files before.
func sameFiles(t *testing.T, before, after map[string][]byte) {
	t.Helper()
	for name, data := range before {
		if got, ok := after[name]; !ok || !bytes.Equal(got, data) {
			t.Errorf("%s was changed or removed", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s was written", name)
		}
	}
}

// Every command that writes a folder is refused, before it simulates
// anything, while another writer holds it; the holder's files stay as
// they are, and once it is done the folder is free.
func TestOutputFolderLockRefusesASecondWriter(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := cli("run", "token-bucket", "--quiet", "-o", dir); code != exitOK {
		t.Fatalf("first run: exit %d: %s", code, errOut)
	}
	unlock, err := report.LockOutputs(dir, "limitsim run token-bucket -o out")
	if err != nil {
		t.Fatal(err)
	}
	before := folderFiles(t, dir)
	for _, args := range [][]string{
		{"run", "token-bucket", "--quiet", "-o", dir},
		{"live", "token-bucket", "--quiet", "--speed", "100", "--max-wall", "1s", "-o", dir},
		{"compare", "token-bucket", "token-bucket", "--quiet", "-o", dir},
		{"plan", "token-bucket", "--sweep", "client.limiter.quota.rate=60,80", "-o", dir},
		{"plan", "token-bucket", "--search", "client.limiter.quota.rate=10:100", "--constraint", "rate_429<0.01", "-o", dir},
		{"report", dir},
	} {
		code, out, errOut := cli(args...)
		if code != exitInvalid || out != "" {
			t.Errorf("%s: exit %d, want %d with nothing printed: %s", args[0], code, exitInvalid, errOut)
		}
		for _, want := range []string{dir, "process " + strconv.Itoa(os.Getpid()), "(limitsim run token-bucket -o out)"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%s: the refusal does not say %q: %s", args[0], want, errOut)
			}
		}
	}
	sameFiles(t, before, folderFiles(t, dir))
	unlock()
	if code, _, errOut := cli("report", dir); code != exitOK {
		t.Fatalf("once released: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, report.LockFile)); !os.IsNotExist(err) {
		t.Errorf("%s remains after the command (%v)", report.LockFile, err)
	}
	if manifest, _ := os.ReadFile(filepath.Join(dir, report.OutputsManifest)); strings.Contains(string(manifest), report.LockFile) {
		t.Errorf("the manifest lists the lock file:\n%s", manifest)
	}
}

// lockHolderDir names, to the test binary run again as another process,
// the folder to hold (TestOutputFolderLockHolder).
const lockHolderDir = "LIMITSIM_TEST_HOLD_FOLDER"

// TestOutputFolderLockHolder is the other process of
// TestOutputFolderLockHeldByAnotherProcess: it holds the folder until its
// stdin closes or it is killed.
func TestOutputFolderLockHolder(t *testing.T) {
	dir := os.Getenv(lockHolderDir)
	if dir == "" {
		t.Skip("run by TestOutputFolderLockHeldByAnotherProcess")
	}
	unlock, err := report.LockOutputs(dir, "limitsim run held-elsewhere -o out")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
}

// A folder another process holds is refused, naming that process; once
// the holder is killed (the kernel drops its lock, its lock file stays),
// the folder is taken over.
func TestOutputFolderLockHeldByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	holder := exec.Command(os.Args[0], "-test.run=^TestOutputFolderLockHolder$", "-test.count=1")
	holder.Env = append(os.Environ(), lockHolderDir+"="+dir)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		if line != "locked\n" {
			t.Fatalf("the holder said %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the holder did not take the folder")
	}
	code, _, errOut := cli("run", "token-bucket", "--quiet", "-o", dir)
	if want := "process " + strconv.Itoa(holder.Process.Pid) + " (limitsim run held-elsewhere -o out)"; code != exitInvalid || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d, want %d saying %q: %s", code, exitInvalid, want, errOut)
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	holder.Wait()
	if left, err := os.ReadFile(filepath.Join(dir, report.LockFile)); err != nil || !strings.HasPrefix(string(left), strconv.Itoa(holder.Process.Pid)+"\n") {
		t.Fatalf("the killed holder's lock file: %q (%v)", left, err)
	}
	if code, _, errOut := cli("run", "token-bucket", "--quiet", "-o", dir); code != exitOK {
		t.Fatalf("after the holder died: exit %d: %s", code, errOut)
	}
}

//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package report

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock(2) on f without waiting: errLocked if
// another open file holds one.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		}
		return err
	}
}

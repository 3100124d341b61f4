//go:build !linux

package client

import "syscall"

// childProcAttr is nil where the kernel cannot kill a child with its
// parent: a server live starts is stopped when the run ends, as on Linux.
func childProcAttr() *syscall.SysProcAttr { return nil }

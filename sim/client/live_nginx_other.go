//go:build !linux

package client

import "syscall"

// nginxProcAttr is nil where the kernel cannot kill a child with its
// parent: nginx is stopped when the run ends, as on Linux.
func nginxProcAttr() *syscall.SysProcAttr { return nil }

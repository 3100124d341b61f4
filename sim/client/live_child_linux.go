//go:build linux

package client

import "syscall"

// childProcAttr puts a server live starts (nginx, redis-server) in a
// process group of its own, so that a terminal's Ctrl-C reaches limitsim
// alone (which then stops the server after the run's end), and has the
// kernel kill it should limitsim die without stopping it (a second
// Ctrl-C exits at once, or a SIGKILL): no server outlives the run. The
// kernel sends that signal when the thread that started the server ends,
// which in a Go program is when the process does (the runtime ends a
// thread only under a goroutine that locked it and exited, and nothing
// here locks one).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

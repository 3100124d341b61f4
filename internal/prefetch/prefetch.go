package prefetch

import "unsafe"

// Of asks for the cache line holding the start of *p to be brought into
// the caches. It never faults (p may be nil) and changes nothing a program
// can observe but its timing; on architectures without an implementation
// it does nothing.
func Of[T any](p *T) { line(unsafe.Pointer(p)) }

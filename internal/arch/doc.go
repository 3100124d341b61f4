// Package arch holds no code: its test checks that the packages' imports
// point the one way docs/architecture.md draws (file → configuration →
// model → engine, rendering at the edge).
package arch

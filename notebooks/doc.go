// Package notebooks holds the Jupyter notebooks (Go kernel gonb) that walk
// a reviewer through sizing a limiter, comparing policies and the seed
// article's failure modes, and the test that keeps their saved outputs
// true. run.sh installs what they need and executes them.
package notebooks

module github.com/limitsim/limitsim

go 1.26.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	golang.org/x/time v0.16.0
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

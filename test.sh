#!/usr/bin/env bash
# Runs limitsim's whole test suite (the command the README names). Both
# steps always run; the script fails if either does.
set -uo pipefail
cd "$(dirname "$0")"
status=0
go test -count=1 ./... || status=1
# The wall-clock shell and live mode are the only concurrent code: run them
# under the race detector.
go test -count=1 -race -run 'Loop|Blocking|Wall|Live' ./clock/... ./models/ ./sim/client/ || status=1
exit $status

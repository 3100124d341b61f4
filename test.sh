#!/usr/bin/env bash
# Runs limitsim's whole test suite (the command the README names). Both
# steps always run; the script fails if either does.
set -uo pipefail
cd "$(dirname "$0")"
status=0
go test -count=1 ./... || status=1
# The wall-clock shell is the only concurrent code: run it under the race detector.
go test -count=1 -race -run 'Loop|Blocking|Wall' ./clock/... ./models/ || status=1
exit $status

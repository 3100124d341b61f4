#!/usr/bin/env bash
# Runs limitsim's whole test suite (the command the README names).
set -euo pipefail
cd "$(dirname "$0")"
go test -count=1 ./...
# The wall-clock shell is the only concurrent code: run it under the race detector.
go test -count=1 -race -run 'Loop|Blocking|Wall' ./clock/... ./models/

#!/usr/bin/env bash
# Runs limitsim's whole test suite (the command the README names).
set -euo pipefail
cd "$(dirname "$0")"
go test -count=1 ./...
go test -count=1 -race ./clock/... ./models/ ./sim/

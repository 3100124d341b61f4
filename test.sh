#!/usr/bin/env bash
# Runs limitsim's whole test suite (the command the README names). Both
# steps always run; the script fails if either does.
set -uo pipefail
cd "$(dirname "$0")"
status=0
go test -count=1 ./... || status=1
# The concurrent code under the race detector: the wall-clock shell, live
# mode, the charts rendered on every processor, replications and a plan's
# loads run at once, variates drawn on another goroutine.
go test -count=1 -race -run 'Loop|Blocking|Wall|Live|ChartSVGStructureGolden' ./clock/... ./models/ ./sim/client/ ./report/ || status=1
go test -count=1 -race -run 'ReplicationsAtOnceAsInTurn|ReplicationsClockIsTheLastOnes|LoaderConcurrentLoads|ReplicationsSameOnAnyProcessors|DrawingAheadChangesNothing' ./scenarios/ ./cmd/limitsim/ || status=1
go test -count=1 -race ./internal/par/ ./internal/ahead/ || status=1
exit $status

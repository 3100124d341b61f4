#!/usr/bin/env bash
# Runs limitsim's whole test suite (the command the README names). Both
# steps always run; the script fails if either does.
set -uo pipefail
cd "$(dirname "$0")"
status=0
go test -count=1 ./... || status=1
# The concurrent code under the race detector: the wall-clock shell, live
# mode, the charts rendered on every processor, replications and a plan's
# loads run at once.
go test -count=1 -race -run 'Loop|Blocking|Wall|Live|ChartSVGStructureGolden' ./clock/... ./models/ ./sim/client/ ./report/ || status=1
go test -count=1 -race -run 'ReplicationsAtOnceAsInTurn|ReplicationsClockIsTheLastOnes|LoaderConcurrentLoads|ReplicationsSameOnAnyProcessors' ./scenarios/ ./cmd/limitsim/ || status=1
go test -count=1 -race ./internal/par/ || status=1
exit $status

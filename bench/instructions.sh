#!/usr/bin/env bash
# Checks the reference model's cost against the figure recorded in
# bench/reference-model.instructions: the instructions one request costs on
# `limitsim run`'s path (BenchmarkRunReferenceModel), counted by valgrind's
# cachegrind, which gives the same count on a loaded or an idle machine.
# Two runs of 200,000 and 400,000 requests are differenced, so that loading,
# building and reporting cancel out. It fails when a request costs more than
# 10% above the recorded figure (a regression of that size is a bug); below
# 90% of it, it asks for the figure to be lowered.
#
#   bench/instructions.sh           check
#   bench/instructions.sh --record  measure and write the figure
set -euo pipefail
cd "$(dirname "$0")/.."
record=bench/reference-model.instructions
if ! command -v valgrind >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq valgrind >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/limitsim.test" ./cmd/limitsim
count() {
  # The collector off: under valgrind a collection can stay in its mark
  # phase through much of one run and not the other, and its write barriers
  # would then add to one side of the difference only.
  (cd cmd/limitsim && GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no \
    --cachegrind-out-file=/dev/null "$tmp/limitsim.test" -test.run - \
    -test.bench 'RunReferenceModel$' -test.benchtime "$1x" 2>&1 >/dev/null) |
    awk '/I +refs:/ { gsub(",", "", $NF); print $NF }'
}
a=$(count 200000)
b=$(count 400000)
if [ -z "$a" ] || [ -z "$b" ]; then
  echo "bench/instructions.sh: cachegrind printed no instruction count" >&2
  exit 1
fi
per=$(( (b - a) / 200000 ))
if [ "${1:-}" = "--record" ]; then
  echo "$per" > "$record"
  echo "reference model: $per instructions a request, recorded in $record"
  exit 0
fi
want=$(cat "$record")
echo "reference model: $per instructions a request (recorded: $want)"
if [ $(( per * 10 )) -gt $(( want * 11 )) ]; then
  echo "bench/instructions.sh: more than 10% above the recorded $want: a regression" >&2
  exit 1
fi
if [ $(( per * 10 )) -lt $(( want * 9 )) ]; then
  echo "bench/instructions.sh: more than 10% under the recorded $want: run bench/instructions.sh --record" >&2
  exit 1
fi

#!/usr/bin/env bash
# Checks the reference model's cost against the figure recorded in
# bench/reference-model.instructions: the instructions one request costs on
# `limitsim run`'s path (BenchmarkRunReferenceModel), counted by valgrind's
# cachegrind, which gives the same count (within a few instructions a
# request) on a loaded or an idle machine.
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
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null && apt-get install -y -qq valgrind >/dev/null
  fi
  if ! command -v valgrind >/dev/null 2>&1; then
    echo "bench/instructions.sh: needs valgrind (Debian's valgrind package)" >&2
    exit 1
  fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/limitsim.test" ./cmd/limitsim
# count N prints the instructions of BenchmarkRunReferenceModel at N
# requests, or fails with what valgrind and the benchmark printed.
count() {
  # The collector off: under valgrind a collection can stay in its mark
  # phase through much of one run and not the other, and its write barriers
  # would then add to one side of the difference only.
  if ! (cd cmd/limitsim && GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no \
    --cachegrind-out-file=/dev/null "$tmp/limitsim.test" -test.run - \
    -test.bench 'RunReferenceModel$' -test.benchtime "$1x") >"$tmp/out.$1" 2>"$tmp/err.$1"; then
    echo "bench/instructions.sh: the benchmark under cachegrind failed at $1 requests:" >&2
    tail -n 20 "$tmp/out.$1" "$tmp/err.$1" >&2
    return 1
  fi
  if ! grep -q 'BenchmarkRunReferenceModel' "$tmp/out.$1"; then
    echo "bench/instructions.sh: BenchmarkRunReferenceModel did not run at $1 requests" >&2
    return 1
  fi
  awk '/I +refs:/ { gsub(",", "", $NF); print $NF }' "$tmp/err.$1"
}
a=$(count 200000)
b=$(count 400000)
if [ -z "$a" ] || [ -z "$b" ] || [ "$b" -le "$a" ]; then
  echo "bench/instructions.sh: cachegrind gave no usable counts ($a, $b)" >&2
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

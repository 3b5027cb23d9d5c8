#!/usr/bin/env bash
# Runs every test binary of a `make gpu-bundle` on a GPU host and prints a summary table last.
# Usage: gpubundle/run.sh [-run REGEX] [-bench REGEX]; logs go to $LOGDIR (default gpubundle/logs).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logdir=${LOGDIR:-$here/logs}
mkdir -p "$logdir"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv | tee "$logdir/nvidia-smi.txt"
declare -a rows
status=0
for t in "$here"/*.test; do
  [ -e "$t" ] || continue
  name=$(basename "$t" .test)
  start=$(date +%s%N)
  "$t" -test.v -test.timeout 20m "$@" >"$logdir/$name.log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  pass=$(grep -c -- '^--- PASS' "$logdir/$name.log")
  fail=$(grep -c -- '^--- FAIL' "$logdir/$name.log")
  skip=$(grep -c -- '^--- SKIP' "$logdir/$name.log")
  [ $rc -ne 0 ] && status=1
  rows+=("$(printf '%-24s rc=%-3s pass=%-4s fail=%-4s skip=%-4s %sms' "$name" "$rc" "$pass" "$fail" "$skip" "$ms")")
  grep -E -- '^(=== RUN|--- |\s+\S+_test.go:|Benchmark|PASS|FAIL|ok)' "$logdir/$name.log" | grep -v '^=== RUN' | tail -40
done
echo
echo "== gpu-bundle summary"
printf '%s\n' "${rows[@]}"
exit $status

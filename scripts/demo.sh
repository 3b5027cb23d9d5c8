#!/usr/bin/env bash
# End-to-end demo: starts a daemon on a scratch repo, proves the built-in test circuit through the
# JSON-RPC API with the CLI, verifies it (the daemon verifies every proof before returning it),
# prints where the time went, and stops the daemon.
# Usage: scripts/demo.sh [BIN] (default bin/snarkd); DEMO_CONSTRAINTS, DEMO_PARTITIONS override sizes.
set -euo pipefail
bin=${1:-bin/snarkd}
constraints=${DEMO_CONSTRAINTS:-16384}
partitions=${DEMO_PARTITIONS:-2}
repo=$(mktemp -d "${TMPDIR:-/tmp}/snarkd-demo.XXXXXX")
log="$repo/daemon.log"
cleanup() {
  [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$repo"
}
trap cleanup EXIT

echo "== starting snarkd (repo $repo)"
"$bin" --repo "$repo" run --listen 127.0.0.1:0 >"$repo/stdout" 2>"$log" &
pid=$!
for _ in $(seq 1 300); do
  grep -q '^SNARKD_API_INFO=' "$repo/stdout" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { echo "daemon exited:"; cat "$log"; exit 1; }
  sleep 0.1
done
grep -v '^SNARKD_API_INFO=' "$repo/stdout" || true
"$bin" --repo "$repo" prove --help >/dev/null

echo "== proving the test circuit: $partitions partition(s) of $constraints constraints"
echo "   (first use generates devnet parameters: insecure, for demos and tests only)"
start=$(date +%s%N)
"$bin" --repo "$repo" prove test --constraints "$constraints" --partitions "$partitions" --out "$repo/proof.bin"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
bytes=$(wc -c <"$repo/proof.bin")
echo "== proof: $bytes bytes ($partitions × 192), verified by the daemon; wall time ${ms} ms"
echo "== job record"
"$bin" --repo "$repo" jobs

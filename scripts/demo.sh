#!/usr/bin/env bash
# End-to-end demo: starts a daemon on a scratch repo, proves the built-in test circuit through the
# JSON-RPC API with the CLI, verifies it (the daemon verifies every proof before returning it),
# prints where the time went, and stops the daemon.
# Usage: scripts/demo.sh [BIN] (default bin/snarkd); DEMO_CONSTRAINTS, DEMO_PARTITIONS override sizes.
# DEMO_C2=1 adds a PoRep C2: a 2KiB sector sealed in Go, its C1 output proved through the daemon
# with parameters from the parameter directory ($FIL_PROOFS_PARAMETER_CACHE, default
# /var/tmp/filecoin-proof-parameters). Missing 2KiB parameters are generated there first with
# `snarkd params gen` (INSECURE devnet parameters; a one-time setup of the 2.7M-constraint circuit,
# 1 min 42 s to 2 min 36 s on a 2-core VM depending on its load, far longer on a heavily loaded
# machine: docs/benchmarks.md). DEMO_C2_PROOF picks another type (8MiB).
set -euo pipefail
bin=${1:-bin/snarkd}
constraints=${DEMO_CONSTRAINTS:-16384}
partitions=${DEMO_PARTITIONS:-2}
repo=$(mktemp -d "${TMPDIR:-/tmp}/snarkd-demo.XXXXXX")
c2_proof=${DEMO_C2_PROOF:-StackedDrg2KiBV1_1}
export FIL_PROOFS_PARAMETER_CACHE=${FIL_PROOFS_PARAMETER_CACHE:-/var/tmp/filecoin-proof-parameters}
secs() { local ms=$(( ($(date +%s%N) - $1) / 1000000 )); printf '%d.%03d s' $((ms / 1000)) $((ms % 1000)); }

log="$repo/daemon.log"
cleanup() {
  [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$repo"
}
trap cleanup EXIT

if [ "${DEMO_C2:-}" = 1 ]; then
  # The parameters come first so that the daemon's proof is not waiting on a setup.
  echo "== $c2_proof parameters in $FIL_PROOFS_PARAMETER_CACHE (generated once if missing: INSECURE devnet ones)"
  start=$(date +%s%N)
  "$bin" params gen --proof "$c2_proof" --dir "$FIL_PROOFS_PARAMETER_CACHE" --if-missing
  echo "   $(secs "$start")"
fi

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

if [ "${DEMO_C2:-}" = 1 ]; then
  echo
  echo "== PoRep C2: sealing a $c2_proof sector in Go (random data, miner t01000, sector 1)"
  start=$(date +%s%N)
  "$bin" demo seal --proof "$c2_proof" --miner 1000 --sector 1 --out "$repo/c1.json"
  echo "   seal + C1: $(secs "$start")"
  echo "== proving its C2 through the daemon (parameters from $FIL_PROOFS_PARAMETER_CACHE, loaded on first use)"
  start=$(date +%s%N)
  "$bin" --repo "$repo" prove c2 --c1 "$repo/c1.json" --miner 1000 --out "$repo/c2.bin"
  echo "== C2 proof: $(wc -c <"$repo/c2.bin") bytes, verified by the daemon against the .vk; wall time $(secs "$start")"
  echo "   (total beyond queue, parameters, synthesis, prove and verify: C1 decoding and vanilla-proof checks)"
  "$bin" --repo "$repo" jobs --kind porep-c2
fi

#!/usr/bin/env bash
# C2 throughput on a GPU host, in one run: 32 GiB PoRep synthesis (full against witness-only and
# the sparse products) and `snarkd bench c2` with compiled and with full synthesis, each against
# dummy keys of the real size. Build the binaries on a machine with Go first:
#
#   make cuda && mkdir -p c2bench && cp bin/snarkd-cuda c2bench/ &&
#   go test -c -ldflags "-s -w" -o c2bench/circuit.test ./filecoin/porep/circuit/
#
# then run `c2bench/c2-bench-device.sh [OUTDIR]` there (copy this script beside the binaries).
# It prints a short table last; full logs and JSON reports go to OUTDIR (default ./c2bench-out).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../c2bench-out}
mkdir -p "$out"
proofs=${C2_PROOFS:-3}
{ nproc; free -g | head -2; command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader; } | tee "$out/host.txt"
SNARKD_BENCH_PROOF=32GiB "$here/circuit.test" -test.run XXX -test.bench 'SynthesizeParallel|WitnessOnly|Products' \
  -test.benchtime 3x -test.benchmem >"$out/synth32.log" 2>&1
for mode in compiled full; do
  n=$proofs
  [ "$mode" = full ] && n=2
  "$here/snarkd-cuda" bench c2 --proof 32GiB --proofs "$n" --synthesis "$mode" --json \
    >"$out/c2-$mode.json" 2>"$out/c2-$mode.log"
  echo "bench c2 $mode: rc=$?" | tee -a "$out/host.txt"
done
echo
echo "== 32 GiB partition synthesis (GOMAXPROCS $(nproc))"
grep -E '^Benchmark' "$out/synth32.log"
for mode in compiled full; do
  echo "== bench c2, $mode synthesis"
  grep -E '"(sustained_s_per_proof|first_proof_s|gpu_busy|peak_rss_gib|peak_vram_gib)"' "$out/c2-$mode.json"
  grep -A12 '"per_partition_s"' "$out/c2-$mode.json" | grep -E '"(witness|abc|check|synthesis|prove|plan)"'
done

#!/usr/bin/env bash
# C2 throughput on a GPU host, in two parts of under 10 minutes each (docs/benchmarks.md,
# "Compiled circuits on the H200 host"). Build the binaries on a machine with Go first:
#
#   make cuda && mkdir -p c2bench && cp bin/snarkd-cuda c2bench/ &&
#   go test -c -tags cuda -ldflags "-s -w" -o c2bench/prover.test ./prover/ &&
#   go test -c -ldflags "-s -w" -o c2bench/circuit.test ./filecoin/porep/circuit/ &&
#   go test -c -ldflags "-s -w" -o c2bench/post.test ./filecoin/post/ &&
#   go test -c -ldflags "-s -w" -o c2bench/update.test ./filecoin/update/
#
# (pipeline and cards need only snarkd-cuda; squeeze gpuprove.test: go test -c -tags cuda
# ./groth16/gpuprove/), then run `c2bench/c2-bench-device.sh PART [OUTDIR]` there (copy this script beside
# the binaries). synth: the 32 GiB PoRep and WindowPoSt partition syntheses (full, witness-only,
# products). equal: the 32 GiB equality tests (PoRep with GPU proofs, WindowPoSt, SnapDeals). c2:
# `snarkd bench c2` with compiled synthesis, two jobs at once; C2_FULL=1 adds full synthesis (one
# proof: on a 128 GiB host it can run out of memory). pipeline: sustained and single C2, a
# WindowPoSt partition; cards: SnapDeals, and C2 as on smaller cards; squeeze: the VRAM squeeze
# with deferred products. It prints a short table last; logs and
# JSON reports go to OUTDIR. Each part fits one device call (under 10 minutes).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
part=${1:?usage: c2-bench-device.sh synth|equal|c2 [OUTDIR]}
out=${2:-$here/../c2bench-out}
mkdir -p "$out" /tmp/snarkd-bench-circuits
{ nproc; free -g | head -2; command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader; } | tee "$out/host.txt"
step() {
  local name=$1 limit=$2 start rc
  shift 2
  start=$(date +%s)
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  echo "$name rc=$rc $(($(date +%s) - start))s" | tee -a "$out/steps.txt"
}
# summary prints the headline figures of bench c2/post JSON reports.
summary() {
  local n
  for n in "$@"; do
    echo "== $n"
    grep -E '^proof [0-9]|^admission as' "$out/$n.log"
    grep -E '"(sustained_s_per_proof|steady_latency_s|first_proof_s|gpu_busy|peak_rss_gib|peak_vram_gib|kernel_s|kernel_lock_s|queued_s|memory_s|kernel_wait_s|run_s)"' "$out/$n.log" | tr -d ' ' | paste -sd' '
  done
}
case $part in
synth)
  export SNARKD_BENCH_CIRCUIT_DIR=/tmp/snarkd-bench-circuits SNARKD_BENCH_PROOF=32GiB
  step porep-full 110 "$here/circuit.test" -test.run XXX -test.bench SynthesizeParallel -test.benchtime 2x -test.benchmem
  step porep-compiled 130 "$here/circuit.test" -test.run XXX -test.bench 'SynthesizeWitness|WitnessOnly|Products' -test.benchtime 4x -test.benchmem
  step window 90 "$here/post.test" -test.run XXX -test.bench 'WindowPoSt32GiBSynthesis/(compiled|witness)' -test.benchtime 3x -test.benchmem
  echo
  grep -hE '^Benchmark' "$out"/porep-*.log "$out/window.log"
  ;;
equal)
  SNARKD_HEAVY_TESTS=1 step window-equal 100 "$here/post.test" -test.v -test.run TestWindowPoSt32GiBCompiledMatches
  GOMEMLIMIT=100GiB SNARKD_HEAVY_TESTS=1 step porep-gpu-equal 200 "$here/prover.test" -test.v -test.run TestHardwarePoRepCompiledProofs
  GOMEMLIMIT=100GiB SNARKD_HEAVY_TESTS=1 step snap-equal 250 "$here/update.test" -test.v -test.run TestSynthesizeWitnessProductionShape
  echo
  grep -hE -- '^(--- |ok|FAIL)|rows:|identical' "$out/window-equal.log" "$out/porep-gpu-equal.log" "$out/snap-equal.log"
  ;;
c2)
  modes=compiled
  [ "${C2_FULL:-}" = 1 ] && modes="compiled full"
  for mode in $modes; do
    n=${C2_PROOFS:-4}
    [ "$mode" = full ] && n=1
    step "c2-$mode" 300 "$here/snarkd-cuda" bench c2 --proof 32GiB --proofs "$n" --synthesis "$mode" --json
  done
  for mode in $modes; do
    echo "== bench c2, $mode synthesis"
    grep -E '^proof [0-9]|"(sustained_s_per_proof|first_proof_s|gpu_busy|peak_rss_gib|peak_vram_gib)"' "$out/c2-$mode.log"
  done
  ;;
pipeline)
  # Sustained 32 GiB C2 (two jobs), a lone C2's latency on a warm daemon (one job), and a
  # WindowPoSt partition end to end; circuits compiled ahead with `circuit compile`.
  circ=/tmp/snarkd-bench-circuits
  step compile-porep 150 "$here/snarkd-cuda" circuit compile --proof 32GiB --dir "$circ" --json
  step c2-sustained 330 "$here/snarkd-cuda" bench c2 --proof 32GiB --proofs "${C2_PROOFS:-6}" --jobs 2 --circuit-dir "$circ" --json
  step c2-single 220 "$here/snarkd-cuda" bench c2 --proof 32GiB --proofs 3 --jobs 1 --circuit-dir "$circ" --json
  step post-window 200 "$here/snarkd-cuda" bench post --proof StackedDrgWindow32GiBV1_1 --proofs 4 --jobs 1 --circuit-dir "$circ" --json
  summary c2-sustained c2-single post-window
  grep -h '"device_bytes"' "$out/compile-porep.log"
  ;;
cards)
  # SnapDeals 32 GiB sustained (SNAP=0 leaves it out), the 32 GiB C2 with admission as on a
  # 24 GiB card (CARDS=24GiB,16GiB for more), and with POST=1 a WindowPoSt partition.
  circ=/tmp/snarkd-bench-circuits
  names=
  if [ "${SNAP:-1}" = 1 ]; then
    step snap 300 "$here/snarkd-cuda" bench c2 --proof UpdateStackedDrg32GiBV1 --proofs "${SNAP_PROOFS:-4}" --jobs 2 --circuit-dir "$circ" --json
    names=snap
  fi
  for card in $(echo "${CARDS-24GiB}" | tr , ' '); do
    step "c2-card$card" 330 "$here/snarkd-cuda" bench c2 --proof 32GiB --proofs "${CARD_PROOFS:-4}" --jobs 2 --card "$card" --circuit-dir "$circ" --json
    names="$names c2-card$card"
  done
  if [ "${POST:-}" = 1 ]; then
    step post-window 200 "$here/snarkd-cuda" bench post --proof StackedDrgWindow32GiBV1_1 --proofs 3 --jobs 1 --circuit-dir "$circ" --json
    names="$names post-window"
  fi
  summary $names
  ;;
squeeze)
  # The VRAM squeeze with the blocked circuit's products deferred (matrices in the plans).
  SNARKD_GPU_SQUEEZE=${SQUEEZE:-all,13,9,5,2.5} SNARKD_GPU_SQUEEZE_BLOCKS=${BLOCKS:-200000} \
    step squeeze 400 "$here/gpuprove.test" -test.v -test.run TestHardwareSqueeze
  grep -A8 '^squeeze:' "$out/squeeze.log"
  grep -hE -- '^(--- |ok|FAIL)|squeeze_test|prove_cuda_test' "$out/squeeze.log" | tail -8
  ;;
*)
  echo "unknown part $part: want synth, equal, c2, pipeline, cards or squeeze" >&2
  exit 2
  ;;
esac
cat "$out/steps.txt"

#!/usr/bin/env bash
# Builds the 8MiB itest bundle into .itb/ (git-ignored): a plain CPU build of snarkd, the itests
# test binary (go test -c), and run scripts for a host without Go or the source tree, e.g. the
# 16-core GPU host. Usage, from the repository root:
#
#   scripts/itest-bundle.sh            # build .itb/
#   # copy .itb/ to the host (or run it in place), then there:
#   .itb/run-porep.sh                  # 8MiB PoRep C2 (native + Lotus) and the priority test
#   .itb/run-post-snap.sh              # 8MiB WinningPoSt/WindowPoSt and SnapDeals
#   .itb/run.sh                        # everything (both of the above, in one go)
#
# Logs go to $OUT/itest-*.log ($OUT defaults to ./itest-out) with a summary table at the end.
# Devnet parameters are generated into $SNARKD_ITEST_PARAM_CACHE (default /tmp/snarkd-params)
# and reused by later runs on the same machine: the 8MiB PoRep and SnapDeals setups are the
# long steps, so run both scripts on one machine while it stays warm.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=.itb
GO=${GO:-go}
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)

rm -rf "$out"
mkdir -p "$out"
echo "building $out/snarkd ($version, CPU backend)"
CGO_ENABLED=1 "$GO" build -trimpath -ldflags "-X github.com/snarkd/snarkd/buildinfo.Version=$version" -o "$out/snarkd" ./cmd/snarkd
echo "building $out/itests.test"
CGO_ENABLED=1 "$GO" test -c -trimpath -o "$out/itests.test" ./itests

# The itests need nothing from the source tree at run time: no testdata, no relative paths,
# and SNARKD_ITEST_BIN replaces their `go build` of cmd/snarkd.
cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs snarkd's 8MiB itests with the prebuilt binaries next to this script; no Go needed.
# Expected on 16 cores (estimates from 2-core runs): porep ~2-4 min with parameter generation,
# priority ~2-3 min, post ~1 min, snap ~6-9 min (its 10M-constraint setup is the longest step).
# The multi-partition priority load fails until partitions, not jobs, are scheduled (issue 9).
#
#   ./run.sh [porep] [post] [snap] [priority]    (default: all four, in that order)
#
# Environment:
#   OUT                        logs and summary go here (default ./itest-out)
#   SNARKD_ITEST_PARAM_CACHE   devnet parameter directory, reused across runs
#                              (default /tmp/snarkd-params: outside the bundle, so it survives
#                              while the machine stays warm; a fresh machine generates again)
#   ITB_SIZE                   sector size of every test (default 8MiB; 2KiB for a smoke run)
#   ITB_PRIORITY               load of the priority test (default ITB_SIZE: PoRep C2 jobs, then
#                              3-partition test-circuit jobs; "test" for the latter only)
#   ITB_PRIORITY_CONSTRAINTS   constraints of those test-circuit partitions (default 2^20, near
#                              an 8MiB PoRep partition's time; 2^18 when ITB_SIZE=2KiB)
#   ITB_TIMEOUT                go test timeout per test (default 60m)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/itest-out}
size=${ITB_SIZE:-8MiB}
export SNARKD_ITEST_BIN=$here/snarkd
export SNARKD_ITEST_PARAM_CACHE=${SNARKD_ITEST_PARAM_CACHE:-/tmp/snarkd-params}
if [ "$size" = 2KiB ]; then prio_n=262144; else prio_n=1048576; fi
export SNARKD_ITEST_PRIORITY_CONSTRAINTS=${ITB_PRIORITY_CONSTRAINTS:-$prio_n}
mkdir -p "$OUT" "$SNARKD_ITEST_PARAM_CACHE"
[ $# -gt 0 ] || set -- porep post snap priority

summary=()
for what in "$@"; do
	case $what in
	porep) test=TestPoRepC2EndToEnd env=(SNARKD_ITEST_POREP="$size") ;;
	post) test='TestPoStEndToEnd|TestLotusPoStWorker' env=(SNARKD_ITEST_POST="$size") ;;
	snap) test=TestSnapDealsEndToEnd env=(SNARKD_ITEST_SNAP="$size") ;;
	priority) test=TestPriorityUnderLoad env=(SNARKD_ITEST_PRIORITY="${ITB_PRIORITY:-$size}") ;;
	*) echo "unknown test group $what (porep, post, snap, priority)" >&2; exit 2 ;;
	esac
	log=$OUT/itest-$what.log
	echo "== $test (${env[*]}) → $log"
	start=$(date +%s)
	(cd "$OUT" && env "${env[@]}" "$here/itests.test" -test.run "^($test)\$" -test.v -test.count 1 \
		-test.timeout "${ITB_TIMEOUT:-60m}") >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	if [ $rc -eq 0 ] && grep -Eq -- "^--- SKIP: ($test)" "$log"; then
		result=SKIP
	elif [ $rc -eq 0 ]; then
		result=PASS
	else
		result="FAIL($rc)"
	fi
	tail -n 3 "$log"
	summary+=("$(printf '%-24s %-8s %5ss' "$test" "$result" "$secs")")
	# Key timings: the tests' "TIMING what: duration" lines.
	while IFS= read -r line; do
		summary+=("    ${line#*TIMING }")
	done < <(grep -o 'TIMING .*' "$log")
done

{
	echo
	echo "== summary ($(nproc) cores, size $size, params in $SNARKD_ITEST_PARAM_CACHE)"
	printf '%s\n' "${summary[@]}"
} | tee "$OUT/itest-summary-$(date +%H%M%S).txt"
RUN

cat >"$out/run-porep.sh" <<'RUN'
#!/usr/bin/env bash
# 8MiB PoRep C2 (native and Lotus) and the priority test; see run.sh for the environment.
exec "$(dirname "$0")/run.sh" porep priority
RUN

cat >"$out/run-post-snap.sh" <<'RUN'
#!/usr/bin/env bash
# 8MiB WinningPoSt/WindowPoSt and SnapDeals; see run.sh for the environment.
exec "$(dirname "$0")/run.sh" post snap
RUN

chmod +x "$out"/*.sh
ls -l "$out"

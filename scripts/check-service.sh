#!/usr/bin/env bash
# Checks deploy/snarkd.service with `systemd-analyze verify` against a built snarkd binary:
#   scripts/check-service.sh bin/snarkd
# verify needs ExecStart's binary to exist, so a temporary copy of the unit points at the given
# one. verify exits 0 on many mistakes (an unknown key, a bad value: "ignoring"), so any message
# about the unit fails the check too, and a deliberately broken copy must fail it, which shows
# the check still catches mistakes with this systemd.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:?usage: $0 path/to/snarkd}")
unit=deploy/snarkd.service
[ -x "$bin" ] || { echo "$bin: not an executable"; exit 1; }
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not found (apt-get install systemd)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# verify_unit FILE: 0 when systemd-analyze verify accepts FILE without a word about it.
verify_unit() {
  local f=$1 out rc=0
  out=$(systemd-analyze verify "$f" 2>&1) || rc=$?
  # Messages about other units (targets on this host) are not this unit's problem.
  local ours
  ours=$(grep -F "$(basename "$f")" <<<"$out" || true)
  if [ "$rc" != 0 ] || [ -n "$ours" ]; then
    printf '%s\n' "$out"
    return 1
  fi
  [ -z "$out" ] || printf 'note (other units): %s\n' "$out"
  return 0
}

grep -q '^ExecStart=/usr/local/bin/snarkd ' "$unit" || { echo "$unit: ExecStart is not /usr/local/bin/snarkd ..."; exit 1; }
sed "s|^ExecStart=/usr/local/bin/snarkd |ExecStart=$bin |" "$unit" >"$tmp/snarkd.service"
verify_unit "$tmp/snarkd.service" || { echo "$unit: systemd-analyze verify found problems (above)"; exit 1; }

# The command line must be one the binary takes: `snarkd <args> --help` fails on an unknown
# command or flag.
args=$(sed -n 's|^ExecStart=/usr/local/bin/snarkd ||p' "$unit")
# shellcheck disable=SC2086 # the unit's arguments, split as systemd splits them (no quoting used)
"$bin" $args --help >/dev/null || { echo "$unit: '$bin $args' is not a command snarkd knows"; exit 1; }

# What the unit promises operators (README, "Running as a service").
for want in '^LimitMEMLOCK=infinity$' '^Restart=on-failure$' '^TimeoutStopSec=' '^User=snarkd$' \
  '^StateDirectory=snarkd$' '^Environment=SNARKD_PATH=/var/lib/snarkd$' '^Environment=FIL_PROOFS_PARAMETER_CACHE='; do
  grep -Eq "$want" "$unit" || { echo "$unit: no line matching $want"; exit 1; }
done
# The GPUs must stay reachable: no private /dev, no device allow-list.
if grep -Eq '^(PrivateDevices=(yes|true|on|1)|DevicePolicy=(closed|strict)|DynamicUser=(yes|true|on|1)|PrivateTmp=(yes|true|on|1))' "$unit"; then
  echo "$unit: PrivateDevices, DevicePolicy, DynamicUser or PrivateTmp would hide the GPUs or /var/tmp's parameters"
  exit 1
fi

sed 's/^LimitMEMLOCK=/LimitMEMLOK=/' "$tmp/snarkd.service" >"$tmp/broken.service"
if verify_unit "$tmp/broken.service" >/dev/null; then
  echo "systemd-analyze verify accepted a unit with a misspelled key: this check would miss mistakes"
  exit 1
fi
echo "$unit: verified ($(systemd-analyze --version | head -1))"

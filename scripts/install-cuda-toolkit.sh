#!/usr/bin/env bash
# Installs Debian bookworm's nvidia-cuda-toolkit (CUDA 11.8, non-free component) so that
# `make cuda` can compile native/ on a machine without a GPU. Idempotent; needs root.
set -euo pipefail
if command -v nvcc >/dev/null 2>&1; then
  echo "nvcc already installed: $(nvcc --version | tail -1)"
  exit 0
fi
src=/etc/apt/sources.list.d/snarkd-nonfree.sources
if [ ! -f "$src" ]; then
  cat >"$src" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: contrib non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit nvidia-cuda-dev >/dev/null
nvcc --version | tail -1

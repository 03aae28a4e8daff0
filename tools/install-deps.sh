#!/usr/bin/env bash
# Installs every Debian package fastbf needs to build, test and benchmark.
# Idempotent: packages already present are left alone. Run as root (or via sudo).
set -euo pipefail
PKGS=(
  build-essential cmake pkg-config clang
  libzmq3-dev libck-dev libjemalloc-dev libcjson-dev zlib1g-dev
  libhiredis-dev redis-server
  flatbuffers-compiler libflatbuffers-dev
  libcmocka-dev libbenchmark-dev hyperfine time python3
  # fastbf-plot draws with it (its tests too), and so do the benchmark plots
  gnuplot-nox
  help2man man-db libxml2-utils
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

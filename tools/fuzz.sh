#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang in build-fuzz/ and
# runs each for SECONDS (default 60), one at a time, from its seed corpus
# tests/fuzz/corpus/<target>/. New inputs go to build-fuzz/corpus/<target>/
# (the seeds stay as they are); a crash, leak or timeout leaves its input
# in build-fuzz/artifacts/ and stops the script.
# Usage: bash tools/fuzz.sh [SECONDS] [TARGET...]   (targets: bv4_session, bv2_codec, bv5_edc,
#        bv5_binary, replay_reply, workload, flux_session; default all)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(bv4_session bv2_codec bv5_edc bv5_binary replay_reply workload flux_session)
CC=${CC:-clang} CXX=${CXX:-clang++} cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFBF_FUZZ=ON -DFBF_JEMALLOC=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}")
mkdir -p build-fuzz/artifacts
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  echo "== fuzz_$t for ${secs}s"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "build-fuzz/fuzz_$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="build-fuzz/artifacts/$t-" "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t"
done

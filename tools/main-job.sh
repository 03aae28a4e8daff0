#!/usr/bin/env bash
# fastbf's main job: installs the dependencies, builds, then replays the
# bundled KTH-SP2 trace (data/) under EASY backfilling with fastbf as the
# decision process over ZeroMQ, and prints the replay's summary. The set-up
# is silent unless it fails (its whole output is shown then).
# Usage: bash tools/main-job.sh [POLICY] [extra fastbf-replay options...]
set -euo pipefail
cd "$(dirname "$0")/.."
policy=${1:-easy}
shift || true
log=$(mktemp)
quietly() {
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "main-job: '$*' failed (its output is above)" >&2
    rm -f "$log"
    exit 1
  fi
}
quietly bash tools/install-deps.sh
quietly cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
quietly cmake --build build -j"$(nproc)" --target fastbf fastbf-replay
rm -f "$log"
exec build/fastbf-replay data/KTH-SP2-1996-2.1-cln.swf.gz \
    --scheduler "build/fastbf --policy $policy" "$@"

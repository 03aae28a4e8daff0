#!/usr/bin/env bash
# fastbf's main job: installs the dependencies, builds, then replays the
# bundled KTH-SP2 trace (data/) under EASY backfilling with fastbf as the
# decision process over ZeroMQ, and prints the replay's summary.
# Usage: bash tools/main-job.sh [POLICY] [extra fastbf-replay options...]
set -euo pipefail
cd "$(dirname "$0")/.."
policy=${1:-easy}
shift || true
bash tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target fastbf fastbf-replay >/dev/null
exec build/fastbf-replay data/KTH-SP2-1996-2.1-cln.swf.gz \
    --scheduler "build/fastbf --policy $policy" "$@"

#!/usr/bin/env bash
# fastbf's own time per exchange on a trace under EASY, by path: Batsim 5's
# EDC in JSON and in flatbuffers binary, and the Batsim v4 session
# (bench/edc_bench.cc), from conversations recorded by fastbf-replay.
# Usage: bash bench/edc_cost.sh [TRACE] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:-data/KTH-SP2-1996-2.1-cln.swf.gz}
build=${2:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/fastbf-replay" "$trace" --quiet --protocol batsim5 --edc-library "$build/libfastbf-edc.so" \
    --edc-init '{"policy":"easy"}' --record "$tmp/v5.rec"
"$build/fastbf-replay" "$trace" --quiet --inproc --policy easy --record "$tmp/v4.rec"
FBF_EDC_RECORD="$tmp/v5.rec" FBF_V4_RECORD="$tmp/v4.rec" \
    "$build/fbf_microbench" --benchmark_filter='BM_(Edc|V4Session)' --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=false

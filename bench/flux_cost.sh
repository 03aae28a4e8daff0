#!/usr/bin/env bash
# The RFC 27 service's alloc throughput with a deep queue, and job status
# and control's cost per state change (bench/flux_bench.c), in a Release
# build: easy and conservative, 1e3, 1e5 and 1e6 jobs waiting, jobspecs
# from a Redis server (started here, on a free port) and from memory,
# each run RUNS times (default 3) and the median kept; then job status and
# control alone (fbf_flux_bench --jsc-micro): its cost per state change on
# the I/O thread and the control thread's rate. Prints the Markdown tables
# of bench/RESULTS.md's "RFC 27" section.
# Usage: bash bench/flux_cost.sh [BUILD_DIR] [RUNS] [DEPTHS...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
runs=${2:-3}
shift 2 || true
depths=("$@")
[ ${#depths[@]} -gt 0 ] || depths=(1000 100000 1000000)
if [ ! -x "$build/fbf_flux_bench" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFBF_BENCH=ON >/dev/null
  cmake --build "$build" -j"$(nproc)" --target fbf_flux_bench >/dev/null
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
  --daemonize yes --logfile "$dir/redis.log" >/dev/null
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

# median of the field "N allocs/s" (or "X us of instant per record") over runs
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
run() { # args: runs, then fbf_flux_bench's
  local n=$1
  shift
  for _ in $(seq "$n"); do
    redis-cli -p "$port" flushall >/dev/null
    "$build/fbf_flux_bench" "$@"
  done
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD)"
echo
echo "| policy | jobs waiting | allocs/s, jobspecs from Redis | allocs/s, from memory |"
echo "|---|---:|---:|---:|"
for p in easy conservative; do
  for d in "${depths[@]}"; do
    r=$(run "$runs" --policy "$p" --depth "$d" --instants 100 --redis "127.0.0.1:$port" |
        sed -n 's/.*: \([0-9]*\) allocs\/s.*/\1/p' | median)
    m=$(run "$runs" --policy "$p" --depth "$d" --instants 100 |
        sed -n 's/.*: \([0-9]*\) allocs\/s.*/\1/p' | median)
    echo "| $p | $d | $r | $m |"
  done
done
echo
echo "| job status and control alone ($runs runs, median) | the I/O thread per state change | the control thread's rate |"
echo "|---|---:|---:|"
out=$(for _ in $(seq "$runs"); do "$build/fbf_flux_bench" --jsc-micro 300000; done)
io=$(echo "$out" | sed -n 's/.*the I\/O thread \([0-9.]*\) us per.*/\1/p' | median)
rate=$(echo "$out" | sed -n 's/.*s (\([0-9]*\) state changes\/s, applied.*/\1/p' | median)
echo "| 300,000 jobs queued, started, completed | $io us | $rate state changes/s |"

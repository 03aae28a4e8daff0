#!/usr/bin/env bash
# What fastbf-plot costs on the whole KTH-SP2 replay under EASY (28,475
# jobs on 100 resources, tagged with --tag-starts): the wall time of the
# three figures in PNG and in SVG (hyperfine), the size of each file, and
# the Gantt chart alone drawn by gnuplot (fastbf-plot's script cut after
# the chart) next to the same rectangles drawn by matplotlib (a
# PolyCollection per colour, no edges: the fastest way matplotlib has),
# when Debian's python3-matplotlib is installed; it is not a dependency.
# The target: the whole KTH plot in under 10 s on a 2-core machine. CPU
# is user + system time, gnuplot's included: on a shared machine it moves
# less than the wall time.
#
# Usage: bash bench/plot_cost.sh [BUILD_DIR] [RUNS]   (default: build 5)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-5}
for p in fastbf-replay fastbf-plot; do
  [ -x "$build/$p" ] || { echo "plot_cost: $build/$p is not built" >&2; exit 2; }
done
command -v hyperfine >/dev/null || { echo "plot_cost: needs hyperfine (tools/install-deps.sh)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$build/fastbf-replay" data/KTH-SP2-1996-2.1-cln.swf.gz --inproc --policy easy --tag-starts \
  --out "$tmp/kth" --quiet
csv="$tmp/kth/out_jobs.csv"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), gnuplot $(gnuplot --version | cut -d' ' -f2-)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$build/fastbf-plot" "$csv" --out "$tmp/png" | sed 's/^/  /'

mean() { # hyperfine JSON -> "wall mean ± sd s (min-max, N runs), CPU user + sys"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; t=r["times"]
print("wall %.3f ± %.3f s (%.3f-%.3f, %d runs), CPU %.3f s" % (r["mean"], r["stddev"] or 0,
      min(t), max(t), len(t), r["user"] + r["system"]))' "$1"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for fmt in png svg; do
  hyperfine --runs "$runs" --warmup 1 --style none --export-json "$tmp/$fmt.json" \
    "$build/fastbf-plot $csv --out $tmp/$fmt --format $fmt --quiet" >/dev/null 2>&1
  echo "fastbf-plot --format $fmt: $(mean "$tmp/$fmt.json")"
  for f in gantt load wait_by_size; do
    printf '  %-18s %8d bytes\n' "$f.$fmt" "$(stat -c %s "$tmp/$fmt/$f.$fmt")"
  done
done

# The Gantt chart alone: gnuplot from fastbf-plot's own script, cut
# before the load figure's data, against matplotlib on the same rectangles.
for fmt in png svg; do
  "$build/fastbf-plot" "$csv" --out "$tmp/g$fmt" --format "$fmt" --script "$tmp/full-$fmt.gp" --quiet
  sed '/^\$load << EOD/,$d' "$tmp/full-$fmt.gp" > "$tmp/gantt-$fmt.gp"
  mkdir -p "$tmp/g$fmt"
  hyperfine --runs "$runs" --warmup 1 --style none --export-json "$tmp/gp-$fmt.json" \
    "gnuplot $tmp/gantt-$fmt.gp" >/dev/null 2>&1
  echo "Gantt chart alone, gnuplot $fmt: $(mean "$tmp/gp-$fmt.json")"
done
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  cat > "$tmp/mpl_gantt.py" <<'EOF'
# The rectangles of fastbf-plot's script ($ganttN blocks: x0 x1 y0 y1),
# one PolyCollection per block, no edges, 1600x700 px.
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.collections import PolyCollection
blocks, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("$gantt"):
        cur = []
        blocks.append(cur)
    elif line.startswith("EOD"):
        cur = None
    elif cur is not None:
        x0, x1, y0, y1 = map(float, line.split("#")[0].split())
        cur.append(((x0, y0), (x1, y0), (x1, y1), (x0, y1)))
fig, ax = plt.subplots(figsize=(16, 7), dpi=100)
for rects, colour in zip(blocks, ["#4477AA", "#EE7733", "#CC3311", "#BBBBBB"] * 4):
    ax.add_collection(PolyCollection(rects, facecolors=colour, linewidths=0))
ax.autoscale_view()
fig.savefig(sys.argv[2])
EOF
  for fmt in png svg; do
    hyperfine --runs "$runs" --warmup 1 --style none --export-json "$tmp/mpl-$fmt.json" \
      "/usr/bin/python3 $tmp/mpl_gantt.py $tmp/gantt-png.gp $tmp/mpl.$fmt" >/dev/null 2>&1
    echo "Gantt chart alone, matplotlib $fmt: $(mean "$tmp/mpl-$fmt.json") ($(stat -c %s "$tmp/mpl.$fmt") bytes)"
  done
else
  echo "matplotlib: not installed (apt-get install python3-matplotlib to compare)"
fi

#!/usr/bin/env bash
# fastbf's whole-process benchmarks: builds a Release build in build-bench/,
# replays the bundled traces (data/) and the first K exchanges of deep queues
# made by fastbf-gen under fcfs, easy and conservative (over ZeroMQ with 1
# worker, in-process with 1..16), each case under a time limit, times them with
# hyperfine, runs the Google Benchmark micro-benchmarks, then writes
# bench/RESULTS.md and bench/plots/. See bench/README.md.
# Usage: bash tools/bench.sh [--quick] [--limit SECONDS] [--exchanges K] [--no-install]
#                            [--baseline REV]  (also: the in-process replay against REV's build)
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "bench.sh: $*" >&2; exit 2; }

mode=full limit= install=1 exchanges=200 baseline=
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) mode=quick ;;
    --limit) [ $# -ge 2 ] || die "--limit needs a number of seconds"; limit=$2; shift ;;
    --exchanges) [ $# -ge 2 ] || die "--exchanges needs a number"; exchanges=$2; shift ;;
    --no-install) install=0 ;;
    --baseline) [ $# -ge 2 ] || die "--baseline needs a git revision"; baseline=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' (try --help)" ;;
    esac
    shift
done

# Per mode: queue depths, per-case limit (s), hyperfine runs per case and the
# seconds they may take together, micro-benchmark filter.
if [ "$mode" = quick ]; then
    depths="1000 10000"; limit=${limit:-6}; runs=3; repeat_s=5; echo_trips=5000; ratio_pairs=3
    tput_runs=5; proto_runs=1; proto_policies=fcfs; baseline_pairs=5
    mb_filter='BM_Idset|BM_JobsFind|BM_Decide/easy/workers:1/waiting:(1000|10000)/|BM_Decide/conservative/workers:1/waiting:1000/'
else
    depths="1000 10000 100000 1000000"; limit=${limit:-60}; runs=5; repeat_s=60; echo_trips=20000
    ratio_pairs=7; tput_runs=15; proto_runs=5; proto_policies=fcfs,easy,conservative
    baseline_pairs=21
    mb_filter='BM_' # every micro-benchmark
fi
[[ "$limit" =~ ^[0-9]+$ && "$limit" -gt 0 ]] || die "--limit: '$limit' is not a whole number of seconds > 0"
[[ "$exchanges" =~ ^[0-9]+$ && "$exchanges" -gt 0 ]] || die "--exchanges: '$exchanges' is not a whole number > 0"
floor_limit=$((limit * 4))
# The 1-worker socket runs of the policies measure the targets: they get
# longer, so that a slow policy still reaches the exchanges after its burst.
target_limit=$((limit * 5))
workers="1 2 4 8 16"

build=build-bench # ignored by .gitignore's /build*/
res=$build/bench-results
bin=$PWD/$build
start=$(date +%s)

[ "$install" = 0 ] || bash tools/install-deps.sh
for t in hyperfine gnuplot python3 /usr/bin/time cmake; do
    command -v "$t" >/dev/null || die "'$t' is missing: run 'bash tools/install-deps.sh' as root"
done

echo "== build ($build, Release)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null ||
    die "cmake configure failed in $build"
targets=(fastbf fastbf-replay fastbf-gen)
have_mb=0
if cmake --build "$build" --target help 2>/dev/null | grep -c fbf_microbench >/dev/null; then
    targets+=(fbf_microbench); have_mb=1
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >/dev/null ||
    die "build failed (run: cmake --build $build --target ${targets[*]})"

rm -rf "$res"
mkdir -p "$res/cases" "$build/workloads"
cat >"$res/meta.env" <<EOF
mode=$mode
limit_s=$limit
floor_limit_s=$floor_limit
target_limit_s=$target_limit
runs=$runs
repeat_s=$repeat_s
depths="$depths"
exchanges=$exchanges
workers="$workers"
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain -uno 2>/dev/null | wc -l)
compiler="$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt") $(cc -dumpfullversion 2>/dev/null || true)"
hyperfine="$(hyperfine --version)"
EOF

# q ARGS...: one shell-quoted command line. Every command run goes to
# commands.txt, for RESULTS.md.
q() {
    local a out=()
    for a in "$@"; do
        if [[ "$a" =~ ^[A-Za-z0-9_./:=%+,@~-]+$ ]]; then out+=("$a"); else out+=("${a@Q}"); fi
    done
    echo "${out[*]}"
}
log() { q "$@" >>"$res/commands.txt"; }
run() { log "$@"; "$@"; }

failed=0

# case NAME LIMIT [--stderr-log] [--rounds] INSTRUMENTED_CMD... -- PLAIN_CMD...
# One instrumented run under LIMIT (run_case.py: summary, memory, progress),
# then up to `runs` plain runs with hyperfine while they fit in $repeat_s s.
# With --stderr-log after LIMIT, the instrumented run's stderr is DIR/sched.log.
# With --rounds, no plain run is made here: the case's plain command is
# kept for paired_rounds (below), which runs it in rounds alternating with
# the other worker counts of the same depth and policy.
declare -A plain_of=()
case_run() {
    local name=$1 lim=$2 dir=$res/cases/$1 rounds=0
    shift 2
    local -a inst=() plain=() opt=()
    if [ "$1" = --stderr-log ]; then opt=(--stderr-log); shift; fi
    if [ "$1" = --rounds ]; then rounds=1; shift; fi
    while [ "$1" != -- ]; do inst+=("$1"); shift; done
    shift
    plain=("$@")
    mkdir -p "$dir"
    printf '%-44s ' "$name"
    run python3 bench/run_case.py --dir "$dir" --limit "$lim" "${opt[@]}" -- "${inst[@]}" ||
        { failed=1; return 0; }
    if [ "$rounds" = 1 ]; then
        plain_of[$name]=$(q timeout -k 5 $((lim * 2)) "${plain[@]}")
        return 0
    fi
    local n
    n=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))
print(0 if c["status"]!="ok" else min(int(sys.argv[2]), int(float(sys.argv[3])/max(c["elapsed_s"],1e-3))))' \
        "$dir/case.json" "$runs" "$repeat_s")
    if [ "$n" -ge 2 ]; then
        local cmdline
        cmdline=$(q timeout -k 5 $((lim * 2)) "${plain[@]}")
        run hyperfine --runs "$n" --style none --export-json "$dir/hyperfine.json" \
            --command-name "$name" "$cmdline" || { echo "  hyperfine failed"; failed=1; }
    fi
}

# paired_rounds NAME...: the in-process cases of one depth and policy, one
# per worker count, that ran within their limit. Their plain runs are made
# in rounds, each round running every case once (in reverse order every
# other round), each run writing DIR/rep.ROUND/; report.py divides the
# 1-worker p50 by the W-worker p50 of the same round. Runs far apart in
# time see different machine loads; runs side by side, nearly the same,
# so the paired ratio shows what the workers change, not the load's drift.
paired_rounds() {
    local -a names=()
    local name longest=0 e
    for name in "$@"; do
        [ -n "${plain_of[$name]:-}" ] || continue
        e=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))
print(int(c["elapsed_s"] * 1000) if c["status"] == "ok" else -1)' "$res/cases/$name/case.json")
        [ "$e" -ge 0 ] || continue
        names+=("$name")
        [ "$e" -gt "$longest" ] && longest=$e
    done
    [ ${#names[@]} -ge 2 ] || return 0
    # As many rounds as fit in $repeat_s s for the slowest case, at most $runs.
    local n=$((repeat_s * 1000 / (longest > 0 ? longest : 1)))
    [ "$n" -gt "$runs" ] && n=$runs
    [ "$n" -ge 2 ] || return 0
    printf '%-44s %s rounds of %s\n' "${names[0]%~*}~*" "$n" "${#names[@]}"
    local r i k
    for ((r = 1; r <= n; r++)); do
        for ((k = 0; k < ${#names[@]}; k++)); do
            i=$k
            ((r % 2 == 0)) && i=$((${#names[@]} - 1 - k))
            name=${names[$i]}
            echo "${plain_of[$name]} --out $(q "$res/cases/$name/rep.$r")" >>"$res/commands.txt"
            eval "${plain_of[$name]} --out $(q "$res/cases/$name/rep.$r")" >/dev/null ||
                { echo "  $name round $r failed"; failed=1; }
        done
    done
}

# sched_cmd DIR ARGS...: the --scheduler string of an instrumented socket run.
sched_cmd() {
    local dir=$1
    shift
    printf 'echo $$ > %q; exec /usr/bin/time -f %%M -o %q %q %s --endpoint {endpoint} --verbose 2>%q' \
        "$dir/sched.pid" "$dir/sched.rss" "$bin/fastbf" "$*" "$dir/sched.log"
}

echo "== transport floor (bare ZeroMQ echo)"
run "$build/fastbf-replay" --echo-bench "$echo_trips" | tee "$res/echo.txt"

echo "== trace replays"
shopt -s nullglob
traces=(data/*.swf data/*.swf.gz data/*.json)
[ ${#traces[@]} -gt 0 ] || die "no trace under data/"
for tr in "${traces[@]}"; do
    tname=$(basename "$tr"); tname=${tname%%.swf*}; tname=${tname%.json}
    for p in fcfs easy conservative; do
        name=trace~$tname~$p~inproc~1
        case_run "$name" "$floor_limit" \
            "$build/fastbf-replay" "$tr" --inproc --policy "$p" --out "$res/cases/$name" -- \
            "$build/fastbf-replay" "$tr" --inproc --policy "$p" --quiet
        name=trace~$tname~$p~socket~1
        case_run "$name" "$floor_limit" \
            "$build/fastbf-replay" "$tr" --timeout $((floor_limit + 10)) --out "$res/cases/$name" \
            --scheduler "$(sched_cmd "$res/cases/$name" --policy "$p")" -- \
            "$build/fastbf-replay" "$tr" --scheduler "$bin/fastbf --policy $p"
    done
done

# The replayer over the socket against the bare transport: a full fcfs
# replay of the smallest trace (the pairs stay short) and an echo loop of
# as many round trips, alternated (bench/socket_ratio.py), unpinned and
# with both processes on one CPU.
ratio_trace=$(ls -S "${traces[@]}" | tail -n 1)
echo "== socket replay vs bare echo ($ratio_pairs alternated pairs, unpinned and pinned)"
run python3 bench/socket_ratio.py --bin "$bin" --trace "$ratio_trace" --pairs "$ratio_pairs" \
    --out "$res/socket_ratio.json" || failed=1
run python3 bench/socket_ratio.py --bin "$bin" --trace "$ratio_trace" --pairs "$ratio_pairs" \
    --pin 0 --out "$res/socket_ratio_pinned.json" || failed=1

# The replayer in process with the cheapest scheduler: simulated jobs per
# second over a full replay of the same trace (summary.json's jobs_per_s,
# which leaves out reading the trace), run after run.
echo "== replayer throughput in process (fcfs, $tput_runs runs)"
mkdir -p "$res/throughput"
for i in $(seq "$tput_runs"); do
    run "$build/fastbf-replay" "$ratio_trace" --inproc --policy fcfs --quiet \
        --out "$res/throughput/$i" >/dev/null || failed=1
done

# The protocols over the socket: the same trace under each policy over v4
# (ZeroMQ), v2 (Unix socket, jobs from Redis) and v4 in Redis mode, in
# rounds, unpinned and with every process on CPU 0 (bench/protocol_cost.py
# starts and stops its own redis-server).
if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
    echo "== protocol cost: v2 text vs v4 ($proto_policies, $proto_runs rounds, unpinned and pinned)"
    run python3 bench/protocol_cost.py protocols --bin "$build" --trace "$ratio_trace" \
        --policies "$proto_policies" --runs "$proto_runs" \
        --out "$res/protocol_cost.json" >/dev/null || failed=1
    run python3 bench/protocol_cost.py protocols --bin "$build" --trace "$ratio_trace" \
        --policies "$proto_policies" --runs "$proto_runs" --pin 0 \
        --out "$res/protocol_cost_pinned.json" >/dev/null || failed=1
else
    echo "== protocol cost skipped: redis-server is missing"
fi
# --baseline REV: the in-process fcfs replay of REV's build (a temporary
# worktree, same build type) against this one, in pairs back to back.
if [ -n "$baseline" ]; then
    echo "== in-process replay against $baseline ($baseline_pairs pairs)"
    cg=()
    command -v valgrind >/dev/null && cg=(--callgrind)
    run python3 bench/protocol_cost.py before-after --bin "$build" --old-rev "$baseline" \
        --trace "$ratio_trace" --pairs "$baseline_pairs" "${cg[@]}" \
        --out "$res/before_after.json" >/dev/null || failed=1
fi

# Each deep case is the submission burst of N jobs and then the first K
# exchanges (--max-exchanges): decisions at about N waiting, which a full
# drain would average away down to 0. Over the socket with 1 worker: the
# latency and memory targets, against fcfs. In-process with 1..16 workers:
# what the workers buy, measured on the decisions alone (over the socket
# the transport's noise is larger than an EASY decision).
echo "== deep queues (fastbf-gen --mode deep, first $exchanges exchanges; limit ${limit}s, socket ${target_limit}s, fcfs ${floor_limit}s)"
declare -A over_at=()
for n in $depths; do
    wl=$build/workloads/deep-$n.swf.gz
    [ -s "$wl" ] || run "$build/fastbf-gen" --jobs "$n" --mode deep --seed 1 --output "$wl"
    for ptw in fcfs:socket:1 easy:socket:1 conservative:socket:1 \
        $(for p in easy conservative; do for w in $workers; do echo "$p:inproc:$w"; done; done); do
        IFS=: read -r p tr w <<<"$ptw"
        name=deep~$n~$p~$tr~$w
        lim=$limit
        [ "$tr" = socket ] && lim=$target_limit
        [ "$p" = fcfs ] && lim=$floor_limit
        if [ -n "${over_at[$ptw]:-}" ]; then # quadratic: a deeper queue is over too
            mkdir -p "$res/cases/$name"
            printf '{"status": "skipped", "over_at": %s, "limit_s": %s}\n' "${over_at[$ptw]}" "$lim" \
                >"$res/cases/$name/case.json"
            printf '%-44s skipped (over the limit at %s)\n' "$name" "${over_at[$ptw]}"
            continue
        fi
        common=("$wl" --max-exchanges "$exchanges" --timeout $((lim + 10)))
        if [ "$tr" = socket ]; then
            case_run "$name" "$lim" \
                "$build/fastbf-replay" "${common[@]}" --out "$res/cases/$name" \
                --scheduler "$(sched_cmd "$res/cases/$name" --policy "$p" --workers "$w")" -- \
                "$build/fastbf-replay" "${common[@]}" --quiet --scheduler "$bin/fastbf --policy $p --workers $w"
            # A run over its limit never reaches SIMULATION_ENDS, where
            # fastbf reads the memory it holds: the burst alone (one
            # exchange, then SIMULATION_ENDS) gives that figure at N waiting.
            if python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))
sys.exit(0 if c["status"] == "over" and "held" not in c else 1)' "$res/cases/$name/case.json"; then
                hname=held~$n~$p~$tr~$w
                hcommon=("$wl" --max-exchanges 1 --timeout $((lim + 10)))
                case_run "$hname" "$lim" \
                    "$build/fastbf-replay" "${hcommon[@]}" --out "$res/cases/$hname" \
                    --scheduler "$(sched_cmd "$res/cases/$hname" --policy "$p" --workers "$w")" -- \
                    "$build/fastbf-replay" "${hcommon[@]}" --quiet --scheduler "$bin/fastbf --policy $p --workers $w"
            fi
        else
            # --verbose: the session's log (stderr) is sched.log, as over the socket.
            case_run "$name" "$lim" --stderr-log --rounds \
                "$build/fastbf-replay" "${common[@]}" --out "$res/cases/$name" \
                --inproc --policy "$p" --workers "$w" --verbose -- \
                "$build/fastbf-replay" "${common[@]}" --quiet --inproc --policy "$p" --workers "$w"
        fi
        # Over the limit: deeper queues are over too, so skip them; but keep
        # going with 1 worker while the run still made exchanges after the
        # burst (their times, from the log, are the decision cost at that
        # depth: the † figures).
        if python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))
sys.exit(c["status"] == "over" and not (sys.argv[2] == "1" and
         c.get("progress", {}).get("exchanges_after_burst", 0) > 0))' \
            "$res/cases/$name/case.json" "$w"; then :; else over_at[$ptw]=$n; fi
    done
    for p in easy conservative; do
        paired_rounds $(for w in $workers; do echo "deep~$n~$p~inproc~$w"; done)
    done
done

if [ "$have_mb" = 1 ]; then
    echo "== micro-benchmarks (filter: $mb_filter)"
    run "$build/fbf_microbench" --benchmark_filter="$mb_filter" \
        --benchmark_out="$res/microbench.json" --benchmark_out_format=json >"$res/microbench.txt" ||
        { echo "fbf_microbench failed (see $res/microbench.txt)"; failed=1; }
else
    echo "== micro-benchmarks skipped: fbf_microbench is not built (Google Benchmark missing?)"
fi

echo "elapsed_s=$(($(date +%s) - start))" >>"$res/meta.env"
echo "== report"
python3 bench/report.py "$res" bench/RESULTS.md bench/plots
echo "bench.sh: $mode run done in $(($(date +%s) - start)) s; see bench/RESULTS.md (raw data: $res/)"
[ "$failed" = 0 ] || { echo "bench.sh: some cases FAILED (see RESULTS.md)" >&2; exit 1; }

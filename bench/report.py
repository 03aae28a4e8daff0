#!/usr/bin/env python3
"""Writes bench/RESULTS.md and its gnuplot plots from the raw results that
tools/bench.sh left in RESULTS_DIR (Python 3 standard library + gnuplot).

    report.py RESULTS_DIR OUT.md PLOTS_DIR

RESULTS_DIR holds meta.env, commands.txt, echo.txt, microbench.json,
protocol_cost.json, protocol_cost_pinned.json and before_after.json
(bench/protocol_cost.py), and
cases/<kind>~<workload>~<policy>~<transport>~<workers>/ with case.json (from
bench/run_case.py) and, when the case was repeated, hyperfine.json.
"""
import glob
import json
import os
import platform
import re
import statistics
import sys

from cases import (held_at, held_per_job, lat_of, lat_ratio, load_cases, paired_ratio,
                   wall_of, work_of)
from plots import plot
from protocol_cost import render as protocol_cost_section

POLICIES = ("fcfs", "easy", "conservative")


# ---------------------------------------------------------------- loading
def machine():
    info = {"cpu": "unknown", "cores": os.cpu_count(), "mem": "unknown"}
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            info["cpu"] = m.group(1) if m else "unknown"
        with open("/proc/meminfo") as f:
            kib = int(re.search(r"MemTotal:\s*(\d+)", f.read()).group(1))
            info["mem"] = f"{kib / 2**20:.1f} GiB"
    except OSError:
        pass
    info["kernel"] = platform.release()
    return info


def echo_p50(res):
    """The bare ZeroMQ round trip's p50 in seconds, from echo.txt, or None."""
    try:
        with open(os.path.join(res, "echo.txt")) as f:
            m = re.search(r"p50 ([0-9.]+) us", f.read())
        return float(m.group(1)) * 1e-6 if m else None
    except OSError:
        return None


def read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                env[k] = v.strip('"')
    return env


# ---------------------------------------------------------------- formatting
def fmt_s(s):
    if s is None:
        return "—"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= scale or unit == "ns":
            v = s / scale
            return f"{v:.3g} {unit}" if v < 1000 else f"{v:.0f} {unit}"


def fmt_kib(k):
    if k is None:
        return "—"
    return f"{k / 1024:.1f} MiB" if k >= 1024 else f"{k} KiB"


def fmt_ratio(a, b):
    return f"{a / b:.3g}×" if a and b else "—"


def wall_cell(c):
    if c["status"] == "over":
        return f"> {c['limit_s']:g} s (over the limit)"
    if c["status"] == "skipped":
        return f"not run (over the limit at {c['over_at']:,})"
    if c["status"] == "failed":
        return f"FAILED (exit {c['rc']})"
    mean, sd, n = c["wall"]
    return f"{fmt_s(mean)} ± {fmt_s(sd)} ({n} runs)" if sd is not None else f"{fmt_s(mean)} (1 run)"


def exch_cell(c):
    if c["status"] == "over":
        p = c.get("progress", {})
        if not c.get("per_exchange"):
            return f"> {fmt_s(c['limit_s'] - p.get('burst_done_s', 0))} (no exchange after the burst)"
        k = p["exchanges_after_burst"]
        return (f"{fmt_s(c['per_exchange'])} † ({k:,} exchange{'s' if k > 1 else ''}, "
                f"{p['waiting_last']:,} still waiting)")
    return fmt_s(c.get("per_exchange"))


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(out)


def latency(c, key):
    s = c.get("summary")
    return fmt_s(s["latency_s"][key]) if s else "—"


TARGET_DEPTH = 1_000_000


def verdict(ok, depth):
    """A target's verdict for a figure measured at depth (targets are set at
    TARGET_DEPTH pending jobs)."""
    if depth < TARGET_DEPTH:
        return f"not measured at {TARGET_DEPTH:,}, where the target is set"
    return "met" if ok else "NOT met"


def lat_cell(c, key):
    v, from_log = lat_of(c, key)
    return fmt_s(v) + (" †" if from_log else "") if v else "—"


def lat_spread(c, key):
    """" (min–max of N runs)" for a percentile taken as a median over runs."""
    v = c.get("lat_runs", {}).get(key) if c else None
    if not v or len(v) < 2:
        return ""
    return f" ({fmt_s(min(v))}–{fmt_s(max(v))}, {len(v)} runs)"


# ---------------------------------------------------------------- report
def compression_work(idx, deep, w):
    """What D7 (a) asks of conservative at each depth: how many reservations
    a completion moves, beside what a decision costs."""
    rows = []
    for n in deep:
        c = idx.get(("deep", str(n), "conservative", "inproc", 1))
        wk = work_of(c)
        if not wk or not wk.get("compression_passes"):
            rows.append([f"{n:,}", "—", "—", "—", lat_cell(c, "p50") if c else "—", "—"])
            continue
        moved = wk["reservations_moved"] / wk["compression_passes"]
        p50 = lat_of(c, "p50")[0]
        rows.append([f"{n:,}", f"{wk['compression_passes']:,}", f"{moved:,.0f}",
                     f"{moved / n:.2%}", lat_cell(c, "p50"),
                     fmt_s(p50 / moved) if p50 and moved else "—"])
    if not any(r[1] != "—" for r in rows):
        return
    w("**What conservative's compression must do** (in process, 1 worker; the policy's "
      "counters, `fastbf --verbose` or the replay's summary): D7 (a) re-places, in queue "
      "order, every reservation that can start earlier after a completion, and each one moved "
      "opens room for those behind it. The reservations one pass moves is the size of its "
      "result, so no data structure makes a pass cheaper than that; *p50 per reservation "
      "moved* is what the data structures decide.\n")
    w(table(["jobs pending", "compression passes", "reservations moved per pass",
             "of the jobs pending", "exchange p50", "p50 per reservation moved"], rows))
    w("")


def socket_ratio_section(res, w):
    """The replay over the socket vs the bare echo (bench/socket_ratio.py)."""
    runs = []
    for name, how in (("socket_ratio.json", "unpinned"), ("socket_ratio_pinned.json", "both on CPU 0")):
        path = os.path.join(res, name)
        if os.path.exists(path):
            with open(path) as f:
                runs.append((how, json.load(f)))
    if not runs:
        return
    w("## Socket replay vs bare echo\n")
    t = runs[0][1]
    w(f"A full replay of {t['trace']} under {t['policy']} over ZeroMQ (`fastbf-replay TRACE "
      f"--scheduler \"fastbf --policy {t['policy']}\"`), alternated with a bare echo loop of as "
      f"many round trips (`fastbf-replay --echo-bench N`); rate = exchanges per second from the "
      f"first reply to the last (the replay; its scheduler's start and exit left out) and round "
      f"trips per second after connecting and warming up (the echo). Each "
      f"pair runs back to back, so both see the same machine load; the median pair is the "
      f"figure. **Target**: the replay's rate at least 0.90 of the echo's.\n")
    w("The rate is a mean over the whole run, so one stall of a shared machine (a round trip of "
      "milliseconds) weighs on it; the median round trip of each run does not, and *p50 echo / "
      "replay* is the same comparison taken on the typical exchange. *without fastbf* takes "
      "the time fastbf spent answering (`fastbf --stats`) out of the replay's run: the rate of "
      "the replayer and the transport alone, against the echo's.\n")
    rows = []
    for how, r in runs:
        for i, p in enumerate(r["pairs"]):
            p50 = (f"{p['echo_p50_s'] * 1e6:.1f} / {p['replay_p50_s'] * 1e6:.1f} µs",
                   f"{p['p50_ratio']:.3f}") if "p50_ratio" in p else ("", "")
            free = f"{p['free_ratio']:.3f}" if "free_ratio" in p else ""
            rows.append([how, str(i + 1), f"{p['echo_per_s']:,.0f}/s", f"{p['replay_per_s']:,.0f}/s",
                         f"{p['ratio']:.3f}", *p50, free])
        med50 = [p["p50_ratio"] for p in r["pairs"] if "p50_ratio" in p]
        rows.append([how, "**median**", "", "", f"**{r['median_ratio']:.3f}**", "",
                     f"**{statistics.median(med50):.3f}**" if med50 else "",
                     f"**{r['median_free_ratio']:.3f}**" if "median_free_ratio" in r else ""])
    w(table(["processes", "pair", "echo", "replay", "replay / echo", "round trip p50 echo / replay",
             "p50 echo / replay", "without fastbf / echo"], rows))
    w("")


def throughput_section(res, w):
    """The replayer in process under fcfs, run after run (tools/bench.sh)."""
    runs = []
    for f in sorted(glob.glob(os.path.join(res, "throughput", "*", "summary.json"))):
        with open(f) as fh:
            runs.append(json.load(fh))
    if not runs:
        return
    rate = sorted(r["jobs_per_s"] for r in runs)
    med = statistics.median(rate)
    w("## Replayer throughput in process\n")
    w(f"A full replay of {os.path.basename(runs[0]['workload'])} with fastbf's session in the "
      f"replayer's process under fcfs, the cheapest correct scheduler (`fastbf-replay TRACE "
      f"--inproc --policy fcfs`), {len(rate)} runs one after the other: simulated jobs per "
      f"second from SIMULATION_BEGINS to SIMULATION_ENDS (reading the trace left out), "
      f"fastbf's time included. **Target**: at least 200,000 jobs/s.\n")
    w(f"- median **{med:,.0f} jobs/s** ({'met' if med >= 2e5 else 'NOT met'}); range "
      f"{rate[0]:,.0f}–{rate[-1]:,.0f}; {sum(x >= 2e5 for x in rate)} of {len(rate)} runs at "
      f"200,000 or more")
    sched = statistics.median(r["wall_s"]["scheduler"] / r["wall_s"]["total"] for r in runs)
    w(f"- share of the run spent in fastbf's session (median): {sched:.0%}\n")


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: report.py RESULTS_DIR OUT.md PLOTS_DIR")
    res, out_md, pdir = sys.argv[1:]
    env, mach, cases = read_env(os.path.join(res, "meta.env")), machine(), load_cases(res)
    datdir = os.path.join(res, "plotdata")
    os.makedirs(datdir, exist_ok=True)
    os.makedirs(pdir, exist_ok=True)
    for old in glob.glob(os.path.join(pdir, "*.png")):
        os.remove(old)
    cores = mach["cores"] or 1
    idx = {(c["kind"], c["workload"], c["policy"], c["transport"], c["workers"]): c for c in cases}
    deep = sorted({c["depth"] for c in cases if c["kind"] == "deep"})
    workers = sorted({c["workers"] for c in cases if c["kind"] == "deep"})
    md = []
    w = md.append

    w("# fastbf whole-process benchmark results\n")
    w(f"Written by `bash tools/bench.sh{' --quick' if env['mode'] == 'quick' else ''}` "
      f"(**{env['mode']} mode**) — do not edit by hand; rerun the command.\n")
    w(table(["", ""], [
        ["date (UTC)", env["started"]],
        ["git commit", env["commit"] + (f" (+{env['dirty']} locally modified tracked files)"
                                         if env.get("dirty", "0") != "0" else "")],
        ["CPU", f"{mach['cpu']}, {cores} cores (os.cpu_count)"],
        ["memory", mach["mem"]], ["kernel", mach["kernel"]],
        ["compiler", env.get("compiler", "?")], ["hyperfine", env.get("hyperfine", "?")],
        ["build", "build-bench/, CMAKE_BUILD_TYPE=Release"],
        ["limits", f"{env['limit_s']} s per case, {env['floor_limit_s']} s for the fcfs floor "
                   f"and the trace replays; up to {env['runs']} hyperfine runs per case while "
                   f"they fit in {env.get('repeat_s', '?')} s"],
        ["total time", f"{int(env.get('elapsed_s', 0)) // 60} min {int(env.get('elapsed_s', 0)) % 60} s"],
    ]))
    w("")
    w("**These are one machine's figures, from one run**: compare ratios within this file, "
      "not absolute figures across machines or runs.\n")

    w("## How to read this\n")
    w("- *wall*: the whole replay, from starting `fastbf-replay` to its exit (hyperfine mean ± "
      "standard deviation; `1 run` = the instrumented run alone, when repeats would not fit).")
    w("- *per exchange*: time the replayer spent waiting for the scheduler, divided by the "
      "number of request/reply exchanges (`wall_s.scheduler / exchanges` in "
      "`summary.json`): the mean cost of one decision point as Batsim would see it, "
      "transport included. Over the socket this includes a ZeroMQ round trip (see the "
      "transport floor). Deep queues give instead the mean exchange after the submission "
      "burst, from fastbf's log (below).")
    w("- *vs fcfs*: ratio to fcfs on the same workload and transport, the floor (the "
      "cheapest correct scheduler).")
    w("- *latency p50 / p99*: per-exchange latency percentiles printed by `fastbf-replay`.")
    w("- *peak RSS*: peak resident memory (`/usr/bin/time` %M, or VmHWM at the limit) of the "
      "`fastbf` process (socket), or of the replay process that hosts the session (in-process).")
    w("- Deep queues: `fastbf-gen --mode deep --jobs N --seed 1` submits all N jobs at t = 0 "
      f"on 1024 resources; each run makes the submission burst, then the first "
      f"{env.get('exchanges', '?')} exchanges (`--max-exchanges`) and ends with "
      "SIMULATION_ENDS, so the queue stays at about N and the latency percentiles are those "
      "of decisions at that depth. A run over the limit is killed and reported, not failed: "
      "**†** marks figures taken from the exchanges it made after the burst, from the +T "
      "times of `fastbf --verbose` (exact, one full cycle each). Once a policy and worker "
      "count is over the limit at one depth, deeper queues are not run, except with 1 worker "
      "while the run still got past the burst.\n")

    echo = os.path.join(res, "echo.txt")
    if os.path.exists(echo):
        w("## Transport floor\n")
        w("A bare ZeroMQ REQ/REP echo loop (`fastbf-replay --echo-bench`), no scheduler:\n")
        w("```\n" + open(echo).read().strip() + "\n```\n")
    socket_ratio_section(res, w)
    throughput_section(res, w)
    # bench/protocol_cost.py: v2 against v4, and the run against --baseline.
    for name in ("protocol_cost.json", "protocol_cost_pinned.json", "before_after.json"):
        path = os.path.join(res, name)
        if os.path.exists(path):
            with open(path) as f:
                md.extend(protocol_cost_section(json.load(f)))

    # Trace replays
    traces = sorted({c["workload"] for c in cases if c["kind"] == "trace"})
    for tr in traces:
        w(f"## Trace replay: {tr}\n")
        rows = []
        for trn in ("inproc", "socket"):
            for p in POLICIES:
                c = idx.get(("trace", tr, p, trn, 1))
                if not c:
                    continue
                floor = idx.get(("trace", tr, "fcfs", trn, 1))
                s = c.get("summary", {})
                jobs = s.get("jobs", {}).get("submitted")
                rss = c["sched_rss_kib"] if trn == "socket" else c["replay_rss_kib"]
                rows.append([p, trn, wall_cell(c), fmt_ratio(wall_of(c), wall_of(floor)),
                             exch_cell(c), fmt_ratio(c.get("per_exchange"), floor and floor.get("per_exchange")),
                             f"{s.get('exchanges', 0):,}", latency(c, "p50"), latency(c, "p99"),
                             fmt_kib(rss), f"{rss * 1024 / jobs:,.0f} B" if rss and jobs else "—"])
        w(table(["policy", "transport", "wall", "vs fcfs", "per exchange", "vs fcfs",
                 "exchanges", "latency p50", "latency p99", "peak RSS", "RSS per job"], rows))
        w("")

    # Deep queues, 1 worker
    plots = {}
    if deep:
        k = env.get("exchanges", "?")
        w("## Deep queues (1 worker, over the socket)\n")
        w(f"Each run: SIMULATION_BEGINS, {k} exchanges (`fastbf-replay --max-exchanges {k}`; "
          f"the first delivers the submission burst of N jobs), then SIMULATION_ENDS, so every "
          f"decision measured is made with about N jobs waiting. Latency percentiles: the "
          f"replayer's, over all {k} + 2 exchanges. *vs fcfs*: ratio to fcfs (the floor) at the "
          f"same depth. "
          f"**†**: the run went over its limit; the figure comes from the times of the "
          f"exchanges it made after the burst in `fastbf --verbose` (one full cycle each: "
          f"fastbf, the transport and the replayer's turn).\n")
        rows = []
        for n in deep:
            floor = idx.get(("deep", str(n), "fcfs", "socket", 1))
            for p in POLICIES:
                c = idx.get(("deep", str(n), p, "socket", 1))
                if not c:
                    continue
                pr, rss = c.get("progress", {}), c.get("sched_rss_kib")
                r50, r99 = lat_ratio(c, floor, "p50"), lat_ratio(c, floor, "p99")
                held, burst_only = held_at(idx, n, p)
                rows.append([f"{n:,}", p, wall_cell(c),
                             f"{pr['exchanges_after_burst']:,}" if "exchanges_after_burst" in pr else "—",
                             lat_cell(c, "p50"), f"{r50:.3g}×" if r50 else "—",
                             lat_cell(c, "p99"), f"{r99:.3g}×" if r99 else "—",
                             fmt_s(c.get("per_exchange")), fmt_s(pr.get("burst_s")),
                             fmt_kib(rss), f"{rss * 1024 / n:,.0f} B" if rss else "—",
                             f"**{held:,.0f} B**" + (" ‡" if burst_only else "") if held else "—"])
        w(table(["jobs pending", "policy", "wall", "exchanges after the burst", "latency p50",
                 "vs fcfs", "latency p99", "vs fcfs", "mean exchange after the burst (log)",
                 "burst (log)", "fastbf peak RSS", "peak RSS per pending job",
                 "held per pending job"], rows))
        w("")
        w("*held per pending job*: the memory fastbf still holds at SIMULATION_ENDS, with about "
          "N jobs waiting, once its allocator has returned the pages it caches (`fastbf "
          "--verbose` logs it), minus what it held before the first message, divided by the "
          "jobs waiting then. The peak adds the submission burst's message and parse, which "
          "are gone once it is handled. **‡**: the run was over its limit, so the figure comes "
          "from a run of the burst alone (`--max-exchanges 1`, then SIMULATION_ENDS).\n")
        top = deep[-1]
        floor = idx.get(("deep", str(top), "fcfs", "socket", 1))
        w(f"**Target** (EASY and conservative p50 at most 2× the fcfs floor at 1,000,000 "
          f"pending), at the deepest queue run here, {top:,}:\n")
        for p in ("easy", "conservative"):
            c = idx.get(("deep", str(top), p, "socket", 1))
            r = lat_ratio(c, floor, "p50")
            w(f"- {p}: " + (f"p50 {lat_cell(c, 'p50')} against fcfs {lat_cell(floor, 'p50')}: "
                            f"**{r:.3g}×**, " + verdict(r <= 2, top) if r else
                            "not measured (" + (wall_cell(c) if c else "no case") + ")"))
        w("")
        w(f"**Target** (at most 256 bytes of resident memory per pending job at 1,000,000 "
          f"pending), held per pending job at the deepest queue each policy finished:\n")
        for p in POLICIES:
            got = [(n, *held_at(idx, n, p)) for n in deep]
            got = [(n, h, b) for n, h, b in got if h]
            if not got:
                w(f"- {p}: not measured")
                continue
            n, h, b = got[-1]
            w(f"- {p}: **{h:,.0f} B** at {n:,} pending" + (" (the burst alone ‡)" if b else "") +
              ", " + verdict(h <= 256, n))
        w("")
        lo = deep[0]
        w(f"**Target** (the decision cost grows at most 3× from 1,000 to 1,000,000 pending): the "
          f"decision alone is the in-process exchange (1 worker, the table of workers below), "
          f"p50 at each depth over p50 at {lo:,}:\n")
        for p in ("easy", "conservative"):
            base = idx.get(("deep", str(lo), p, "inproc", 1))
            got = [(n, lat_ratio(idx.get(("deep", str(n), p, "inproc", 1)), base, "p50"))
                   for n in deep[1:]]
            got = [(n, r) for n, r in got if r]
            if not got:
                w(f"- {p}: not measured beyond {lo:,}")
                continue
            steps = ", ".join(f"{n:,}: {r:.3g}×" for n, r in got)
            n, r = got[-1]
            w(f"- {p}: {steps}; **{r:.3g}×** at {n:,}, " + verdict(r <= 3, n))
        w("")
        compression_work(idx, deep, w)

        done, part, lat = [], [], []
        for i, p in enumerate(POLICIES, 1):
            cs = [idx.get(("deep", str(n), p, "socket", 1)) for n in deep]
            done.append((f"{p}", [(c["depth"], c["per_exchange"]) for c in cs
                                  if c and c["status"] == "ok" and c.get("per_exchange")],
                         f"with linespoints lw 2 pt 7 lc {i}"))
            part.append((f"{p} † (over the limit)", [(c["depth"], c["per_exchange"]) for c in cs
                         if c and c["status"] == "over" and c.get("per_exchange")],
                         f"with points pt 6 ps 2 lw 2 lc {i}"))
            for key, style in (("p50", "lw 2 pt 7"), ("p99", "dt 2 pt 6")):
                pts = [(c["depth"], lat_of(c, key)[0]) for c in cs if c and lat_of(c, key)[0]]
                dag = " (some †)" if any(c and lat_of(c, key)[1] for c in cs) else ""
                lat.append((f"{p} {key}{dag}", pts, f"with linespoints {style} lc {i}"))
        floor = echo_p50(res)
        xr = f"set xrange [{deep[0] / 2}:{deep[-1] * 2}]\nset format x '10^{{%T}}'\n"
        extra = xr + (f"set yrange [{floor / 2}:*]\n"
                 f"set arrow from graph 0,first {floor} to graph 1,first {floor} nohead dt 3 lc rgb 'gray'\n"
                 f"set label 'ZeroMQ echo p50' at graph 0.02,first {floor} offset 0,0.6 tc rgb 'gray'"
                 if floor else "")
        plots["decision"] = plot(pdir, datdir, "decision-cost",
                                 f"Mean exchange after the burst vs queue depth (first {k}, 1 worker, socket)",
                                 "jobs pending at t = 0", "seconds per exchange", done + part, extra=extra)
        plots["latency"] = plot(pdir, datdir, "latency",
                                f"Exchange latency vs queue depth (first {k} exchanges, 1 worker, socket)",
                                "jobs pending at t = 0", "latency (s)", lat, extra=xr)
        mem = []
        for i, p in enumerate(POLICIES, 1):
            cs = [idx.get(("deep", str(n), p, "socket", 1)) for n in deep]
            mem.append((f"{p} held", [(n, held_at(idx, n, p)[0]) for n in deep
                                      if held_at(idx, n, p)[0]],
                        f"with linespoints lw 2 pt 7 lc {i}"))
            mem.append((f"{p} peak", [(c["depth"], c["sched_rss_kib"] * 1024 / c["depth"])
                                      for c in cs if c and c.get("sched_rss_kib")],
                        f"with linespoints dt 2 pt 6 lc {i}"))
        target = ("set arrow from graph 0,first 256 to graph 1,first 256 nohead dt 3 lc rgb 'gray'\n"
                  "set label 'target: 256 B' at graph 0.02,first 256 offset 0,0.6 tc rgb 'gray'\n")
        plots["memory"] = plot(pdir, datdir, "memory",
                               "fastbf memory per pending job (held after the burst, and peak)",
                               "jobs pending at t = 0", "bytes per pending job", mem,
                               extra=xr + target)

    # Workers
    if len(workers) > 1:
        w("## Worker threads (`--workers`, deep queues, in-process)\n")
        w(f"The same deep-queue runs as above, in-process (`fastbf-replay --inproc --workers W`), "
          f"so that the figure is the decision itself: over the socket a ZeroMQ round trip "
          f"(about 100 µs, see the transport floor) and its noise would dwarf an EASY "
          f"decision. Each cell: latency p50 over the first {env.get('exchanges', '?')} "
          f"exchanges (the time the replayer waited for fastbf's session), the median over "
          f"the runs of the case, with the range of the runs' p50 and their number († from the "
          f"session's log, one full cycle each, one run), and the speedup = p50 at 1 worker / "
          f"p50 at W workers. The runs of one depth and policy are made in rounds, every worker "
          f"count once per round (in reverse order every other round), so the speedup is the "
          f"median over rounds of the ratio within a round, with its range: runs side by side "
          f"see nearly the same machine load, runs minutes apart do not. Without rounds (†, or "
          f"a case too slow to repeat) it is the ratio of the two cases' figures. This machine "
          f"has {cores} cores: worker counts "
          f"above that (marked *) are oversubscribed and show contention, not scaling.\n")
        rows, sp = [], []
        for p in ("easy", "conservative"):
            for n in deep:
                base = idx.get(("deep", str(n), p, "inproc", 1))
                cells, pts = [], []
                for k in workers:
                    c = idx.get(("deep", str(n), p, "inproc", k))
                    if not c:
                        cells.append("—"); continue
                    paired = paired_ratio(base, c) if k > 1 else None
                    ratio = paired[0] if paired else lat_ratio(base, c, "p50")
                    v = (lat_cell(c, "p50") + lat_spread(c, "p50")) if lat_of(c, "p50")[0] \
                        else wall_cell(c)
                    spread = (f" ({paired[1]:.2f}–{paired[2]:.2f} over {paired[3]} rounds)"
                              if paired else "")
                    cells.append(v + (f", **{ratio:.2f}×**{spread}" if ratio else ""))
                    if ratio:
                        pts.append((k, ratio))
                rows.append([p, f"{n:,}"] + cells)
                if len(pts) > 1:
                    sp.append((f"{p} {n:,}", pts, "with linespoints lw 2"))
        heads = [f"{k} worker{'s' if k > 1 else ''}{' *' if k > cores else ''}" for k in workers]
        w(table(["policy", "jobs pending"] + heads, rows))
        w("")
        w("**The submission burst** (the same runs): the longest exchange of each run, the one "
          "that submits all N jobs, median over the runs with its range, and the speedup "
          "paired by round as above. With 2 workers or more, a helper thread parses and checks "
          "the burst's events while the I/O thread applies them (`io/json_pipe.h`).\n")
        rows = []
        for p in ("easy", "conservative"):
            for n in deep:
                base = idx.get(("deep", str(n), p, "inproc", 1))
                cells = []
                for k in workers:
                    c = idx.get(("deep", str(n), p, "inproc", k))
                    b = sorted((c or {}).get("burst_rounds", {}).values())
                    if not b:
                        cells.append("—"); continue
                    paired = paired_ratio(base, c, "burst_rounds") if k > 1 else None
                    cell = (f"{fmt_s(statistics.median(b))} ({fmt_s(b[0])}–{fmt_s(b[-1])}, "
                            f"{len(b)} runs)")
                    if k == 1:
                        cell += ", **1.00×**"
                    elif paired:
                        cell += (f", **{paired[0]:.2f}×** ({paired[1]:.2f}–{paired[2]:.2f} "
                                 f"over {paired[3]} rounds)")
                    cells.append(cell)
                if any(x != "—" for x in cells):
                    rows.append([p, f"{n:,}"] + cells)
        w(table(["policy", "jobs pending"] + heads, rows))
        w("")
        plots["speedup"] = plot(pdir, datdir, "speedup", f"Speedup vs workers ({cores} cores)",
                                "workers", "p50 speedup vs 1 worker (higher is better)",
                                sp + [("ideal", [(k, k) for k in workers], "with lines dt 3 lc rgb 'gray'")],
                                logx=True, logy=True, extra=f"set xrange [1:{max(workers)}]\n"
                                f"set arrow from {cores},graph 0 to {cores},graph 1 nohead dt 2 lc rgb 'red'\n"
                                f"set label 'cores' at {cores},graph 0.95 offset 0.5,0 tc rgb 'red'")

    if any(plots.values()):
        w("## Plots\n")
        for key, title in (("decision", "Decision cost (mean exchange after the burst) vs queue depth"),
                           ("latency", "Exchange latency p50 / p99 vs queue depth"),
                           ("memory", "fastbf memory per pending job vs queue depth"),
                           ("speedup", "Speedup vs workers")):
            if plots.get(key):
                w(f"- [{title}](plots/{plots[key]})\n\n  ![{title}](plots/{plots[key]})\n")

    mb = os.path.join(res, "microbench.json")
    if os.path.exists(mb):
        with open(mb) as f:
            bj = json.load(f)
        w("## Micro-benchmarks (Google Benchmark)\n")
        w("Cases picked by the filter in the commands below (see bench/README.md for what each "
          "measures). Raw JSON: `build-bench/bench-results/microbench.json`.\n")
        rows = []
        for b in bj.get("benchmarks", []):
            scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[b.get("time_unit", "ns")]
            rows.append([f"`{b['name']}`", fmt_s(b["real_time"] * scale), fmt_s(b["cpu_time"] * scale),
                         f"{b['iterations']:,}"])
        w(table(["benchmark", "real time", "CPU time", "iterations"], rows))
        w("")

    failed = [c for c in cases if c["status"] == "failed"]
    if failed:
        w("## FAILED cases\n")
        for c in failed:
            w(f"- {c['kind']} {c['workload']} {c['policy']} {c['transport']} {c['workers']} workers: "
              f"exit {c['rc']}\n\n```\n{c.get('output_tail', '').strip()}\n```\n")

    w("## Commands run\n")
    w("In order (`run_case.py` runs the instrumented run of each case, hyperfine the repeats):\n")
    with open(os.path.join(res, "commands.txt")) as f:
        cmds = f.read().strip().replace(os.getcwd() + "/", "")
    w("```sh\n" + cmds + "\n```")
    with open(out_md, "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"report.py: wrote {out_md} and {len([p for p in plots.values() if p])} plots in {pdir}/")


if __name__ == "__main__":
    main()

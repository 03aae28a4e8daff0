#!/usr/bin/env python3
"""The worker table: what `--workers W` buys on deep queues, in process.

    worker_table.py --replay BUILD/fastbf-replay --gen BUILD/fastbf-gen --dir DIR
                    [--workers 1,2,4,8,16] [--rounds 3] [--limit S]
                    [--case POLICY:JOBS:EXCHANGES]... [--prefix 'CMD ARGS']

Each case replays `fastbf-gen --mode deep --jobs JOBS --seed 1` (every job
submitted at t = 0 on 1024 resources) in process (`fastbf-replay --inproc
--policy POLICY --workers W --max-exchanges EXCHANGES`): the submission
burst, then EXCHANGES - 1 decisions at that depth. The runs of one case are
made in rounds, every worker count once per round (in reverse order every
other round), so that the speedup of W workers is the median over rounds
of the ratio within a round (runs side by side see the same machine).

Per run: the scheduler's wall time for the whole replay (summary.json's
wall_s.scheduler), the burst (the longest exchange), the p50 of the
exchanges, and the CPU time of the process over its wall time (how many
cores were busy). --prefix runs the replayer through another program (a
dynamic loader with --library-path, say). Writes DIR/worker_table.json and
DIR/worker_table.md, and prints each run as it ends. Exit status: 0, or 1
when a run failed (a run over --limit is recorded as "over", not failed).
"""
import argparse
import json
import os
import platform
import shlex
import signal
import statistics
import subprocess
import sys
import time


def parse_case(text):
    try:
        policy, jobs, exchanges = text.split(":")
        return {"policy": policy, "jobs": int(jobs), "exchanges": int(exchanges)}
    except ValueError:
        raise argparse.ArgumentTypeError(f"--case expects POLICY:JOBS:EXCHANGES, got '{text}'")


def workload(args, jobs):
    path = os.path.join(args.dir, f"deep-{jobs}.swf")
    if not os.path.exists(path):
        with open(path + ".tmp", "wb") as f:
            subprocess.run(args.prefix + [args.gen, "--mode", "deep", "--jobs", str(jobs),
                                          "--seed", "1"], stdout=f, check=True)
        os.rename(path + ".tmp", path)
    return path


def run_one(args, case, w, out):
    cmd = args.prefix + [args.replay, workload(args, case["jobs"]), "--inproc", "--policy",
                         case["policy"], "--workers", str(w), "--max-exchanges",
                         str(case["exchanges"]), "--quiet", "--out", out]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    status, over = None, False
    while status is None:
        pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            status = st
            break
        if time.monotonic() - t0 > args.limit:
            os.killpg(proc.pid, signal.SIGKILL)
            _, status, ru = os.wait4(proc.pid, 0)
            over = True
            break
        time.sleep(0.02)
    wall = time.monotonic() - t0
    err = proc.stderr.read().decode(errors="replace")[-2000:]
    rec = {"workers": w, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime,
           "status": "over" if over else "ok" if os.waitstatus_to_exitcode(status) == 0
           else "failed"}
    if rec["status"] == "failed":
        rec["stderr"] = err
        return rec
    try:
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        rec.update(scheduler_s=s["wall_s"]["scheduler"], burst_s=s["latency_s"]["max"],
                   p50_s=s["latency_s"]["p50"], exchanges=s["exchanges"])
    except (OSError, KeyError, ValueError) as e:
        if not over:
            rec.update(status="failed", stderr=f"summary.json unreadable: {e}")
    return rec


def fmt_s(x):
    return f"{x * 1e6:.3g} µs" if x < 1e-3 else f"{x * 1e3:.3g} ms" if x < 1 else f"{x:.3g} s"


def summarise(case, runs, workers):
    """One markdown row per metric of a case: median (range) per worker count,
    and the speedup paired by round."""
    ok = [r for r in runs if r["status"] == "ok"]
    rows = []
    for metric, label in (("scheduler_s", "whole replay"), ("burst_s", "burst"),
                          ("p50_s", "exchange p50")):
        cells = []
        for w in workers:
            xs = [r[metric] for r in ok if r["workers"] == w]
            if not xs:
                cells.append("—")
                continue
            speed = [a[metric] / b[metric] for a in ok if a["workers"] == 1
                     for b in ok if b["workers"] == w and b["round"] == a["round"] and b[metric] > 0]
            cell = f"{fmt_s(statistics.median(xs))} ({fmt_s(min(xs))}–{fmt_s(max(xs))})"
            if speed:
                cell += (f", **{statistics.median(speed):.2f}×** "
                         f"({min(speed):.2f}–{max(speed):.2f})")
            cells.append(cell)
        rows.append(f"| {case['policy']} | {case['jobs']:,} | {case['exchanges']} | {label} | "
                    + " | ".join(cells) + " |")
    busy = []
    for w in workers:
        xs = [r["cpu_s"] / r["wall_s"] for r in ok if r["workers"] == w and r["wall_s"] > 0]
        busy.append(f"{statistics.median(xs):.2f}" if xs else "—")
    rows.append(f"| {case['policy']} | {case['jobs']:,} | {case['exchanges']} | "
                "CPU / wall | " + " | ".join(busy) + " |")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replay", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=float, default=300, help="seconds per run")
    ap.add_argument("--case", type=parse_case, action="append")
    ap.add_argument("--prefix", default="", help="command to run the binaries through")
    args = ap.parse_args()
    args.prefix = shlex.split(args.prefix)
    workers = [int(x) for x in args.workers.split(",")]
    if 1 not in workers:
        ap.error("--workers must include 1: speedups are against it")
    cases = args.case or [parse_case(c) for c in ("easy:100000:200", "easy:1000000:200",
                                                  "conservative:10000:200",
                                                  "conservative:100000:200",
                                                  "conservative:1000000:1")]
    os.makedirs(args.dir, exist_ok=True)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    result = {"machine": {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release()},
              "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "cases": []}
    failed = False
    for case in cases:
        runs = []
        for rnd in range(args.rounds):
            for w in workers if rnd % 2 == 0 else reversed(workers):
                out = os.path.join(args.dir, f"{case['policy']}-{case['jobs']}-w{w}-r{rnd}")
                rec = run_one(args, case, w, out)
                rec["round"] = rnd
                runs.append(rec)
                failed |= rec["status"] == "failed"
                print(f"{case['policy']} {case['jobs']} x{case['exchanges']} workers={w} "
                      f"round={rnd}: {rec['status']}, scheduler "
                      f"{rec.get('scheduler_s', float('nan')):.3f} s, burst "
                      f"{rec.get('burst_s', float('nan')):.3f} s, cpu/wall "
                      f"{rec['cpu_s'] / max(rec['wall_s'], 1e-9):.2f}", flush=True)
                if rec["status"] == "failed":
                    print(rec.get("stderr", ""), file=sys.stderr, flush=True)
        result["cases"].append({**case, "runs": runs})
        with open(os.path.join(args.dir, "worker_table.json"), "w") as f:
            json.dump(result, f, indent=1)
    head = ("| policy | jobs | exchanges | figure | " + " | ".join(f"{w} worker{'s' * (w > 1)}"
                                                          for w in workers) + " |")
    lines = [f"{result['machine']['cpu']}, {result['machine']['cores']} cores, "
             f"{result['started']}; {args.rounds} rounds", "", head,
             "|" + "---|" * (4 + len(workers))]
    for c in result["cases"]:
        lines += summarise(c, c["runs"], workers)
    with open(os.path.join(args.dir, "worker_table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

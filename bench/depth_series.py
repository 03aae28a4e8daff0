#!/usr/bin/env python3
"""The depth series: a whole replay's scheduler CPU time against the floor.

    python3 bench/depth_series.py [--build DIR] [--jobs 1000,4000,...]
                                  [--limit S] [--json FILE]

For each N, `fastbf-gen --mode burst --load 20 --nb-res 256 --jobs N
--seed 1` (arrivals 20 times faster than 256 resources can serve them, so
the queue holds nearly every job), replayed over the socket by
`fastbf-replay --endpoint URL` against a scheduler this script starts
itself: bench/floor_fcfs.c (`fbf_floor_fcfs`, the cheapest correct FCFS
scheduler: the floor), then `fastbf --policy P` for fcfs, easy and
conservative (1 worker). The figure is the scheduler's own CPU time
(user + system, from wait4) for the whole replay, and its ratio to the
floor's at the same N. A run past --limit seconds of wall time is killed;
its figure is the CPU time it had used by then, marked ">".

Prints a Markdown table; --json also writes every figure.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu(pid):
    """CPU seconds a live process has used (utime + stime)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def run_one(build, workload, sched, limit):
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    if sched == "floor":
        cmd = [os.path.join(build, "fbf_floor_fcfs"), "--endpoint", url]
    else:
        cmd = [os.path.join(build, "fastbf"), "--policy", sched, "--endpoint", url]
    s = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    r = subprocess.Popen([os.path.join(build, "fastbf-replay"), "--quiet", "--timeout",
                          str(int(limit) + 5), "--endpoint", url, workload],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = r.communicate(timeout=limit)
        over = False
    except subprocess.TimeoutExpired:
        over = True
    wall = time.monotonic() - t0
    if over:
        cpu = proc_cpu(s.pid)
        s.send_signal(signal.SIGKILL)
        r.kill()
        r.communicate()
        os.waitpid(s.pid, 0)
        return {"cpu": cpu, "wall": wall, "over": True, "ok": True}
    _, status, ru = os.wait4(s.pid, 0)
    ok = r.returncode == 0 and status == 0
    if not ok:
        sys.stderr.write(f"{sched} on {workload}: replay status {r.returncode}, "
                         f"scheduler status {status}: {err.decode(errors='replace')[-400:]}\n")
    return {"cpu": ru.ru_utime + ru.ru_stime, "wall": wall, "over": False, "ok": ok}


def fmt(x):
    return f"{x:.3g} s" if x >= 0.01 else f"{x * 1e3:.3g} ms"


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--build", default="build-bench")
    a.add_argument("--jobs", default="1000,4000,16000,64000,256000")
    a.add_argument("--scheds", default="floor,fcfs,easy,conservative")
    a.add_argument("--limit", type=float, default=300.0)
    a.add_argument("--json")
    o = a.parse_args()
    wdir = os.path.join(o.build, "workloads")
    os.makedirs(wdir, exist_ok=True)
    scheds = o.scheds.split(",")
    rows = []
    for n in [int(x) for x in o.jobs.split(",")]:
        wl = os.path.join(wdir, f"series-{n}.swf")
        if not os.path.exists(wl):
            subprocess.run([os.path.join(o.build, "fastbf-gen"), "--mode", "burst", "--load", "20",
                            "--nb-res", "256", "--jobs", str(n), "--seed", "1", "--output", wl],
                           check=True)
        row = {"jobs": n}
        for sc in scheds:
            row[sc] = run_one(o.build, wl, sc, o.limit)
            sys.stderr.write(f"N={n} {sc}: {row[sc]}\n")
        rows.append(row)
    head = "| N jobs | " + " | ".join(scheds) + " |"
    print(head)
    print("|---" * (len(scheds) + 1) + "|")
    for row in rows:
        base = row.get("floor")
        cells = []
        for sc in scheds:
            f = row[sc]
            c = (">" if f["over"] else "") + fmt(f["cpu"])
            if not f["ok"]:
                c += " (failed)"
            elif base and sc != "floor" and base["cpu"] > 0:
                c += f" ({'>' if f['over'] else ''}{f['cpu'] / base['cpu']:.3g}×)"
            cells.append(c)
        print(f"| {row['jobs']:,} | " + " | ".join(cells) + " |")
    if o.json:
        with open(o.json, "w") as f:
            json.dump({"limit": o.limit, "rows": rows}, f, indent=1)
    return 0 if all(r[sc]["ok"] for r in rows for sc in scheds) else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs ONE whole-process benchmark case (a fastbf-replay command) under a
time limit and writes DIR/case.json. Used by tools/bench.sh.

    run_case.py --dir DIR --limit S [--stderr-log] -- fastbf-replay ARGS... --out DIR

The command runs in a session of its own. Conventions shared with
tools/bench.sh, all inside DIR:
  summary.json  written by `fastbf-replay --out DIR`
  replay.rss    peak RSS (KiB) of the replay process (/usr/bin/time -o)
  sched.pid     socket cases: pid of `/usr/bin/time ... fastbf` ($$ then exec)
  sched.rss     socket cases: peak RSS (KiB) of fastbf (/usr/bin/time -o)
  sched.log     socket cases: fastbf --verbose (in-process cases with
                --stderr-log: the replay's stderr, with --verbose), one line per exchange,
                "fastbf: +T s now N: D decisions, W waiting, R running", T
                the monotonic seconds since its first such line, and at the
                end the memory fastbf holds ("memory at the end: ..."), read
                after its allocator returned its free pages: "held" in
                case.json, the figure of the memory target; then the
                policy's work counters ("policy work: ..."): "work"

status: "ok" (replay exited 0), "over" (killed at the limit: NOT a failure;
the progress made, read from sched.log, is recorded) or "failed".
From sched.log, "progress" holds the time of each exchange after the
submission burst (the difference between its +T and the one before: fastbf's
decision, the transport and the replayer's turn, i.e. one full cycle): their
count, mean, p50 and p99, exact whatever the sampling.
Exit status: 0 for ok and over, 1 for failed, 2 for bad usage.
"""
import argparse
import json
import math
import os
import re
import signal
import subprocess
import sys
import time

POLL_S = 0.1
LINE = re.compile(rb"^fastbf: \+([0-9.]+) s now [0-9.]+: \d+ decisions, (\d+) waiting")
WORK = re.compile(rb"^fastbf: policy work: (.*)$")
HELD = re.compile(rb"^fastbf: memory at the end: (\d+) KiB resident with (\d+) jobs waiting "
                  rb"and (\d+) running, (-?\d+) KiB at the start")


class LogWatcher:
    """Follows sched.log as it grows: exchanges seen so far, when (our
    clock, sampled), and fastbf's own +T of each."""

    def __init__(self, path):
        self.path, self.offset, self.tail = path, 0, b""
        self.exchanges, self.waiting, self.samples, self.times = 0, None, [], []
        self.held = None
        self.work = None

    def poll(self, t):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        self.offset += len(data)
        lines = (self.tail + data).split(b"\n")
        self.tail = lines.pop()
        for line in lines:
            m = LINE.search(line)
            if m:
                self.exchanges += 1
                self.times.append(float(m.group(1)))
                self.waiting = int(m.group(2))
            m = WORK.search(line)
            if m:
                self.work = {k: int(v) for k, v in (item.strip().decode().rsplit(" ", 1)
                                                    for item in m.group(1).split(b","))}
            m = HELD.search(line)
            if m:
                end, waiting, running, start = (int(g) for g in m.groups())
                self.held = {"end_kib": end, "start_kib": start, "waiting": waiting,
                             "running": running}
        self.samples.append((t, self.exchanges))


def read_kib(path):
    """Last integer line of a /usr/bin/time -f %M -o file, or None."""
    try:
        with open(path) as f:
            nums = [l.strip() for l in f if l.strip().isdigit()]
        return int(nums[-1]) if nums else None
    except FileNotFoundError:
        return None


def fastbf_hwm_kib(case_dir):
    """VmHWM of the live fastbf (the child of the time process), or None."""
    try:
        with open(os.path.join(case_dir, "sched.pid")) as f:
            tpid = int(f.read().split()[0])
        with open(f"/proc/{tpid}/task/{tpid}/children") as f:
            kids = f.read().split()
        with open(f"/proc/{kids[0]}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def rank(sorted_v, q):
    """Nearest-rank percentile (the ceil(q n)-th smallest), as fastbf-replay."""
    return sorted_v[max(1, math.ceil(q * len(sorted_v))) - 1] if sorted_v else None


def progress(watch, ended):
    """Exchanges made; times of the exchanges after the submission burst.
    ended: the replay exited 0, so the last line is SIMULATION_ENDS's."""
    p = {"exchanges": watch.exchanges, "waiting_last": watch.waiting}
    # Line 1 is SIMULATION_BEGINS, line 2 the burst of every job.
    burst = next((t for t, n in watch.samples if n >= 2), None)
    if burst is not None:
        p["burst_done_s"] = round(burst, 3)
    t = watch.times
    if len(t) >= 2:
        p["burst_s"] = t[1] - t[0]
        d = sorted(b - a for a, b in zip(t[1:], t[2:len(t) - (1 if ended else 0)]))
        p["exchanges_after_burst"] = len(d)
        p["s_per_exchange_after_burst"] = sum(d) / len(d) if d else None
        p["p50_after_burst"], p["p99_after_burst"] = rank(d, 0.5), rank(d, 0.99)
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--limit", type=float, required=True)
    ap.add_argument("--stderr-log", action="store_true",
                    help="the command's stderr is DIR/sched.log (in-process runs with "
                         "--verbose log there what fastbf logs over the socket)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no command after --")
    os.makedirs(a.dir, exist_ok=True)
    full = ["/usr/bin/time", "-f", "%M", "-o", os.path.join(a.dir, "replay.rss")] + cmd
    watch = LogWatcher(os.path.join(a.dir, "sched.log"))
    out = open(os.path.join(a.dir, "replay.out"), "wb")
    t0 = time.monotonic()
    err = open(os.path.join(a.dir, "sched.log"), "wb") if a.stderr_log else subprocess.STDOUT
    proc = subprocess.Popen(full, stdout=out, stderr=err, start_new_session=True)
    status, hwm_at_limit = None, None
    while status is None:
        try:
            proc.wait(timeout=POLL_S)
            status = "ok" if proc.returncode == 0 else "failed"
        except subprocess.TimeoutExpired:
            pass
        elapsed = time.monotonic() - t0
        watch.poll(elapsed)
        if status is None and elapsed >= a.limit:
            hwm_at_limit = fastbf_hwm_kib(a.dir)
            # The replay forwards SIGTERM to the scheduler's process group.
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            status = "over"
    elapsed = min(time.monotonic() - t0, a.limit) if status == "over" else time.monotonic() - t0
    out.close()
    if a.stderr_log:
        err.close()
    watch.poll(elapsed)

    case = {"status": status, "rc": proc.returncode, "elapsed_s": round(elapsed, 4),
            "limit_s": a.limit, "command": cmd,
            "replay_rss_kib": read_kib(os.path.join(a.dir, "replay.rss")),
            "sched_rss_kib": hwm_at_limit if status == "over" else
            read_kib(os.path.join(a.dir, "sched.rss"))}
    if os.path.exists(os.path.join(a.dir, "sched.log")):
        case["progress"] = progress(watch, status == "ok")
    if watch.held:
        case["held"] = watch.held
    if watch.work:
        case["work"] = watch.work
    try:
        with open(os.path.join(a.dir, "summary.json")) as f:
            case["summary"] = json.load(f)
    except (OSError, ValueError):
        pass
    csv = os.path.join(a.dir, "out_jobs.csv")
    if os.path.exists(csv):
        os.remove(csv)  # up to ~100 MB at 1e6 jobs; the summary is what we keep
    if status == "failed":
        tail = b""
        for name in ("replay.out",) + (("sched.log",) if a.stderr_log else ()):
            with open(os.path.join(a.dir, name), "rb") as f:
                tail += f.read()[-2000:]
        case["output_tail"] = tail.decode("utf-8", "replace")
    with open(os.path.join(a.dir, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
    print(f"{status} {elapsed:.2f}s" + (f" (limit {a.limit:g}s)" if status == "over" else ""))
    return 1 if status == "failed" else 0


if __name__ == "__main__":
    sys.exit(main())

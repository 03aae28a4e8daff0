#!/usr/bin/env python3
"""How close a full replay over ZeroMQ comes to the bare transport.

Alternates, PAIRS times, a full replay of TRACE against fastbf over
loopback TCP (`fastbf-replay TRACE --scheduler "fastbf --policy POLICY"`)
and a bare ZeroMQ REQ/REP echo loop over the same transport
(`fastbf-replay --echo-bench N`) of as many round trips as the replay had
exchanges, so that both run about as long. The replay's exchange rate is
its steady rate (summary.json: exchanges_per_s_after_first, from the first
reply to the last, which leaves out the scheduler's start and exit); the
echo's is the round trips per second it prints, timed after its own
connection and warm-up. Each pair's ratio is
replay rate / echo rate, taken minutes apart at most, so that the load
of a shared machine weighs on both alike; the median pair is the figure.
Each pair also compares the median round trip of both runs (echo p50 /
replay p50), which a few stalls of the machine do not move.

The replay's scheduler runs with --stats, which says how long fastbf took
to answer its messages: taking that time out of the replay's run gives
the rate the replayer and the transport alone would reach with a
scheduler that answers in no time, and its ratio to the echo's says
whether the replayer (not the scheduler) holds the exchanges back.

With --pin CPU, both processes of each run share that one CPU
(taskset), which takes the scheduler of the operating system out of the
comparison: the round trip then costs two context switches on both sides.

Writes a JSON report (--out) and prints one line per pair.
Usage: socket_ratio.py --bin DIR --trace FILE [--policy fcfs] [--pairs 7]
                       [--pin CPU] --out FILE
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile


def pinned(cmd, cpu):
    return (["taskset", "-c", str(cpu)] + cmd) if cpu is not None else cmd


def echo_rate(args, trips):
    cmd = pinned([os.path.join(args.bin, "fastbf-replay"), "--echo-bench", str(trips)],
                 args.pin)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"([0-9.]+) round trips/s, latency p50 ([0-9.]+) us", out)
    if not m:
        sys.exit(f"socket_ratio: no rate in the echo bench's output: {out.strip()!r}")
    return float(m.group(1)), float(m.group(2)) * 1e-6


STATS = re.compile(r"fastbf: (\d+) messages answered in ([0-9.]+) s \([0-9.]+ us each; "
                   r"the first in ([0-9.]+) s\)")


def replay_rate(args):
    """(rate, exchanges, p50, rate without fastbf's own answering time)."""
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "sched.log")
        sched = (f"{shlex.quote(os.path.join(args.bin, 'fastbf'))} --policy {args.policy} "
                 f"--stats 2>{shlex.quote(log)}")
        if args.pin is not None:
            sched = f"taskset -c {args.pin} {sched}"
        cmd = pinned([os.path.join(args.bin, "fastbf-replay"), args.trace, "--quiet",
                      "--scheduler", sched, "--out", d], args.pin)
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        with open(os.path.join(d, "summary.json")) as f:
            s = json.load(f)
        with open(log) as f:
            m = STATS.search(f.read())
    done, total = s["jobs"]["done"], s["jobs"]["in_workload"]
    if done != total:
        sys.exit(f"socket_ratio: the replay ended with {done} of {total} jobs done")
    if not m:
        sys.exit("socket_ratio: fastbf --stats printed no figures")
    rate, n = s["exchanges_per_s_after_first"], s["exchanges"]
    # The rate runs from the first reply to the last: the first message's
    # answering time lies before it.
    span = (n - 1) / rate - (float(m.group(2)) - float(m.group(3)))
    return rate, n, s["latency_s"]["p50"], (n - 1) / span if span > 0 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="folder with fastbf and fastbf-replay")
    ap.add_argument("--trace", required=True)
    ap.add_argument("--policy", default="fcfs")
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--pin", type=int, default=None, metavar="CPU")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.pairs < 1:
        sys.exit("socket_ratio: --pairs must be at least 1")
    pairs = []
    for i in range(args.pairs):
        r, n, rp50, rfree = replay_rate(args)
        e, ep50 = echo_rate(args, n)
        pairs.append({"echo_per_s": e, "replay_per_s": r, "ratio": r / e,
                      "echo_p50_s": ep50, "replay_p50_s": rp50, "p50_ratio": ep50 / rp50,
                      "replay_free_per_s": rfree, "free_ratio": rfree / e})
        print(f"pair {i + 1}: echo {e:,.0f}/s, replay {r:,.0f}/s ({n:,} exchanges), "
              f"ratio {r / e:.3f}; round trip p50 echo {ep50 * 1e6:.1f} us, "
              f"replay {rp50 * 1e6:.1f} us, ratio {ep50 / rp50:.3f}; without fastbf's "
              f"answering {rfree:,.0f}/s, ratio {rfree / e:.3f}", flush=True)
    med = statistics.median(p["ratio"] for p in pairs)
    report = {"trace": os.path.basename(args.trace), "policy": args.policy,
              "pin": args.pin, "pairs": pairs, "median_ratio": med,
              "min_ratio": min(p["ratio"] for p in pairs),
              "max_ratio": max(p["ratio"] for p in pairs),
              "median_p50_ratio": statistics.median(p["p50_ratio"] for p in pairs),
              "median_free_ratio": statistics.median(p["free_ratio"] for p in pairs)}
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"median ratio {med:.3f} (min {report['min_ratio']:.3f}, max {report['max_ratio']:.3f}); "
          f"median round trip p50 ratio {report['median_p50_ratio']:.3f}; "
          f"without fastbf's answering, median ratio {report['median_free_ratio']:.3f}")


if __name__ == "__main__":
    main()

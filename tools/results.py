#!/usr/bin/env python3
"""Writes docs/results.md: the bundled traces (data/) under the policies,
orders and estimates of scheduling-semantics.md, replayed in process.

    python3 tools/results.py [--build DIR] [--out FILE] [--keep DIR]

For each trace and configuration, `fastbf-replay TRACE --inproc ...
--tag-starts --out DIR` (the build's, default build/), then, from its
summary.json and out_jobs.csv: mean wait, mean bounded slowdown (tau =
10 s), utilization, the share of jobs fastbf tagged `backfilled` (started
ahead of a job before them in the queue order), and the share of jobs that
started before a job submitted earlier was started (overtook it, whatever
the policy calls it). About half a minute on two cores. Exit status: 0, or 1
when a replay fails (its stderr is shown).
"""
import argparse
import csv
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TRACES = [
    ("KTH-SP2", "data/KTH-SP2-1996-2.1-cln.swf.gz", []),
    ("CTC-SP2", "data/CTC-SP2-1996-3.1-cln.swf.gz", []),
]

CONFIGS = [
    ("fcfs", ["--policy", "fcfs"]),
    ("easy", ["--policy", "easy"]),
    ("easy, sjf queue order", ["--policy", "easy", "--order", "sjf"]),
    ("easy, sjf backfill order", ["--policy", "easy", "--backfill-order", "sjf"]),
    ("easy++", ["--preset", "easy++"]),
    ("conservative", ["--policy", "conservative"]),
    ("conservative, predict", ["--policy", "conservative", "--estimate", "predict"]),
]

# The published figures there are for this trace: CTC-SP2 on its whole
# machine (512), see data/README.md.
CTC512 = [("fcfs", ["--policy", "fcfs"]), ("easy", ["--policy", "easy"]),
          ("conservative", ["--policy", "conservative"])]
CTC512_PUBLISHED = {"fcfs": "6,183 s", "easy": "2,466 s (2,070 s in another version)",
                    "conservative": "2,270 s"}


TEMPLATE = """\
# Results: the bundled traces under the orders and estimates

Written by `python3 tools/results.py` (@STAMP@): do not edit by hand,
rerun the command. Every figure comes from a replay of the whole trace in
process (`fastbf-replay --inproc`, Batsim's side played by fastbf-replay:
jobs run their SWF run time, cut at their requested time as Batsim kills
them) under the rules of [scheduling-semantics.md](scheduling-semantics.md);
the commands are listed at the end.

- *mean wait*: start - submission, over all jobs.
- *mean bounded slowdown*: max(1, (wait + run) / max(run, 10 s)).
- *utilization*: the resources' busy time over (resources x makespan), the
  makespan from the first submission to the last end. A trace replay's
  work is fixed and its span is set mostly by its last submissions, so
  utilization moves little between policies; it drops where a policy
  leaves a long job waiting until after the others (sjf as the queue
  order on CTC-SP2).
- *backfilled (tag)*: the share of jobs fastbf tagged `backfilled`
  (`--tag-starts`): started ahead of a job before them in the queue order.
  Under conservative backfilling a job started at a reservation made
  earlier is tagged `reservation` instead, even when it went ahead of
  others, and under sjf as the queue order going ahead of an earlier
  submission is the order itself, not backfilling: hence the next column.
- *overtook an earlier submission*: the share of jobs that started while
  a job submitted before them (D1) had not started yet, whatever the
  policy calls it.
- easy, sjf queue order: `--order sjf` (the head is the shortest job);
  easy, sjf backfill order: `--backfill-order sjf` (the head in submission
  order, the backfilling shortest first); easy++: `--preset easy++`, the
  latter with `--estimate predict` (D10: the mean of the user's last two
  run times, SWF field 12, at most the requested time), Tsafrir, Etsion
  and Feitelson's EASY++; conservative, predict: `--policy conservative
  --estimate predict`.

@TABLES@
@EASYPP@

## Beside published figures

**Tsafrir, Etsion and Feitelson**, "Backfilling using system-generated
predictions rather than user runtime estimates", IEEE Transactions on
Parallel and Distributed Systems 18(6), 2007, define EASY++ (EASY with the
prediction above, corrected when a job outlives it, and backfilling
shortest predicted job first) and report that it "achieves significant
improvements in performance, predictability, and accuracy" over EASY. The
tables above agree in direction on both traces, for the mean wait and more
so for the bounded slowdown. Their per-trace figures are not copied here:
they could not be checked against the paper from this repository, and
their setup differs from D10 in details that move such figures (how a
prediction is corrected once a job outlives it, which jobs feed a user's
history, how the traces are cleaned), so only the direction is compared.

**CTC-SP2 on its whole machine (512 processors)**, against the figures the
HPC-workload-optimizer project publishes for this trace (its Python
reference simulator, README "Full Policy Matrix", capacity 512, requested
time = field 9), as [`data/README.md`](../data/README.md) quotes them:

@CTC512@
FCFS is 1% below the published figure only because jobs are killed at
their requested time here, as Batsim kills them: FCFS does not read
requested times otherwise, and replayed with nobody killed (field 9
raised to the run time for the 7,174 jobs that overrun it) it gives
6,182.6 s (data/README.md). The backfilling figures differ because the published
simulator is not this page's EASY and conservative: its jobs run their
whole run time, its EASY backfills a job only when it ends
before the head's reservation (no spare-resource rule, D6's `extra`) and
plans with the running jobs' actual end times, and its conservative
rebuilds every reservation from scratch at each decision, which D7 (a)
forbids. Jobs that hold their resources past the requested time and a
stricter backfilling rule both lengthen waits, as the published figures
show.

## Commands

Each with `--tag-starts --quiet --out DIR`, from the build's
`fastbf-replay`:

```
@COMMANDS@
```
"""


def replay(build, trace, args, out):
    cmd = [os.path.join(build, "fastbf-replay"), os.path.join(ROOT, trace), "--inproc",
           "--tag-starts", "--quiet", "--out", out] + args
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit("results.py: failed: " + " ".join(cmd))
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    jobs = []
    with open(os.path.join(out, "out_jobs.csv")) as f:
        for row in csv.DictReader(f):
            if row["starting_time"] in ("", "-1", "-1.000000"):
                continue
            jobs.append((float(row["submission_time"]), int(row["job_id"]),
                         float(row["starting_time"]), "reason=backfilled" in row["metadata"]))
    n = len(jobs)
    backfilled = sum(1 for j in jobs if j[3])
    # Overtook: an earlier submission (subtime, then arrival: the job
    # number, as the replay submits the file's jobs) started later.
    jobs.sort()
    overtook, latest = 0, float("-inf")
    for sub, num, start, _ in jobs:
        if latest > start:
            overtook += 1
        latest = max(latest, start)
    return {"wait": s["mean_wait"], "bsld": s["mean_bounded_slowdown"],
            "util": s["utilization"], "jobs": n,
            "backfilled": backfilled / n if n else 0, "overtook": overtook / n if n else 0,
            "cmd": "fastbf-replay " + trace + " --inproc " + " ".join(args)}


def git_commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=10", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def fmt(r):
    return "| {:,.0f} s | {:.2f} | {:.2%} | {:.1%} | {:.1%} |".format(
        r["wait"], r["bsld"], r["util"], r["backfilled"], r["overtook"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results.md"))
    ap.add_argument("--keep", help="keep every replay's output under this folder")
    a = ap.parse_args()
    if not os.access(os.path.join(a.build, "fastbf-replay"), os.X_OK):
        raise SystemExit("results.py: no fastbf-replay in %s (build first, or --build DIR)"
                         % a.build)
    work = a.keep or tempfile.mkdtemp(prefix="fbf-results-")
    results = {}
    try:
        k = 0
        for name, trace, extra in TRACES:
            for label, args in CONFIGS:
                k += 1
                results[(name, label)] = replay(a.build, trace, extra + args,
                                                os.path.join(work, "run%02d" % k))
        for label, args in CTC512:
            k += 1
            results[("CTC-SP2 (512)", label)] = replay(
                a.build, TRACES[1][1], ["--nb-res", "512"] + args,
                os.path.join(work, "run%02d" % k))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    text = TEMPLATE
    tables = []
    for name, trace, _ in TRACES:
        r0 = results[(name, "fcfs")]
        tables.append("### %s (%s, %s jobs)\n\n" % (name, trace, "{:,}".format(r0["jobs"])))
        tables.append("| configuration | mean wait | mean bounded slowdown | utilization | "
                      "backfilled (tag) | overtook an earlier submission |\n"
                      "|---|---|---|---|---|---|\n")
        for label, _ in CONFIGS:
            tables.append("| %s %s\n" % (label, fmt(results[(name, label)])))
        tables.append("\n")
    ctc = ["| policy | mean wait (fastbf) | mean wait (published) | utilization (fastbf) |\n"
           "|---|---|---|---|\n"]
    for label, _ in CTC512:
        r = results[("CTC-SP2 (512)", label)]
        ctc.append("| {} | {:,.1f} s | {} | {:.1%} |\n".format(
            label, r["wait"], CTC512_PUBLISHED[label], r["util"]))
    cmds = "\n".join(sorted({r["cmd"] for r in results.values()}))

    def change(trace, label, key):
        return results[(trace, label)][key] / results[(trace, "easy")][key] - 1

    easypp = ("On KTH-SP2, EASY++ changes EASY's mean wait by {:+.0%} and its mean bounded "
              "slowdown by {:+.0%}; on CTC-SP2 by {:+.0%} and {:+.0%}. The prediction alone "
              "(conservative, predict against conservative) changes the mean wait by {:+.0%} "
              "on KTH-SP2 and {:+.0%} on CTC-SP2.").format(
                  change("KTH-SP2", "easy++", "wait"), change("KTH-SP2", "easy++", "bsld"),
                  change("CTC-SP2", "easy++", "wait"), change("CTC-SP2", "easy++", "bsld"),
                  results[("KTH-SP2", "conservative, predict")]["wait"] /
                  results[("KTH-SP2", "conservative")]["wait"] - 1,
                  results[("CTC-SP2", "conservative, predict")]["wait"] /
                  results[("CTC-SP2", "conservative")]["wait"] - 1)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = (text.replace("@TABLES@", "".join(tables).rstrip() + "\n")
            .replace("@CTC512@", "".join(ctc).rstrip() + "\n")
            .replace("@COMMANDS@", cmds).replace("@EASYPP@", easypp)
            .replace("@STAMP@", "%s, commit %s, %s" % (now, git_commit(), platform.machine())))
    with open(a.out, "w") as f:
        f.write(text)
    print("results.py: wrote %s (%d replays)" % (a.out, len(results)))


if __name__ == "__main__":
    main()

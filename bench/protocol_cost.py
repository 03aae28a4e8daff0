#!/usr/bin/env python3
"""What the protocol costs per exchange, and what the code since an older
commit costs the in-process replay (Python 3 standard library; redis-server
and redis-cli for `protocols`, valgrind for `before-after --callgrind`).

    protocol_cost.py protocols --bin DIR --trace FILE [--policies fcfs,easy,conservative]
                     [--runs 5] [--pin CPU] [--redis-port P] --out FILE
    protocol_cost.py before-after --bin DIR (--old-rev REV | --old-bin DIR) --trace FILE
                     [--policy fcfs] [--pairs 21] [--callgrind] [--label TEXT] --out FILE
    protocol_cost.py render FILE... [--into RESULTS.md]

protocols: the same trace and policy replayed with fastbf as a separate
process over Batsim v4 (JSON over ZeroMQ: `fastbf-replay TRACE --scheduler
"fastbf --policy P"`), over Batsim v2 (text over a Unix socket, job data
from Redis: `fastbf-replay --protocol batsim2 --redis ... --scheduler
"fastbf --protocol batsim2 ..."`) and over v4 in Redis mode (`fastbf-replay
--redis ...`: ZeroMQ, job data from Redis as in v2), which tells the
transport and codec apart from Redis. RUNS rounds; each round runs every
policy under the three, in an order rotated from round to round, so that
the ratios v2 / v4 are taken between runs seconds apart. Each run reports the
replayer's per-exchange latency (summary.json: send to reply) and fastbf's
own time answering (`fastbf --stats`); each is followed by the same run with
`fastbf --verbose`, whose +T stamps give the full cycle of every exchange
(fastbf, the transport and the replayer's turn; the log line adds its own
cost): the distribution's p90, which the replayer's summary does not give
(p50, p99, mean, max). With --pin CPU, every process (the replayer, the
fastbf it starts, our redis-server) runs on that CPU. A bare ZeroMQ echo
(`fastbf-replay --echo-bench`) first gives the transport's floor at the
time. Starts its own redis-server on a free port (--save '' --appendonly
no) unless --redis-port names one, empties it before each run (the
replayer leaves its keys there) and shuts it down at the end.

before-after: the in-process replay (`fastbf-replay TRACE --inproc --policy
P --quiet`) of the build in --bin against an older build, in PAIRS pairs
run back to back (the older first in odd pairs, second in even ones,
after one unmeasured run of each): the wall time of each process, then
both again with --out, whose summary.json gives the time spent in fastbf's
session (wall_s.scheduler) and the rest (the replayer's turn). The figure
is the median of the per-pair ratios, with a 95% confidence interval of
that median (order statistics, distribution-free). With --old-rev, REV is
built in a temporary git worktree with the CMAKE_BUILD_TYPE of --bin's
build (FBF_BENCH=OFF), and the worktree is removed at the end. With
--callgrind, one run of each under valgrind's callgrind: instructions in
all (steadier than time on a shared machine), in the session
(fbf_bv4_session_handle, inclusive), per source directory and library,
and the functions that changed most.

render: the RESULTS.md section of each FILE; with --into, each replaces the
section of the same title in RESULTS.md, or goes where report.py puts it
(before the trace replays; tools/bench.sh's report.py renders them too when
they are in its results).
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

VARIANTS = (("v4", "v4: JSON over ZeroMQ"),
            ("v2", "v2: text over a Unix socket, jobs from Redis"),
            ("v4r", "v4 in Redis mode: ZeroMQ, jobs from Redis"))
STATS = re.compile(r"fastbf: (\d+) messages answered in ([0-9.]+) s \([0-9.]+ us each; "
                   r"the first in ([0-9.]+) s\) of ([0-9.]+) s served")
CYCLE = re.compile(r"^fastbf: \+([0-9.]+) s now ", re.M)
TITLE_PROTOCOLS = "Protocol cost per exchange: Batsim v2 text next to v4"
TITLE_BEFORE_AFTER = "In-process replay against an older build"


def die(msg):
    sys.exit(f"protocol_cost: {msg}")


def machine():
    info = {"cpu": "unknown", "nproc": os.cpu_count(), "kernel": platform.release()}
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            info["cpu"] = m.group(1) if m else "unknown"
    except OSError:
        pass
    try:
        info["nproc"] = int(subprocess.run(["nproc"], capture_output=True, text=True).stdout)
    except (OSError, ValueError):
        pass
    return info


def git(*args, cwd=None):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True).stdout.strip()


def provenance(bin_dir):
    """Commit of the tree that --bin was built from (its CMakeCache's source
    dir), tracked files modified there, the build type and the source dir."""
    src, btype = None, "?"
    try:
        with open(os.path.join(bin_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    src = line.split("=", 1)[1].strip()
                elif line.startswith("CMAKE_BUILD_TYPE:"):
                    btype = line.split("=", 1)[1].strip() or "(none)"
    except OSError:
        pass
    src = src or os.getcwd()
    dirty = git("status", "--porcelain", "-uno", cwd=src)
    return {"commit": git("rev-parse", "HEAD", cwd=src) or "unknown",
            "dirty": len(dirty.splitlines()) if dirty else 0, "build_type": btype,
            "src": os.path.realpath(src)}


def q(cmd):
    def one(a):
        if "'" in a and not re.search(r'["$`\\!]', a):
            return f'"{a}"'
        return shlex.quote(a)
    return " ".join(one(a) for a in cmd)


def pct(xs, p):
    """Nearest-rank percentile (as the replayer computes its own)."""
    s = sorted(xs)
    return s[max(0, math.ceil(p * len(s)) - 1)]


def median_ci(xs, level=0.95):
    """(low, high): distribution-free confidence interval of the median,
    from order statistics (binomial with p = 1/2)."""
    s, n = sorted(xs), len(xs)
    if n < 6:
        return s[0], s[-1]
    cdf, k = 0.0, 0
    # Largest k with P(B < k) <= (1 - level) / 2, B ~ Binomial(n, 1/2).
    for i in range(n + 1):
        nxt = cdf + math.comb(n, i) / 2 ** n
        if nxt > (1 - level) / 2:
            k = i
            break
        cdf = nxt
    k = max(k, 1)
    return s[k - 1], s[n - k]


# ------------------------------------------------------------------ protocols
def pinned(cmd, cpu):
    return (["taskset", "-c", str(cpu)] + cmd) if cpu is not None else cmd


class Redis:
    def __init__(self, port, pin=None):
        self.own = port is None
        if self.own:
            if not shutil.which("redis-server"):
                die("redis-server is missing (apt-get install redis-server), or give --redis-port")
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            s.close()
            subprocess.run(pinned(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                            "--save", "", "--appendonly", "no", "--daemonize", "yes"], pin),
                           check=True, capture_output=True)
        self.port = port
        for _ in range(100):
            if self.cli("ping") == "PONG":
                return
            time.sleep(0.05)
        die(f"no Redis server answers on port {port}")

    def cli(self, *args):
        r = subprocess.run(["redis-cli", "-p", str(self.port), *args], capture_output=True, text=True)
        return r.stdout.strip()

    def close(self):
        if self.own:
            self.cli("shutdown", "nosave")


def protocol_cmd(args, redis, variant, policy, out, log, verbose=False):
    fastbf = q([os.path.join(args.bin, "fastbf")])
    flag = "--verbose" if verbose else "--stats"
    # The scheduler, started by the replayer, inherits its CPU affinity.
    replay = pinned([os.path.join(args.bin, "fastbf-replay")], args.pin)
    if variant == "v4":
        return replay + [args.trace, "--quiet", "--out", out, "--scheduler",
                         f"{fastbf} --policy {policy} {flag} 2>{q([log])}"]
    if variant == "v4r":
        return replay + [args.trace, "--quiet", "--out", out, "--redis", f"127.0.0.1:{redis.port}",
                         "--scheduler", f"{fastbf} --policy {policy} {flag} 2>{q([log])}"]
    return replay + ["--protocol", "batsim2", "--redis", f"127.0.0.1:{redis.port}", "--scheduler",
                     f"{fastbf} --protocol batsim2 --policy {policy} {flag} "
                     f"--redis-port {redis.port} --socket {{socket}} 2>{q([log])}",
                     args.trace, "--quiet", "--out", out]


def protocol_run(args, redis, variant, policy, commands, verbose=False):
    redis.cli("flushall")
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "sched.log")
        cmd = protocol_cmd(args, redis, variant, policy, d, log, verbose)
        commands.append(q(cmd))
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        load = (load0, os.getloadavg()[0])
        if r.returncode != 0:
            die(f"{q(cmd)} exited {r.returncode}: {r.stderr.strip()[-2000:]}")
        with open(os.path.join(d, "summary.json")) as f:
            s = json.load(f)
        with open(log) as f:
            text = f.read()
    done, total = s["jobs"]["done"], s["jobs"]["in_workload"]
    if done != total:
        die(f"{variant} {policy}: the replay ended with {done} of {total} jobs done")
    if verbose:
        t = [float(x) for x in CYCLE.findall(text)]
        c = [b - a for a, b in zip(t, t[1:])]
        if not c:
            die(f"{variant} {policy}: fastbf --verbose printed no +T lines")
        return {"cycles": len(c), "p50": pct(c, 0.5), "p90": pct(c, 0.9), "p99": pct(c, 0.99),
                "mean": statistics.fmean(c), "replay_p50": s["latency_s"]["p50"], "load": load}
    m = STATS.search(text)
    if not m:
        die(f"{variant} {policy}: fastbf --stats printed no figures")
    return {"wall_s": wall, "load": load, "exchanges": s["exchanges"], "latency_s": s["latency_s"],
            "replay_wall_s": s["wall_s"], "messages": int(m.group(1)),
            "handling_s": float(m.group(2)), "first_s": float(m.group(3)),
            "served_s": float(m.group(4)),
            "handling_per_msg_s": float(m.group(2)) / int(m.group(1))}


def protocols(args):
    policies = args.policies.split(",")
    redis = Redis(args.redis_port, args.pin)
    # The bare ZeroMQ round trip now, under the same pinning: the floor of v4.
    echo = subprocess.run(pinned([os.path.join(args.bin, "fastbf-replay"), "--echo-bench", "20000"],
                                 args.pin), capture_output=True, text=True).stdout.strip()
    print(echo, flush=True)
    commands, res = [], {p: {v: [] for v, _ in VARIANTS} for p in policies}
    cycles = {p: {v: [] for v, _ in VARIANTS} for p in policies}
    try:
        for rnd in range(args.runs):
            for p in policies:
                order = [v for v, _ in VARIANTS]
                k = rnd % len(order)
                for v in order[k:] + order[:k]:
                    r = protocol_run(args, redis, v, p, commands)
                    r["round"] = rnd
                    res[p][v].append(r)
                    # The same again with --verbose: the full cycles.
                    c = protocol_run(args, redis, v, p, commands, verbose=True)
                    c["round"] = rnd
                    cycles[p][v].append(c)
                    lat = r["latency_s"]
                    print(f"round {rnd + 1} {p:12} {v:3}: p50 {lat['p50'] * 1e6:6.1f} us, "
                          f"p99 {lat['p99'] * 1e6:6.1f} us, mean {lat['mean'] * 1e6:6.1f} us; "
                          f"fastbf {r['handling_per_msg_s'] * 1e6:5.2f} us/message; "
                          f"wall {r['wall_s']:.2f} s; verbose: cycle p50 {c['p50'] * 1e6:.0f} "
                          f"us, p90 {c['p90'] * 1e6:.0f} us; load {r['load'][1]:.2f}",
                          flush=True)
    finally:
        redis.close()
    rv = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.strip()
    report = {"kind": "protocols", "trace": os.path.basename(args.trace), "runs": args.runs,
              "policies": policies, "machine": machine(), "build": provenance(args.bin),
              "bin": args.bin, "redis": rv, "pin": args.pin, "echo": echo,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "command": q(sys.argv),
              "results": res, "cycles": cycles, "commands": commands}
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print("\n".join(render(report)))


# --------------------------------------------------------------- before-after
def build_rev(rev, btype, tmp):
    root = git("rev-parse", "--show-toplevel")
    wt = os.path.join(tmp, "tree")
    subprocess.run(["git", "-C", root, "worktree", "add", "--detach", wt, rev], check=True,
                   capture_output=True)
    bdir = os.path.join(wt, "build")
    subprocess.run(["cmake", "-S", wt, "-B", bdir, f"-DCMAKE_BUILD_TYPE={btype}", "-DFBF_BENCH=OFF"],
                   check=True, capture_output=True)
    subprocess.run(["cmake", "--build", bdir, f"-j{os.cpu_count() or 1}", "--target", "fastbf-replay"],
                   check=True, capture_output=True)
    return root, wt, bdir


def inproc_cmd(bin_dir, args, out=None):
    return [os.path.join(bin_dir, "fastbf-replay"), args.trace, "--inproc", "--policy",
            args.policy, "--quiet"] + (["--out", out] if out else [])


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        die(f"{q(cmd)} exited {r.returncode}: {r.stderr.strip()[-2000:]}")
    return wall


def inproc_out(bin_dir, args, keep_csv=False):
    """One run with --out: the summary's split of the replay loop (and
    out_jobs.csv)."""
    with tempfile.TemporaryDirectory() as d:
        wall = timed(inproc_cmd(bin_dir, args, d))
        with open(os.path.join(d, "summary.json")) as f:
            s = json.load(f)
        csv = open(os.path.join(d, "out_jobs.csv")).read() if keep_csv else None
    return {"wall_out_s": wall, "total_s": s["wall_s"]["total"],
            "session_s": s["wall_s"]["scheduler"], "replayer_s": s["wall_s"]["replayer"],
            "exchanges": s["exchanges"]}, csv


def callgrind(bin_dir, args, root_of):
    """(instructions in all, in the session, per source file) of one run."""
    with tempfile.TemporaryDirectory() as d:
        cg = os.path.join(d, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}"] + \
            inproc_cmd(bin_dir, args)
        subprocess.run(cmd, check=True, capture_output=True)
        ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no", "--threshold=100", cg],
                             check=True, capture_output=True, text=True).stdout
        exc = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", cg],
                             check=True, capture_output=True, text=True).stdout
    num = lambda s: int(s.replace(",", ""))  # noqa: E731
    total = num(re.search(r"^\s*([0-9,]+).*PROGRAM TOTALS", exc, re.M).group(1))
    m = re.search(r"^\s*([0-9,]+) .*:fbf_bv4_session_handle\b", ann, re.M)
    session = num(m.group(1)) if m else None
    files, funcs = {}, {}
    for line in exc.splitlines():
        m = re.match(r"^\s*([0-9,]+) \(\s*[0-9.]+%\)\s+(\S.*?):(\S+)(?: \[(.*)\])?$", line)
        if not m:
            continue
        ir, path, fn, obj = num(m.group(1)), m.group(2), m.group(3), m.group(4) or ""
        # The program's own code by source file, the rest by library.
        lib = os.path.basename(obj).split(".so")[0]
        path = root_of(path) if not obj or lib.startswith("fastbf") else f"[{lib}]"
        files[path] = files.get(path, 0) + ir
        funcs[f"{path}:{fn}"] = funcs.get(f"{path}:{fn}", 0) + ir
    return {"total": total, "session": session, "files": files, "functions": funcs}


def before_after(args):
    tmp = tempfile.mkdtemp(prefix="fbf-before-")
    wt = root = None
    prov_new = provenance(args.bin)
    try:
        if args.old_rev:
            root, wt, old = build_rev(args.old_rev, prov_new["build_type"], tmp)
            prov_old = {"commit": git("rev-parse", "HEAD", cwd=wt), "dirty": 0,
                        "build_type": prov_new["build_type"], "src": os.path.realpath(wt)}
        else:
            old = args.old_bin
            prov_old = provenance(old)
        builds = {"old": old, "new": args.bin}
        # One unmeasured run of each (page cache, the trace's file), and
        # the same decisions from both.
        _, csv_old = inproc_out(old, args, keep_csv=True)
        _, csv_new = inproc_out(args.bin, args, keep_csv=True)
        same = sorted(csv_old.splitlines()) == sorted(csv_new.splitlines())
        pairs = []
        for i in range(args.pairs):
            order = ("old", "new") if i % 2 == 0 else ("new", "old")
            # The command as given (wall time), then both again with --out.
            r = {b: {"wall_s": timed(inproc_cmd(builds[b], args))} for b in order}
            for b in order:
                r[b].update(inproc_out(builds[b], args)[0])
            p = {"first": order[0], "old": r["old"], "new": r["new"]}
            for k in ("wall_s", "wall_out_s", "total_s", "session_s", "replayer_s"):
                p[f"ratio_{k}"] = r["new"][k] / r["old"][k]  # new / old time
            pairs.append(p)
            print(f"pair {i + 1:2} ({order[0]} first): wall old {r['old']['wall_s']:.3f} s, new "
                  f"{r['new']['wall_s']:.3f} s, new/old {p['ratio_wall_s']:.3f}; session "
                  f"new/old {p['ratio_session_s']:.3f}, replayer {p['ratio_replayer_s']:.3f}",
                  flush=True)
        cg = None
        if args.callgrind:
            roots = [prov_old["src"], prov_new["src"]]

            def root_of(path):
                for rt in roots:
                    if path.startswith(rt + "/"):
                        return path[len(rt) + 1:]
                return path
            cg = {b: callgrind(builds[b], args, root_of) for b in ("old", "new")}
            print(f"callgrind: old {cg['old']['total']:,} instructions, new "
                  f"{cg['new']['total']:,} ({cg['new']['total'] / cg['old']['total']:.4f})")
    finally:
        if wt:
            subprocess.run(["git", "-C", root, "worktree", "remove", "--force", wt],
                           capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    report = {"kind": "before-after", "trace": os.path.basename(args.trace), "policy": args.policy,
              "machine": machine(), "new": prov_new, "old": prov_old,
              "old_rev": args.old_rev, "label": args.label, "same_out_jobs": same,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "command": q(sys.argv),
              "run": q(inproc_cmd("BUILD", args)),
              "pairs": pairs, "callgrind": cg}
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print("\n".join(render(report)))


# --------------------------------------------------------------------- render
def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return out


def us(s):
    return f"{s * 1e6:.1f} µs" if s is not None else "—"


def ratio_cell(xs):
    if not xs:
        return "—"
    if len(xs) == 1:
        return f"{xs[0]:.2f}"
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"


def machine_line(d):
    m = d["machine"]
    return f"{m['cpu']}, nproc {m['nproc']}, kernel {m['kernel']}"


def build_line(b):
    dirty = f" (+{b['dirty']} locally modified tracked files)" if b.get("dirty") else ""
    return b["commit"][:10] + dirty


def render_protocols(d):
    pin = d.get("pin")
    where = f" (every process on CPU {pin})" if pin is not None else ""
    out = [f"## {TITLE_PROTOCOLS}{where}\n"]
    res, pols = d["results"], d["policies"]
    out.append(
        f"{d['trace']} replayed with fastbf as a separate process under each policy, over the "
        f"three transports below, {d['runs']} rounds (each round runs every policy under the "
        f"three, in an order rotated from round to round; ratios are taken within a round, "
        f"between runs seconds apart): {d['runs']} runs of each policy and protocol with "
        f"`fastbf --stats`, each followed by one with `fastbf --verbose`. Written by "
        f"`{d['command']}` on {d['date']}: "
        f"{machine_line(d)}; build {build_line(d['build'])} ({d['build']['build_type']}); "
        f"{d['redis']}.\n")
    if pin is not None:
        out.append(f"Every process of a run on CPU {pin} (`taskset -c {pin}` on the replayer, "
                   f"whose child fastbf inherits it, and on the redis-server): each exchange "
                   f"then costs context switches on one CPU instead of waking the other, which "
                   f"takes the scheduling of the machine out of the comparison.\n")
    if d.get("echo"):
        out.append(f"The bare ZeroMQ round trip at the start, the same way (`fastbf-replay "
                   f"--echo-bench 20000`): `{d['echo']}`\n")
    out.append("- *v4*: `fastbf-replay TRACE --scheduler \"fastbf --policy P --stats\"` "
               "(Batsim v4 JSON over ZeroMQ, loopback TCP; jobs in the messages).")
    out.append("- *v2*: `fastbf-replay --protocol batsim2 --redis 127.0.0.1:PORT --scheduler "
               "\"fastbf --protocol batsim2 --policy P --stats --redis-port PORT --socket "
               "{socket}\" TRACE` (Batsim v2 text over a Unix socket; fastbf reads each "
               "submitted job from Redis).")
    out.append("- *v4 + Redis*: `fastbf-replay TRACE --redis 127.0.0.1:PORT --scheduler "
               "\"fastbf --policy P --stats\"` (v4 over ZeroMQ in Redis mode: fastbf reads each "
               "submitted job from Redis, as in v2), which separates what the transport and "
               "codec cost from what Redis costs.")
    out.append("- *latency*: the replayer's per-exchange latency (send to reply, "
               "`summary.json`), the median over the rounds of each run's percentile; "
               "*fastbf*: fastbf's own time answering one message (`fastbf --stats`: "
               "\"N messages answered in X s\", X / N), median over the rounds; *wall*: the "
               "replay process, start to exit, median.\n")
    rows = []
    for p in pols:
        for v, name in VARIANTS:
            rs = res[p][v]
            med = lambda f: statistics.median(f(r) for r in rs)  # noqa: E731
            has90 = all("p90" in r["latency_s"] for r in rs)
            rows.append([p, name, f"{med(lambda r: r['exchanges']):,.0f}",
                         us(med(lambda r: r["latency_s"]["p50"])),
                         us(med(lambda r: r["latency_s"]["p90"])) if has90 else "—",
                         us(med(lambda r: r["latency_s"]["p99"])),
                         us(med(lambda r: r["latency_s"]["mean"])),
                         us(med(lambda r: r["handling_per_msg_s"])),
                         f"{med(lambda r: r['wall_s']):.2f} s"])
    out += table(["policy", "protocol", "exchanges", "latency p50", "latency p90", "latency p99",
                  "latency mean", "fastbf per message", "wall"], rows)
    if not any(r[4] != "—" for r in rows):
        out.append("\nThe replayer's summary gives no p90 (p50, p99, mean and max); the "
                   "cycle table below gives one from fastbf's log.")
    if all(res[p]["v4"][0]["exchanges"] - res[p]["v2"][0]["exchanges"] == 1 for p in pols):
        out.append("\nv2 makes one exchange fewer: as in Batsim v2, Z comes in the message "
                   "that ends the last job, where v4 sends SIMULATION_ENDS alone.")
    out.append("\nRatios within each round (median over the rounds, min–max in brackets):\n")

    def ratios(p, a, b, f):
        by = {r["round"]: r for r in res[p][b]}
        return [f(r) / f(by[r["round"]]) for r in res[p][a] if r["round"] in by]
    rows = []
    for p in pols:
        for a, b, what in (("v2", "v4", "v2 / v4"), ("v4r", "v4", "v4 + Redis / v4"),
                           ("v2", "v4r", "v2 / v4 + Redis")):
            rows.append([p, what,
                         ratio_cell(ratios(p, a, b, lambda r: r["latency_s"]["p50"])),
                         ratio_cell(ratios(p, a, b, lambda r: r["latency_s"]["p99"])),
                         ratio_cell(ratios(p, a, b, lambda r: r["latency_s"]["mean"])),
                         ratio_cell(ratios(p, a, b, lambda r: r["handling_per_msg_s"])),
                         ratio_cell(ratios(p, a, b, lambda r: r["wall_s"]))])
    out += table(["policy", "ratio", "latency p50", "latency p99", "latency mean",
                  "fastbf per message", "wall"], rows)
    cy = d.get("cycles") or {}
    if cy:
        out.append("\nFull cycle of each exchange, from a second run of each in every round, "
                   "right after the first, with `fastbf --verbose` instead of `--stats`: the "
                   "difference between consecutive +T stamps of fastbf's log (fastbf, the "
                   "transport both ways and the replayer's turn; the stamps have 1 µs steps, "
                   "and writing the log line adds a few µs to each). Medians over the rounds "
                   "of each run's percentile; *replayer p50* is the same runs' latency p50 "
                   "from their summaries. The ratio rows are medians of the per-round "
                   "ratios.\n")
        rows = []

        def cyc(p, v, k):
            return statistics.median(c[k] for c in cy[p][v])
        keys = ("p50", "p90", "p99", "mean", "replay_p50")
        for p in pols:
            for v, name in VARIANTS:
                rows.append([p, name, f"{cyc(p, v, 'cycles'):,.0f}"] +
                            [us(cyc(p, v, k)) for k in keys])
            for a, b, what in (("v2", "v4", "v2 / v4"), ("v2", "v4r", "v2 / v4 + Redis")):
                by = {c["round"]: c for c in cy[p][b]}
                rows.append([p, f"**{what}**", ""] + [
                    f"**{statistics.median(c[k] / by[c['round']][k] for c in cy[p][a]):.2f}**"
                    for k in keys])
        out += table(["policy", "protocol", "cycles", "cycle p50", "cycle p90", "cycle p99",
                      "cycle mean", "replayer p50"], rows)
    loads = [r["load"][1] for p in pols for v, _ in VARIANTS for r in res[p][v] if "load" in r]
    if loads:
        out.append(f"\nLoad average (1 min) at the end of the runs: median {statistics.median(loads):.2f}, "
                   f"{min(loads):.2f}–{max(loads):.2f}, on {d['machine']['nproc']} CPUs.")
    out.append("")
    return out


def render_before_after(d):
    out = [f"## {TITLE_BEFORE_AFTER}\n"]
    pairs, n = d["pairs"], len(d["pairs"])
    old = f"{d['old']['commit'][:10]}" + (f" (`--old-rev {d['old_rev']}`)" if d.get("old_rev") else "")
    label = f", {d['label']}," if d.get("label") else ""
    out.append(
        f"`{d['run']}` ({d['trace']}, {d['policy']}) with the build of {old}{label} "
        f"against the build of {build_line(d['new'])}, both "
        f"{d['new']['build_type']}, in {n} pairs run back to back (the older first in odd "
        f"pairs, second in even ones; one unmeasured run of each before). Written by "
        f"`{d['command']}` on {d['date']}: {machine_line(d)}. Both builds wrote the same "
        f"out_jobs.csv: {'yes' if d['same_out_jobs'] else '**NO**'}.\n")
    out.append("*wall*: the command above, start to exit (reading the trace included). "
               "Each pair then runs both again with `--out DIR` (*wall with --out*: "
               "writing out_jobs.csv adds about a third), whose `summary.json` splits the "
               "replay loop: *session*, the time in fastbf's session, in process "
               "(wall_s.scheduler, the sum of the exchanges), and *replayer*, the rest of "
               "the loop (wall_s.replayer). Ratios new / old time per pair; the median's 95% "
               "confidence interval from order statistics. The replayer's own code may "
               "differ between the two builds too, so *session* is the figure of fastbf's "
               "side.\n")
    rows = []
    for k, what in (("wall_s", "wall"), ("wall_out_s", "wall with --out"),
                    ("total_s", "replay loop (session + replayer)"), ("session_s", "session"),
                    ("replayer_s", "replayer")):
        if any(f"ratio_{k}" not in p for p in pairs):
            continue
        rs = [p[f"ratio_{k}"] for p in pairs]
        lo, hi = median_ci(rs)
        mo = statistics.median(p["old"][k] for p in pairs)
        mn = statistics.median(p["new"][k] for p in pairs)
        rows.append([what, f"{mo * 1e3:.1f} ms", f"{mn * 1e3:.1f} ms",
                     f"**{statistics.median(rs):.3f}**", f"{lo:.3f}–{hi:.3f}",
                     f"{min(rs):.3f}–{max(rs):.3f}", f"{statistics.median(1 / r for r in rs):.3f}"])
    out += table(["time", "old (median)", "new (median)", "new / old (median pair)",
                  "95% CI of the median", "min–max", "speed old / new (median)"], rows)
    ws = [p["ratio_wall_s"] for p in pairs]
    ss = [p["ratio_session_s"] for p in pairs]
    speed, (lo, hi) = statistics.median(1 / r for r in ws), median_ci([1 / r for r in ws])
    sspeed, (slo, shi) = statistics.median(1 / r for r in ss), median_ci([1 / r for r in ss])

    def verdict(s, lo, hi):
        if s >= 1.0:
            return "met"
        if hi >= 1.0:
            return "met within noise (the interval holds 1.0)"
        return "**NOT met** (the whole interval is below 1.0)"
    out.append(f"\n**Target** (not slower: speed ratio old / new >= 1.0 within noise): wall "
               f"{speed:.3f} (95% CI {lo:.3f}–{hi:.3f}): {verdict(speed, lo, hi)}; session "
               f"{sspeed:.3f} ({slo:.3f}–{shi:.3f}): {verdict(sspeed, slo, shi)}.")
    cg = d.get("callgrind")
    if cg:
        o, nw = cg["old"], cg["new"]
        out.append(f"\nInstructions, one run of each under callgrind (`valgrind --tool=callgrind "
                   f"{d['run']}`):\n")
        rows = [["whole run", f"{o['total']:,}", f"{nw['total']:,}",
                 f"{nw['total'] / o['total']:.4f}"]]
        if o.get("session") and nw.get("session"):
            rows.append(["session (fbf_bv4_session_handle, inclusive)", f"{o['session']:,}",
                         f"{nw['session']:,}", f"{nw['session'] / o['session']:.4f}"])
        rows.append(["per exchange, whole run",
                     f"{o['total'] / pairs[0]['old']['exchanges']:,.0f}",
                     f"{nw['total'] / pairs[0]['new']['exchanges']:,.0f}", ""])

        def group(path):
            if path.startswith("["):
                return path
            for pre in ("io/", "engine/", "policies/", "tools/replay/", "tools/lib/"):
                if path.startswith(pre):
                    return pre
            return "other"
        go, gn = {}, {}
        for src, dst in ((o["files"], go), (nw["files"], gn)):
            for path, ir in src.items():
                dst[group(path)] = dst.get(group(path), 0) + ir
        # What is under 0.1% of the run in both, as one row.
        small = {g for g in set(go) | set(gn)
                 if go.get(g, 0) < o["total"] / 1000 and gn.get(g, 0) < nw["total"] / 1000}
        for src in (go, gn):
            for g in small & set(src):
                src["the rest"] = src.get("the rest", 0) + src.pop(g)
        for g in sorted(set(go) | set(gn), key=lambda g: (g == "the rest", -gn.get(g, 0))):
            a, b = go.get(g, 0), gn.get(g, 0)
            rows.append([f"code: {g}", f"{a:,}", f"{b:,}", f"{b / a:.4f}" if a else "—"])
        out += table(["", "old", "new", "new / old"], rows)
        # The functions whose instructions changed the most.
        fo, fn = o["functions"], nw["functions"]
        diff = sorted(((fn.get(k, 0) - fo.get(k, 0), k) for k in set(fo) | set(fn)),
                      key=lambda x: -abs(x[0]))[:12]
        out.append("\nThe functions whose instruction counts changed the most (exclusive, "
                   "by source file and name; a function renamed or moved shows as one gone "
                   "and one new):\n")
        out += table(["function", "old", "new", "new − old"],
                     [[f"`{k}`", f"{fo.get(k, 0):,}", f"{fn.get(k, 0):,}", f"{dv:+,}"]
                      for dv, k in diff])
    out.append("")
    return out


def render(d):
    return render_protocols(d) if d["kind"] == "protocols" else render_before_after(d)


def splice(path, sections):
    with open(path) as f:
        text = f.read()
    for sec in sections:
        title = sec[0].strip()
        body = "\n".join(sec).rstrip("\n") + "\n\n"
        m = re.search(rf"^{re.escape(title)}\n.*?(?=^## |\Z)", text, re.M | re.S)
        if m:
            text = text[:m.start()] + body + text[m.end():]
        else:
            # Where report.py puts them: after the replayer's throughput.
            m = (re.search(r"^## Trace replay", text, re.M) or
                 re.search(r"^## Commands run$", text, re.M))
            at = m.start() if m else len(text)
            text = text[:at] + body + text[at:]
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    a = sub.add_parser("protocols")
    a.add_argument("--bin", required=True, help="folder with fastbf and fastbf-replay")
    a.add_argument("--trace", required=True)
    a.add_argument("--policies", default="fcfs,easy,conservative")
    a.add_argument("--runs", type=int, default=5)
    a.add_argument("--redis-port", type=int, default=None)
    a.add_argument("--pin", type=int, default=None, metavar="CPU",
                   help="run every process (replayer, fastbf, our redis-server) on CPU")
    a.add_argument("--out", required=True)
    b = sub.add_parser("before-after")
    b.add_argument("--bin", required=True, help="folder with the newer fastbf-replay")
    g = b.add_mutually_exclusive_group(required=True)
    g.add_argument("--old-rev", help="git revision to build in a temporary worktree")
    g.add_argument("--old-bin", help="folder with the older fastbf-replay")
    b.add_argument("--trace", required=True)
    b.add_argument("--policy", default="fcfs")
    b.add_argument("--pairs", type=int, default=21)
    b.add_argument("--callgrind", action="store_true")
    b.add_argument("--label", help="what the older build is, for the report")
    b.add_argument("--out", required=True)
    r = sub.add_parser("render")
    r.add_argument("files", nargs="+")
    r.add_argument("--into", help="RESULTS.md to put the sections in")
    args = ap.parse_args()
    if args.what == "protocols":
        if args.runs < 1:
            die("--runs must be at least 1")
        protocols(args)
    elif args.what == "before-after":
        if args.pairs < 1:
            die("--pairs must be at least 1")
        before_after(args)
    else:
        secs = []
        for path in args.files:
            with open(path) as f:
                secs.append(render(json.load(f)))
        if args.into:
            splice(args.into, secs)
        else:
            print("\n".join("\n".join(s) for s in secs))


if __name__ == "__main__":
    main()

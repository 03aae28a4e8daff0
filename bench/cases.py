"""The cases of a bench run (tools/bench.sh's RESULTS_DIR/cases/) and the
figures report.py takes from them: latency percentiles (one run's, the
median over repeated runs, or fastbf's log for a run over its limit),
ratios between cases (paired by round when bench.sh ran them in rounds),
memory held per pending job and the policy's work counters.
"""
import glob
import json
import os
import statistics


def load_cases(res):
    cases = []
    for d in sorted(glob.glob(os.path.join(res, "cases", "*"))):
        kind, wl, pol, tr, w = os.path.basename(d).split("~")
        with open(os.path.join(d, "case.json")) as f:
            c = json.load(f)
        c.update(kind=kind, workload=wl, policy=pol, transport=tr, workers=int(w))
        c["depth"] = int(wl) if kind in ("deep", "held") else None
        hf = os.path.join(d, "hyperfine.json")
        if os.path.exists(hf):
            with open(hf) as f:
                r = json.load(f)["results"][0]
            c["wall"] = (r["mean"], r["stddev"], len(r["times"]))
        elif c["status"] == "ok":
            c["wall"] = (c["elapsed_s"], None, 1)
        s = c.get("summary")
        # Plain runs that wrote their own summary (bench.sh paired_rounds):
        # with the instrumented run's, the latency percentiles of every run.
        reps = [(os.path.basename(r)[4:], os.path.join(r, "summary.json"))
                for r in sorted(glob.glob(os.path.join(d, "rep.*")))]
        reps = [(tag, json.load(open(f))["latency_s"]) for tag, f in reps if os.path.exists(f)]
        if s and reps:
            c["lat_runs"] = {k: [s["latency_s"][k]] + [r[k] for _, r in reps] for k in ("p50", "p99")}
            # bench.sh paired_rounds: rep.ROUND, the instrumented run being
            # round 0 (the cases of one depth and policy run back to back).
            c["lat_rounds"] = {0: s["latency_s"]["p50"]}
            c["lat_rounds"].update({int(t): r["p50"] for t, r in reps if t.isdigit()})
            # The longest exchange of a deep run is its submission burst.
            c["burst_rounds"] = {0: s["latency_s"]["max"]}
            c["burst_rounds"].update({int(t): r["max"] for t, r in reps if t.isdigit()})
        if kind == "deep" or (not s and c["status"] == "over"):
            # fastbf's log: the mean exchange after the submission burst
            # (a deep run's burst would swamp a mean over K exchanges).
            c["per_exchange"] = c.get("progress", {}).get("s_per_exchange_after_burst")
        elif s:
            c["per_exchange"] = s["wall_s"]["scheduler"] / max(1, s["exchanges"])
        cases.append(c)
    return cases


def wall_of(c):
    return c["wall"][0] if c and c.get("wall") else None


def lat_of(c, key):
    """(seconds, from_log) of a deep case's latency percentile key ("p50",
    "p99"): the replayer's (summary.json) when the run completed, else the
    times of the exchanges after the burst in fastbf's log (†)."""
    if not c:
        return None, False
    if c.get("lat_runs"):
        return statistics.median(c["lat_runs"][key]), False
    if c.get("summary"):
        return c["summary"]["latency_s"][key], False
    v = c.get("progress", {}).get(f"{key}_after_burst")
    return (v, True) if v else (None, False)


def held_per_job(c):
    """Bytes fastbf held per waiting job at the end of a deep run (run_case's
    "held": settled RSS at SIMULATION_ENDS minus at the start), or None."""
    h = c and c.get("held")
    if not h or h["start_kib"] < 0 or h["waiting"] <= 0:
        return None
    return (h["end_kib"] - h["start_kib"]) * 1024 / h["waiting"]


def held_at(idx, n, p):
    """(bytes held per waiting job at depth n under p, from the burst-only
    run?): the deep run's figure, else that of the run of the burst alone
    (bench.sh runs one when the deep run is over its limit)."""
    h = held_per_job(idx.get(("deep", str(n), p, "socket", 1)))
    if h:
        return h, False
    h = held_per_job(idx.get(("held", str(n), p, "socket", 1)))
    return (h, True) if h else (None, False)


def lat_ratio(a, b, key):
    """a's latency percentile over b's, both from the same source: the
    replayer's when both completed, else fastbf's logs."""
    if not a or not b:
        return None
    if a.get("summary") and b.get("summary"):
        x, y = lat_of(a, key)[0], lat_of(b, key)[0]
    else:
        x = a.get("progress", {}).get(f"{key}_after_burst")
        y = b.get("progress", {}).get(f"{key}_after_burst")
    return x / y if x and y else None


def paired_ratio(a, b, key="lat_rounds"):
    """(median, min, max, rounds) of a's p50 (key "burst_rounds": longest
    exchange) over b's taken in the same round (bench.sh paired_rounds), or
    None without two common rounds."""
    ra, rb = (a or {}).get(key, {}), (b or {}).get(key, {})
    r = [ra[k] / rb[k] for k in ra if k in rb and rb[k] > 0]
    return (statistics.median(r), min(r), max(r), len(r)) if len(r) >= 2 else None


def work_of(c):
    """The policy's work counters of a case: summary.json (in process) or
    fastbf's log (over the socket)."""
    if not c:
        return None
    return c.get("summary", {}).get("scheduler_work") or c.get("work")

#!/usr/bin/env python3
"""`weft --stats[=json|prom]` and `--trace=FILE` (docs/tasks.md "Telemetry"): the three
renderings of the telemetry document agree on names and 0-based worker numbers, the JSON
follows its documented schema, the Prometheus text is well formed, the trace is Chrome
trace-event JSON with one track per worker, and everything is also written when the
program ends through os.exit."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# 64 tasks, each run again at least 10 times (a receive need not wait, a yield always
# ends a dispatch), and a few timers, on 2 workers.
SCRIPT = """
local ch, done = task.channel(), task.channel(64)
for i = 1, 64 do task.spawn(function() for _ = 1, 10 do ch:recv() task.yield() end done:send(i) end) end
for _ = 1, 640 do ch:send(true) end
for _ = 1, 64 do done:recv() end
for _ = 1, 5 do task.sleep(0.001) end
print("done")
"""

WORKER_FIELDS = ["worker", "tasks_run", "migrations", "steals_from_injection", "parks", "wakeups",
                 "budget_exhaustions", "queue_depth", "queue_depth_max", "spawns_retargeted", "gc_pauses", "gc_pause_total_us",
                 "gc_pause_max_us", "steals_from"]
HISTOGRAM_FIELDS = ["count", "sum_us", "p50_us", "p99_us", "max_us", "bounds_us", "counts"]


def fail(what, detail=""):
    sys.exit(f"telemetry.py: {what}\n{detail}")


def run(weft, args, script=SCRIPT, code=0):
    proc = subprocess.run([weft, "--workers", "2", *args, "-e", script], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != code:
        fail(f"{args}: exit status {proc.returncode}, expected {code}", proc.stderr)
    return proc


def check_json(weft):
    proc = run(weft, ["--stats=json"])
    if proc.stdout != "done\n":
        fail("--stats=json changed standard output", proc.stdout)
    doc = json.loads(proc.stderr)
    if doc["version"] != 1 or list(doc) != ["version", "workers", "host_tasks_run", "ready_delay", "timer_lateness", "blocking_wait",
                                            "blocking_pool", "gc"]:
        fail("the document's top level", proc.stderr)
    if [w["worker"] for w in doc["workers"]] != [0, 1]:
        fail("workers are numbered from 0", proc.stderr)
    for w in doc["workers"]:
        if list(w) != WORKER_FIELDS:
            fail("a worker's fields", json.dumps(w))
    if sum(w["tasks_run"] for w in doc["workers"]) + doc["host_tasks_run"] < 64 * 10:
        fail("every dispatch is counted", proc.stderr)
    for name in ("ready_delay", "timer_lateness", "blocking_wait"):
        h = doc[name]
        if list(h) != HISTOGRAM_FIELDS or len(h["counts"]) != len(h["bounds_us"]) + 1:
            fail(f"{name}: the histogram's shape", json.dumps(h))
        if sum(h["counts"]) != h["count"]:
            fail(f"{name}: the buckets hold every record", json.dumps(h))
    if doc["ready_delay"]["count"] < 20 or doc["timer_lateness"]["count"] < 5:
        fail("the histograms record the script's publications and timers", proc.stderr)
    if list(doc["blocking_pool"]) != ["size", "threads", "busy", "queued", "queue_depth_max", "jobs_run", "panics"]:
        fail("the blocking_pool section", proc.stderr)
    if list(doc["gc"]) != ["minor", "major", "slice", "incremental_cycles", "promoted_bytes", "copied_bytes",
                           "major_markers", "major_helper_swept_chunks"]:
        fail("the gc section", proc.stderr)
    return doc


def check_text(weft):
    err = run(weft, ["--stats"]).stderr
    lines = err.splitlines()
    if lines[0] != "weft stats: 2 workers":
        fail("the text's first line", err)
    columns = lines[1].split()
    if columns != ["worker"] + WORKER_FIELDS[1:-1]:
        fail("the text's columns are the document's names", lines[1])
    if [ln.split()[0] for ln in lines[2:4]] != ["0", "1"]:
        fail("the text numbers workers from 0", err)
    for label in ("ready_delay", "timer_lateness", "blocking_wait", "blocking", "minor", "major", "slice"):
        if not any(ln.split()[:1] == [label] for ln in lines):
            fail(f"the text has a {label} row", err)


SAMPLE = re.compile(r'^([a-z_]+)(\{[a-z]+="[^"]*"(,[a-z]+="[^"]*")*\})? (\S+)$')


def check_prometheus(weft):
    err = run(weft, ["--stats=prom"]).stderr
    typed = {}
    seen_families = []
    for line in err.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            if name in typed:
                fail(f"{name} is declared twice", err)
            typed[name] = kind
            seen_families.append(name)
            continue
        m = SAMPLE.match(line)
        if not m:
            fail(f"not a sample line: {line!r}", err)
        name, value = m.group(1), float(m.group(4))
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in typed else name
        if family != seen_families[-1]:
            fail(f"{name} is outside its family's block", err)
        if typed[family] == "counter" and not family.endswith("_total"):
            fail(f"the counter {family} does not end in _total", err)
        if value < 0:
            fail(f"{line!r} is negative", err)
    for family in ("weft_tasks_run_total", "weft_ready_delay_seconds", "weft_timer_lateness_seconds",
                   "weft_blocking_wait_seconds", "weft_blocking_pool_queued", "weft_gc_collections_total"):
        if family not in typed:
            fail(f"{family} is missing", err)
    if 'weft_tasks_run_total{worker="0"}' not in err or 'le="+Inf"' not in err:
        fail("workers are labelled from 0 and histograms end at +Inf", err)


def check_trace(weft):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.json")
        run(weft, [f"--trace={path}"])
        with open(path) as f:
            doc = json.load(f)
    events = doc["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    if names != {"worker 0", "worker 1", "main thread"}:
        fail("one named track per worker and one for the main thread", json.dumps(events[:4]))
    spans = [e for e in events if e["ph"] == "X"]
    tasks = {e["args"]["task"] for e in spans}
    if len(tasks) < 64 or len(spans) < 64 * 10:
        fail(f"a span per dispatch: {len(spans)} spans of {len(tasks)} tasks")
    for tid in (0, 1):
        track = sorted((e["ts"], e["dur"]) for e in spans if e["tid"] == tid)
        for (t0, d0), (t1, _) in zip(track, track[1:]):
            if t0 + d0 > t1 + 0.001:
                fail(f"worker {tid} runs two spans at once: {t0}+{d0} > {t1}")
    ends = {e["args"]["end"] for e in spans}
    if not {"suspended", "completed"} <= ends:
        fail("spans say how they ended", str(ends))
    if doc["otherData"] != {"version": "weft-trace/1", "dropped": 0}:
        fail("the trace's metadata", json.dumps(doc["otherData"]))


def check_exit(weft):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.json")
        proc = run(weft, ["--stats=json", f"--trace={path}"], script=SCRIPT + "os.exit(7)", code=7)
        if json.loads(proc.stderr)["version"] != 1:
            fail("os.exit prints the stats", proc.stderr)
        with open(path) as f:
            json.load(f)
        proc = run(weft, [f"--trace={tmp}/missing/t.json"], script="print(1)")
        if proc.stdout != "1\n" or "cannot open" not in proc.stderr:
            fail("an unwritable trace file is reported, and the program's status kept", proc.stderr)


def check_options(weft):
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "s.lua")
        with open(script, "w") as f:
            f.write("print('ran', ...)\n")
        proc = subprocess.run([weft, "--stats", script, "x"], capture_output=True, text=True, timeout=60)
        if proc.stdout != "ran\tx\n" or "weft stats:" not in proc.stderr:
            fail("a bare --stats takes no value: the next argument is the script", proc.stdout + proc.stderr)
    proc = subprocess.run([weft, "--stats=xml", "-e", ""], capture_output=True, text=True, timeout=60)
    if proc.returncode != 1 or "xml not in {text,json,prom}" not in proc.stderr:
        fail("an unknown format is a usage error", proc.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weft", required=True)
    weft = parser.parse_args().weft
    check_json(weft)
    check_text(weft)
    check_prometheus(weft)
    check_trace(weft)
    check_exit(weft)
    check_options(weft)
    print("telemetry.py: all checks passed")


if __name__ == "__main__":
    main()

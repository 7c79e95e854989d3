#!/usr/bin/env python3
"""Runs each binding's benchmark beside its peer and prints one table (`make bench-bindings`, issue #46).

Each bench (`make core-bench go-bench java-bench node-bench python-bench csharp-bench`,
those the Makefile has) prints, besides its own text, one line per measured
row:

    BENCH-ROW {"binding":"java","case":"lone call","tool":"trivial","metric":"wall us/call",
               "capstan":8.1,"peer":"langchain4j DefaultToolExecutor","peer_value":8.9,
               "goal":"<= peer","met":true}

This collects those lines, one bench after the other (so they do not compete
for the cores), and prints one Markdown table with the load average before
and after, also written to build/bench-bindings.md. A bench that fails, or
prints no BENCH-ROW line, or a line that is not a row, is a row of the table
saying so: nothing is skipped silently. Not part of `make test` (it times
things); `--self-test` (run by `make matrix-check`) parses fake bench output
instead and times nothing.

    bench_bindings.py [--self-test] [--out FILE] [TARGET...]
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["core-bench", "go-bench", "java-bench", "node-bench", "python-bench", "csharp-bench"]
PREFIX = "BENCH-ROW "
COLUMNS = ["binding", "case", "tool", "metric", "capstan", "peer", "peer value", "ratio", "goal", "met"]
CASES = ("lone call", "100 calls", "10000 calls")
REQUIRED = ("binding", "case", "tool", "metric", "capstan")


def binding_of(target):
    return target[: -len("-bench")] if target.endswith("-bench") else target


def problem_row(target, what):
    """A table row for a bench that gave no figures: what went wrong in the metric column."""
    return {"binding": binding_of(target), "case": "-", "tool": "-", "metric": what, "capstan": None,
            "peer": None, "peer_value": None, "goal": None, "met": None}


def rows_of(target, output, status):
    """The rows a bench printed, or rows saying why there are none (failed, no rows, a bad line)."""
    rows, bad = [], []
    for n, line in enumerate(output.splitlines(), 1):
        at = line.find(PREFIX)
        if at < 0:
            continue
        text = line[at + len(PREFIX):].strip()
        try:
            row = json.loads(text)
        except ValueError as e:
            bad.append(f"line {n}: not JSON ({e.msg})")
            continue
        missing = [k for k in REQUIRED if not isinstance(row, dict) or k not in row]
        if missing:
            bad.append(f"line {n}: no {', '.join(missing)}")
            continue
        rows.append(row)
    out = list(rows)
    if status != 0:
        out.append(problem_row(target, f"FAILED: `make {target}` exited {status}"))
    elif not rows:
        out.append(problem_row(target, f"NO ROWS: `make {target}` printed no BENCH-ROW line"))
    out.extend(problem_row(target, f"BAD ROW: {b}") for b in bad)
    return out


def number(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "-" if v is None else str(v)
    return f"{v:.3g}" if abs(v) < 10 else f"{v:,.1f}"


def ratio(row):
    c, p = row.get("capstan"), row.get("peer_value")
    if isinstance(c, (int, float)) and isinstance(p, (int, float)) and p:
        return f"{c / p:.2f}x"
    return "-"


def met(v):
    return {True: "yes", False: "NO", None: "-"}.get(v, str(v))


def table(rows, load_before, load_after):
    def load(l):
        return " / ".join(f"{x:.2f}" for x in l) if l else "unknown"

    lines = [
        "# capstan's bindings beside their peers (make bench-bindings)",
        "",
        f"Load average (1/5/15 min) before: {load(load_before)}; after: {load(load_after)}. "
        "Ratio: capstan / peer (for calls/s higher is better, for times lower).",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join("---:" if c in ("capstan", "peer value", "ratio") else "---" for c in COLUMNS) + "|",
    ]
    order = {c: i for i, c in enumerate(CASES)}
    rows = sorted(rows, key=lambda r: (str(r.get("binding")), order.get(r.get("case"), len(order))))
    for r in rows:
        cells = [str(r.get("binding")), str(r.get("case")), str(r.get("tool")), str(r.get("metric")),
                 number(r.get("capstan")), str(r.get("peer") or "-"), number(r.get("peer_value")), ratio(r),
                 str(r.get("goal") or "-"), met(r.get("met"))]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def existing_targets(targets):
    """Those of `targets` the Makefile has a rule for (`make -n` says "No rule" otherwise)."""
    out = []
    for t in targets:
        p = subprocess.run(["make", "-n", t], cwd=ROOT, capture_output=True, text=True)
        if "No rule to make target" not in p.stderr:
            out.append(t)
    return out


def run(target):
    """Runs one bench, its output passed through as it comes; (output, exit status)."""
    print(f"== make {target}", flush=True)
    p = subprocess.Popen(["make", target], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in p.stdout:
        sys.stdout.write(line)
        seen.append(line)
    return "".join(seen), p.wait()


def main(argv):
    out_path = os.path.join(ROOT, "build", "bench-bindings.md")
    if "--out" in argv:
        i = argv.index("--out")
        out_path = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    targets = existing_targets(argv or TARGETS)
    missing = [t for t in (argv or TARGETS) if t not in targets]
    before = os.getloadavg()
    rows = []
    for t in targets:
        output, status = run(t)
        rows.extend(rows_of(t, output, status))
    rows.extend(problem_row(t, f"NO BENCH: the Makefile has no `{t}` target") for t in missing)
    text = table(rows, before, os.getloadavg())
    print(text)
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"bench-bindings: written to {os.path.relpath(out_path, ROOT)}")
    return 0


def self_test():
    ok_output = "\n".join([
        "tool execution, median wall time (us)",
        'BENCH-ROW {"binding":"java","case":"100 calls","tool":"trivial","metric":"ms total","capstan":0.9,'
        '"peer":"langchain4j sequential","peer_value":0.3,"goal":"<= peer","met":false}',
        'noise BENCH-ROW {"binding":"java","case":"lone call","tool":"trivial","metric":"wall us/call",'
        '"capstan":8.0,"peer":"langchain4j","peer_value":10.0,"goal":"<= peer","met":true}',
        "BENCH-ROW {not json",
        'BENCH-ROW {"binding":"java","case":"lone call"}',
    ])
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    rows = rows_of("java-bench", ok_output, 0)
    good = [r for r in rows if r["case"] != "-"]
    expect(len(good) == 2, f"two rows parsed from the fake java bench, got {len(good)}")
    bad = [r["metric"] for r in rows if r["metric"].startswith("BAD ROW")]
    expect(len(bad) == 2 and "line 4: not JSON" in bad[0] and "no tool, metric, capstan" in bad[1],
           f"the two bad lines reported with their line numbers: {bad}")
    failed = rows_of("node-bench", "boom\n", 2)
    expect(len(failed) == 1 and failed[0]["metric"] == "FAILED: `make node-bench` exited 2",
           f"a failing bench is a row: {failed}")
    silent = rows_of("python-bench", "figures, but no rows\n", 0)
    expect(len(silent) == 1 and silent[0]["metric"].startswith("NO ROWS"), f"a bench without rows is a row: {silent}")
    partial = rows_of("go-bench", ok_output.splitlines()[1] + "\n", 1)
    expect(len(partial) == 2 and partial[1]["metric"].startswith("FAILED"),
           f"a bench failing after some rows keeps them and says it failed: {partial}")

    text = table(good + failed + silent, (1.0, 2.0, 3.0), (1.5, 2.0, 3.0))
    lines = text.splitlines()
    expect("before: 1.00 / 2.00 / 3.00; after: 1.50 / 2.00 / 3.00" in text, "the load averages are in the table")
    expect(lines[4] == "| " + " | ".join(COLUMNS) + " |", f"the header row: {lines[4]}")
    body = [l for l in lines if l.startswith("| ") and l != lines[4]]
    expect(len(body) == 4, f"four table rows, got {len(body)}")
    expect(body[0].startswith("| java | lone call | trivial | wall us/call | 8 | langchain4j | 10.0 | 0.80x | <= peer | yes"),
           f"the lone call first, with its ratio and goal met: {body[0]}")
    expect("| 0.9 | langchain4j sequential | 0.3 | 3.00x | <= peer | NO |" in body[1], f"a goal missed says NO: {body[1]}")
    expect(any("FAILED: `make node-bench` exited 2" in l for l in body), "the failed bench is in the table")
    if failures:
        print("bench_bindings self-test failed:\n  " + "\n  ".join(failures))
        return 1
    print("bench_bindings self-test: fake bench output parsed, failures and silent benches reported")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(main(sys.argv[1:]))

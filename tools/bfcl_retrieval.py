#!/usr/bin/env python3
"""Builds bench/data/bfcl_retrieval.json, the tool-retrieval set of the search
benchmark (issue #32), from the Berkeley Function Calling Leaderboard data
shipped in the PyPI package bfcl-eval (Apache-2.0, ShishirPatil/gorilla,
"Berkeley Function Calling Leaderboard", Patil et al.).

Every function of the chosen categories becomes one tool (names made valid
for capstan: characters other than A-Z a-z 0-9 _ - become _); every question
whose answer calls exactly one function becomes one query, whose right answer
is that function. The search ranks all tools of all categories for each
question: a pool of about 1,100 tools, not the 1 to 4 of the question's own
entry.

    python3 tools/bfcl_retrieval.py            # fetches the pinned wheel with pip
    python3 tools/bfcl_retrieval.py WHEEL.whl  # or reads one already here
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

VERSION = "2026.3.23"
CATEGORIES = ["simple_python", "multiple", "live_simple", "live_multiple"]
OUT = os.path.join(os.path.dirname(__file__), "..", "bench", "data", "bfcl_retrieval.json")


def lines(zf, path):
    return [json.loads(l) for l in zf.read(path).decode().splitlines() if l.strip()]


def tool_name(name):
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64]


def question_text(turns):
    # The first turn's user messages (the live sets carry a system message).
    first = turns[0] if turns and isinstance(turns[0], list) else turns
    return " ".join(m["content"] for m in first if m.get("role") == "user").strip()


def main():
    if len(sys.argv) > 1:
        wheel = sys.argv[1]
    else:
        tmp = tempfile.mkdtemp()
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", tmp,
                        f"bfcl-eval=={VERSION}"], check=True)
        wheel = os.path.join(tmp, f"bfcl_eval-{VERSION}-py3-none-any.whl")
    tools, queries = {}, []
    with zipfile.ZipFile(wheel) as zf:
        for cat in CATEGORIES:
            questions = lines(zf, f"bfcl_eval/data/BFCL_v4_{cat}.json")
            answers = {a["id"]: a for a in lines(zf, f"bfcl_eval/data/possible_answer/BFCL_v4_{cat}.json")}
            for q in questions:
                for f in q["function"]:
                    name = tool_name(f["name"])
                    tools.setdefault(name, {
                        "name": name,
                        "description": f.get("description", ""),
                        "parameters": f.get("parameters", {}),
                    })
                truth = answers.get(q["id"], {}).get("ground_truth", [])
                called = {tool_name(next(iter(c))) for c in truth}
                text = question_text(q["question"])
                if len(called) == 1 and text:
                    queries.append({"id": q["id"], "question": text, "tool": called.pop()})
    # JSON Schema type names: BFCL writes "dict" and "float" (Python's).
    def fix(schema):
        if isinstance(schema, dict):
            t = schema.get("type")
            if t == "dict":
                schema["type"] = "object"
            elif t in ("float", "double"):
                schema["type"] = "number"
            elif t in ("tuple",):
                schema["type"] = "array"
            elif t in ("any",):
                del schema["type"]
            for v in schema.values():
                fix(v)
        elif isinstance(schema, list):
            for v in schema:
                fix(v)
    for t in tools.values():
        fix(t["parameters"])
    data = {
        "source": f"bfcl-eval {VERSION} (PyPI), categories {', '.join(CATEGORIES)}",
        "licence": "Apache-2.0, (c) the Gorilla authors (ShishirPatil/gorilla); see LICENSE-BFCL beside this file",
        "tools": sorted(tools.values(), key=lambda t: t["name"]),
        "queries": queries,
    }
    with open(OUT, "w") as f:
        json.dump(data, f, separators=(",", ":"))
        f.write("\n")
    print(f"{len(data['tools'])} tools, {len(queries)} queries -> {OUT}")


if __name__ == "__main__":
    main()

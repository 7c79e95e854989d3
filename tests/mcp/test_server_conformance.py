"""The official conformance suite, server mode, against capstan's HTTP server
(serve_host conformance): its 0.1 release, and its 0.2 pre-release (as
`conformance-next` in package.json) at the requirements of both protocol
revisions it knows, 2025-11-25 (sessions) and 2026-07-28 (stateless).
Scenarios capstan cannot pass by design are listed, each with its reason, in
the expected-failures files; the CLI fails on any other failure and on a
listed scenario that passes. The Tasks extension's scenarios are required by
no revision (`--requirements` leaves them out): they run one by one."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import http_host

HERE = Path(__file__).resolve().parent
MODULES = HERE / "node_modules"

RUNS = {
    "0.1.16": (
        MODULES / "@modelcontextprotocol" / "conformance",
        [],
        "conformance-server-expected-failures",
    ),
    "0.2.0-alpha.12 @ 2025-11-25": (
        MODULES / "conformance-next",
        ["--requirements", "2025-11-25"],
        "conformance-next-server-expected-failures-2025-11-25",
    ),
    "0.2.0-alpha.12 @ 2026-07-28": (
        MODULES / "conformance-next",
        ["--requirements", "2026-07-28"],
        "conformance-next-server-expected-failures-2026-07-28",
    ),
}


TASKS_SCENARIOS = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
]


def conformance(package, url, args, expected, cwd):
    return subprocess.run(
        [
            "node",
            "--import",
            str(HERE / "node-compat.mjs"),
            str(package / "dist" / "index.js"),
            "server",
            "--url",
            url,
            *args,
            "--expected-failures",
            str(HERE / expected),
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, NO_COLOR="1"),
    )


def test_conformance_tasks_scenarios_fail_only_as_expected(tmp_path):
    """The Tasks extension (io.modelcontextprotocol/tasks) against
    serve_host's greet, slow_compute (task optional), failing_job (task
    required) and the tasks that ask for input (confirm_delete,
    multi_input, test_tool_with_task); the one check that needs a tool
    ending in a protocol error is listed in the 2026-07-28 expected
    failures."""
    package, _, expected = RUNS["0.2.0-alpha.12 @ 2026-07-28"]
    failed = []
    with http_host("", "", "conformance") as (url, _):
        for scenario in TASKS_SCENARIOS:
            run = conformance(package, url, ["--scenario", scenario], expected, tmp_path)
            if run.returncode != 0:
                failed.append(f"{scenario}:\n{run.stdout[-3000:]}{run.stderr[-2000:]}")
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("run_name", list(RUNS))
def test_conformance_server_mode_fails_only_the_expected_scenarios(tmp_path, run_name):
    package, args, expected = RUNS[run_name]
    cli = package / "dist" / "index.js"
    assert cli.exists(), f"{cli} is missing: run `make setup`"
    version = json.loads((package / "package.json").read_text())["version"]
    assert run_name.startswith(version), f"{package} is {version}, not {run_name}: run `make setup`"
    with http_host("", "", "conformance") as (url, _):
        run = conformance(package, url, args, expected, tmp_path)
    summary = run.stdout[run.stdout.find("=== SUMMARY ===") :]
    print(summary)
    assert run.returncode == 0, summary + run.stderr[-4000:]

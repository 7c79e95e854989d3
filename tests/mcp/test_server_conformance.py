"""The official conformance suite, server mode, against capstan's HTTP server
(serve_host conformance). Scenarios capstan cannot pass by design are listed,
each with its reason, in conformance-server-expected-failures; the CLI fails
on any other failure and on a listed scenario that passes."""

import os
import subprocess
from pathlib import Path

from conftest import http_host

HERE = Path(__file__).resolve().parent
CLI = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def test_conformance_server_mode_fails_only_the_expected_scenarios(tmp_path):
    assert CLI.exists(), f"{CLI} is missing: run `make setup`"
    with http_host("", "", "conformance") as (url, _):
        run = subprocess.run(
            [
                "node",
                "--import",
                str(HERE / "node-compat.mjs"),
                str(CLI),
                "server",
                "--url",
                url,
                "--expected-failures",
                str(HERE / "conformance-server-expected-failures"),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            env=dict(os.environ, NO_COLOR="1"),
        )
    summary = run.stdout[run.stdout.find("=== SUMMARY ===") :]
    print(summary)
    assert run.returncode == 0, summary + run.stderr[-4000:]

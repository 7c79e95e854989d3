"""Durable calls (issue #47): a registry with a journal answers a completed
call again without running its tool, resolves a call whose process died
while it ran by the tool's policy, and replays a recording without running
anything."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import capstan
from capstan import CapstanError, Journal, ToolCall, ToolRegistry, tool

# The tools of the crashed process and of the one that resumes it: the same
# names, schemas and descriptions; the bodies count their runs in ``ran``
# (the parent's) or block until the process is killed (the child's).
TOOLS = '''
import asyncio, os, sys, time
from capstan import tool

MARKS = sys.argv[1]

def mark(name):
    open(os.path.join(MARKS, name), "w").close()

@tool
def quote(item: str) -> str:
    """Price an item."""
    return f"{item}: 12 EUR"

@tool
def charge(amount: int) -> str:
    """Charge the card."""
    mark("charge")
    time.sleep(600)
    return "charged"

@tool(idempotent=True)
async def lookup(order: str) -> str:
    """Look an order up."""
    mark("lookup")
    await asyncio.sleep(600)
    return "found"
'''

CHILD = TOOLS + '''
from capstan import Journal, ToolCall, ToolRegistry

registry = ToolRegistry([quote, charge, lookup])
journal = Journal.jsonl(sys.argv[2])
registry.set_journal(journal)
registry.execute(ToolCall("quote", {"item": "book"}, id="c1"), run_id="order-7")
mark("quoted")
asyncio.run(registry.aexecute_many(
    [ToolCall("charge", {"amount": 12}, id="c2"), ToolCall("lookup", {"order": "7"}, id="c3")],
    run_id="order-7",
))
'''


def _parent_tools(ran: list[str]):
    @tool
    def quote(item: str) -> str:
        """Price an item."""
        ran.append("quote")
        return f"{item}: 12 EUR"

    @tool
    def charge(amount: int) -> str:
        """Charge the card."""
        ran.append("charge")
        return "charged"

    @tool(idempotent=True)
    async def lookup(order: str) -> str:
        """Look an order up."""
        ran.append("lookup")
        return "found"

    return [quote, charge, lookup]


def _crash_mid_batch(tmp_path: Path) -> Path:
    """Runs CHILD until ``charge`` and ``lookup`` are running (``started``
    written, ``completed`` not), then kills it; returns the journal's path."""
    marks = tmp_path / "marks"
    marks.mkdir()
    path = tmp_path / "calls.jsonl"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(marks), str(path)],
        env={
            **os.environ,
            "CAPSTAN_LIB": capstan._lib.lib().path,
            "PYTHONPATH": str(Path(capstan.__file__).parent.parent),
        },
        stderr=subprocess.PIPE,
    )
    try:
        while not ((marks / "charge").exists() and (marks / "lookup").exists()):
            if child.poll() is not None:
                pytest.fail(f"the child ended before its tools ran: {child.stderr.read().decode()}")  # type: ignore[union-attr]
            time.sleep(0.01)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert (marks / "quoted").exists()
    return path


def test_after_a_crash_completed_calls_are_not_run_again_and_unknown_ones_follow_their_policy(tmp_path):
    path = _crash_mid_batch(tmp_path)
    kinds = [line.split('"kind":"')[1].split('"')[0] for line in path.read_text().splitlines()]
    assert kinds.count("completed") == 1 and kinds.count("started") == 3
    ran: list[str] = []
    events: list[capstan.ToolEvent] = []
    calls = [
        ToolCall("quote", {"item": "book"}, id="c1"),
        ToolCall("charge", {"amount": 12}, id="c2"),
        ToolCall("lookup", {"order": "7"}, id="c3"),
    ]
    with ToolRegistry(_parent_tools(ran)) as registry, Journal.jsonl(path) as journal:
        registry.set_journal(journal)
        registry.on_event(events.append)
        quoted, charged, looked_up = asyncio.run(registry.aexecute_many(calls, run_id="order-7"))
        stats = registry.stats()
    # The completed call is answered from the journal: its tool did not run.
    assert (quoted.outcome, quoted.content) == ("ok", "book: 12 EUR")
    assert [e.call_id for e in events if e.kind == "replayed"] == ["c1"]
    assert stats["quote"]["replayed"] == 1
    # charge may have charged the card: it is not run again, and says so.
    assert charged.is_error and charged.content.startswith("Outcome unknown:")
    # lookup is idempotent: it runs again.
    assert (looked_up.outcome, looked_up.content, looked_up.data) == ("ok", "found", "found")
    assert ran == ["lookup"]


def test_the_blocking_api_resumes_a_run_the_same_way(tmp_path):
    path = _crash_mid_batch(tmp_path)
    ran: list[str] = []
    with ToolRegistry(_parent_tools(ran)) as registry, Journal.jsonl(path) as journal:
        registry.set_journal(journal)
        quoted = registry.execute(ToolCall("quote", {"item": "book"}, id="c1"), run_id="order-7")
        charged, looked_up = registry.execute_many(
            [ToolCall("charge", {"amount": 12}, id="c2"), ToolCall("lookup", {"order": "7"}, id="c3")],
            run_id="order-7",
        )
    assert quoted.content == "book: 12 EUR" and not quoted.is_error
    assert charged.content.startswith("Outcome unknown:")
    assert looked_up.content == "found"
    assert ran == ["lookup"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _record(path: Path, calls: list[ToolCall]) -> list[capstan.ToolResult]:
    with ToolRegistry([add]) as registry, Journal.jsonl(path) as journal:
        registry.set_journal(journal)
        return registry.execute_many(calls, run_id="session")


def test_replay_runs_no_tool_and_fails_a_call_missing_from_the_recording(tmp_path):
    path = tmp_path / "fixture.jsonl"
    recorded = _record(path, [ToolCall("add", {"a": 1, "b": 2}, id="t1"), ToolCall("add", {"a": 3, "b": 4}, id="t2")])
    assert [r.content for r in recorded] == ["3", "7"]
    ran = []

    @tool(name="add")
    def counted(a: int, b: int) -> int:
        """Add two integers."""
        ran.append((a, b))
        return a + b

    with ToolRegistry([counted]) as registry, Journal.jsonl(path) as journal:
        registry.set_journal(journal, replay=True)
        again = registry.execute_many(
            [ToolCall("add", {"a": 3, "b": 4}, id="t2"), ToolCall("add", {"a": 1, "b": 2}, id="t1")],
            run_id="session",
        )
        missing = registry.execute(ToolCall("add", {"a": 5, "b": 6}, id="t3"), run_id="session")
        # Without a run id the journal is not used: the tool runs.
        plain = registry.execute(ToolCall("add", {"a": 5, "b": 6}, id="t3"))
    assert [r.content for r in again] == ["7", "3"] and not any(r.is_error for r in again)
    assert missing.is_error and '"t3"' in missing.content and "not in the recording" in missing.content
    assert plain.data == 11
    assert ran == [(5, 6)]


def test_a_changed_schema_on_replay_fails_the_call_naming_the_tool(tmp_path):
    path = tmp_path / "fixture.jsonl"
    _record(path, [ToolCall("add", {"a": 1, "b": 2}, id="t1")])

    @tool(name="add")
    def add_three(a: int, b: int, c: int = 0) -> int:
        """Add two integers."""
        return a + b + c

    with ToolRegistry([add_three]) as registry, Journal.jsonl(path) as journal:
        registry.set_journal(journal, replay=True)
        result = registry.execute(ToolCall("add", {"a": 1, "b": 2}, id="t1"), run_id="session")
    assert result.is_error
    assert 'the schema of tool "add" changed' in result.content


def test_a_journal_that_is_not_records_fails_to_open_naming_the_line(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text("not a record\n")
    with pytest.raises(CapstanError, match="line 1") as caught:
        Journal.jsonl(path)
    assert caught.value.status == "CAPSTAN_ERR_INVALID_ARGUMENT"
    assert path.read_text() == "not a record\n"  # left as it was


def test_bad_run_ids_and_repeated_call_ids_are_refused(tmp_path):
    with ToolRegistry([add]) as registry, Journal.jsonl(tmp_path / "j.jsonl") as journal:
        registry.set_journal(journal)
        with pytest.raises(ValueError, match="run_id"):
            registry.execute(ToolCall("add", {"a": 1, "b": 2}), run_id="")
        twice = [ToolCall("add", {"a": 1, "b": 2}, id="x"), ToolCall("add", {"a": 1, "b": 2}, id="x")]
        with pytest.raises(ValueError, match="'x' appears twice"):
            registry.execute_many(twice, run_id="r")
    closed = Journal.jsonl(tmp_path / "k.jsonl")
    closed.close()
    with ToolRegistry([add]) as registry, pytest.raises(ValueError, match="closed"):
        registry.set_journal(closed)


def test_an_sqlite_journal_resumes_a_run_or_says_the_library_lacks_it(tmp_path):
    try:
        journal = Journal.sqlite(tmp_path / "calls.db")
    except CapstanError as exc:
        assert exc.status == "CAPSTAN_ERR_UNSUPPORTED" and "journal-sqlite" in str(exc)
        return
    ran = []

    @tool(name="add")
    def counted(a: int, b: int) -> int:
        """Add two integers."""
        ran.append((a, b))
        return a + b

    with journal, ToolRegistry([counted]) as registry:
        registry.set_journal(journal)
        first = registry.execute(ToolCall("add", {"a": 1, "b": 2}, id="s1"), run_id="r")
        again = registry.execute(ToolCall("add", {"a": 1, "b": 2}, id="s1"), run_id="r")
    assert first.content == again.content == "3" and ran == [(1, 2)]


def test_run_turn_with_a_run_id_answers_the_responses_completed_calls_from_the_journal(tmp_path):
    ran = []

    @tool(name="add")
    def counted(a: int, b: int) -> int:
        """Add two integers."""
        ran.append((a, b))
        return a + b

    call = {"id": "call_a", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}
    response = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
    with ToolRegistry([counted]) as registry, Journal.jsonl(tmp_path / "turns.jsonl") as journal:
        registry.set_journal(journal)
        first = registry.run_turn("openai", response, run_id="chat-1")
        again = registry.run_turn("openai", response, run_id="chat-1")
        stats = registry.stats()
    assert first == again == [{"role": "tool", "tool_call_id": "call_a", "content": "3"}]
    assert ran == [(1, 2)] and stats["add"]["replayed"] == 1

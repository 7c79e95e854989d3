"""Durable calls kept in the host's own store (issue #47, Journal.custom):
capstan hands the store each record as it writes it and asks it for a
call's record; a completed call is answered from it on another registry, a
crash's `started` records follow each tool's policy, a store that raises
fails the call (never the process), the store lives as long as a registry
uses the journal, and a replay runs nothing."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import threading
import weakref

import pytest

import capstan
from capstan import Journal, ToolCall, ToolRegistry, tool
from capstan import _journal_store


class DictStore:
    """A host's store: every record it was given, in order, and per
    (run, call) key the latest `started` or `completed` one."""

    def __init__(self, table: dict[tuple[str, str], str] | None = None) -> None:
        self.lock = threading.Lock()
        self.seen: list[str] = []
        self.table = dict(table or {})
        self.threads: set[int] = set()
        self.lookups: list[tuple[str, str]] = []

    def record(self, record_json: str) -> None:
        record = json.loads(record_json)
        with self.lock:
            self.threads.add(threading.get_ident())
            self.seen.append(record_json)
            if record["kind"] != "tools":
                self.table[record["run"], record["call"]] = record_json

    def lookup(self, run_id: str, call_id: str) -> str | None:
        with self.lock:
            self.threads.add(threading.get_ident())
            self.lookups.append((run_id, call_id))
            return self.table.get((run_id, call_id))

    def kinds(self, call: str) -> list[str]:
        return [r["kind"] for r in map(json.loads, self.seen) if r["call"] == call and r["kind"] != "tools"]


def _tools(ran: list[str]):
    @tool
    def charge(amount: int) -> str:
        """Charge the card."""
        ran.append("charge")
        return f"charged {amount}"

    @tool(idempotent=True)
    def lookup(order: str) -> str:
        """Look an order up."""
        ran.append("lookup")
        return f"order {order}: paid"

    return [charge, lookup]


CHARGE = ToolCall("charge", {"amount": 5}, id="c1")


def test_a_completed_call_in_the_hosts_store_is_answered_on_a_second_registry_without_running(tmp_path):
    store, ran = DictStore(), []
    with Journal.custom(store) as journal, ToolRegistry(_tools(ran)) as registry:
        assert repr(journal) == "Journal(kept by DictStore)" and journal.path is None
        registry.set_journal(journal)
        first = registry.execute(CHARGE, run_id="order-7")
    assert (first.content, first.outcome, ran) == ("charged 5", "ok", ["charge"])
    # What the store saw is what capstan writes: the same text a JSON Lines
    # journal holds per line (a `completed` differs only in its duration).
    assert store.kinds("c1") == ["started", "completed"]
    with Journal.jsonl(tmp_path / "same.jsonl") as file, ToolRegistry(_tools([])) as registry:
        registry.set_journal(file)
        registry.execute(CHARGE, run_id="order-7")
    lines = (tmp_path / "same.jsonl").read_text().splitlines()
    assert lines[:2] == store.seen[:2]  # `tools`, then `started`
    ours, theirs = json.loads(store.seen[2]), json.loads(lines[2])
    assert ours["result"].pop("duration_us") >= 0 and theirs["result"].pop("duration_us") >= 0
    assert ours == theirs and ours["result"]["content"] == "charged 5"

    # Another registry, the same store and run id: answered, not run.
    events = []
    with Journal.custom(store) as journal, ToolRegistry(_tools(ran)) as registry:
        registry.set_journal(journal)
        registry.on_event(events.append)
        again = registry.execute(CHARGE, run_id="order-7")
        stats = registry.stats()
    assert (again.content, again.outcome, again.data) == ("charged 5", "ok", None)
    assert ran == ["charge"] and stats["charge"]["replayed"] == 1
    assert [e.kind for e in events] == ["replayed", "finished"]
    assert store.kinds("c1") == ["started", "completed"]  # nothing written for a replayed call
    assert ("order-7", "c1") in store.lookups


def test_after_a_crash_a_started_call_follows_its_tools_policy():
    # The store as a process left it that died while both calls ran: each
    # key holds its `started` record only.
    calls = [CHARGE, ToolCall("lookup", {"order": "7"}, id="c2")]
    recorded = DictStore()
    with Journal.custom(recorded) as journal, ToolRegistry(_tools([])) as registry:
        registry.set_journal(journal)
        registry.execute_many(calls, run_id="order-7")
    started = [json.loads(r) for r in recorded.seen]
    crashed = DictStore({(r["run"], r["call"]): json.dumps(r) for r in started if r["kind"] == "started"})
    assert sorted(crashed.table) == [("order-7", "c1"), ("order-7", "c2")]

    ran: list[str] = []
    with Journal.custom(crashed) as journal, ToolRegistry(_tools(ran)) as registry:
        registry.set_journal(journal)
        charged, looked_up = registry.execute_many(calls, run_id="order-7")
    # charge may have charged the card: not run again, and it says so.
    assert charged.is_error and charged.content.startswith("Outcome unknown:")
    # lookup is idempotent: it runs again, and its result is recorded.
    assert (looked_up.outcome, looked_up.content) == ("ok", "order 7: paid")
    assert ran == ["lookup"]
    assert crashed.kinds("c2") == ["started", "completed"] and crashed.kinds("c1") == []


class FailingStore(DictStore):
    """Raises from record() for the kinds in ``fail``, from lookup() if
    ``lookup_raises``; lookup() answers ``answer`` when it is set."""

    def __init__(self, fail: tuple[str, ...] = (), lookup_raises: bool = False, answer: object = None) -> None:
        super().__init__()
        self.fail, self.lookup_raises, self.answer = fail, lookup_raises, answer

    def record(self, record_json: str) -> None:
        if json.loads(record_json)["kind"] in self.fail:
            raise OSError("the database is down")
        super().record(record_json)

    def lookup(self, run_id: str, call_id: str):  # type: ignore[no-untyped-def]
        if self.lookup_raises:
            raise ConnectionError("no route to the database")
        return self.answer if self.answer is not None else super().lookup(run_id, call_id)


def _run_once(store: DictStore, call: ToolCall = CHARGE) -> tuple[capstan.ToolResult, list[str]]:
    ran: list[str] = []
    with Journal.custom(store) as journal, ToolRegistry(_tools(ran)) as registry:
        registry.set_journal(journal)
        return registry.execute(call, run_id="r"), ran


class Releases:
    """The keys of the stores capstan released (its destroy callback), in
    order. capstan may run destroy on a pool thread a moment after the last
    registry using the journal returned: wait for it."""

    def __init__(self) -> None:
        self.keys: list[int] = []
        self.changed = threading.Condition()

    def of(self, key: int) -> int:
        with self.changed:
            return self.keys.count(key)

    def wait_for(self, key: int) -> None:
        with self.changed:
            # A bound so that a store never released fails instead of hanging.
            assert self.changed.wait_for(lambda: key in self.keys, timeout=120), f"store {key} never released"


@pytest.fixture
def releases(monkeypatch) -> Releases:
    seen = Releases()
    release = _journal_store._release

    def counted(key: int) -> None:
        release(key)
        with seen.changed:
            seen.keys.append(key)
            seen.changed.notify_all()

    monkeypatch.setattr(_journal_store, "_release", counted)
    return seen


def _key_of(store: object) -> int:
    return next(k for k, held in _journal_store._stores.items() if held is store)


def test_a_store_whose_record_raises_fails_the_call_before_its_tool_runs(caplog, releases):
    store = FailingStore(fail=("started",))
    ran: list[str] = []
    with caplog.at_level(logging.ERROR, logger="capstan"):
        with Journal.custom(store) as journal, ToolRegistry(_tools(ran)) as registry:
            key = _key_of(store)
            registry.set_journal(journal)
            result = registry.execute(CHARGE, run_id="r")
    assert result.is_error and result.outcome == "tool_error" and ran == []
    assert result.content.startswith('The journal could not record the start of call "c1" (run "r")')
    assert "the host's record returned 1" in result.content and "The tool was not run." in result.content
    # The exception is not lost: logged with its traceback and what it cost.
    logged = [r for r in caplog.records if r.name == "capstan"]
    assert len(logged) == 1 and isinstance(logged[0].exc_info[1], OSError)  # type: ignore[index]
    message = logged[0].getMessage()
    assert "FailingStore: record() of the 'started' record of run 'r', call 'c1' raised OSError" in message
    assert "its tool does not run" in message
    releases.wait_for(key)  # released with its journal and registry: nothing kept
    assert key not in _journal_store._stores and releases.of(key) == 1


def test_a_lost_completed_record_keeps_the_result_and_leaves_the_outcome_unknown(caplog):
    store = FailingStore(fail=("completed",))
    with caplog.at_level(logging.ERROR, logger="capstan"):
        result, ran = _run_once(store)
    assert (result.content, result.outcome, ran) == ("charged 5", "ok", ["charge"])
    assert "a later run of it finds its outcome unknown" in caplog.records[0].getMessage()
    store.fail = ()
    again, ran = _run_once(store)
    assert again.content.startswith("Outcome unknown:") and ran == []


def test_a_lost_tools_record_loses_only_the_tool_list(caplog):
    with caplog.at_level(logging.ERROR, logger="capstan"):
        result, ran = _run_once(FailingStore(fail=("tools",)))
    assert (result.content, ran) == ("charged 5", ["charge"])
    assert "the run's tool list is not recorded" in caplog.records[0].getMessage()


def test_a_store_whose_lookup_raises_or_answers_no_record_fails_the_call_naming_it(caplog):
    with caplog.at_level(logging.ERROR, logger="capstan"):
        raised, ran = _run_once(FailingStore(lookup_raises=True))
    assert raised.is_error and ran == []
    # (A lone call claims its key: a lookup, then its `started` record.)
    assert raised.content.startswith('The journal could not record the start of call "c1" (run "r")')
    assert "the host's lookup returned 1. The tool was not run." in raised.content
    message = caplog.records[0].getMessage()
    assert "lookup('r', 'c1') raised ConnectionError" in message
    assert isinstance(caplog.records[0].exc_info[1], ConnectionError)  # type: ignore[index]
    caplog.clear()

    with caplog.at_level(logging.ERROR, logger="capstan"):
        wrong_type, ran = _run_once(FailingStore(answer=42))
    assert wrong_type.is_error and "the host's lookup returned 1" in wrong_type.content and ran == []
    assert "lookup() returned int, not the record's JSON text" in str(caplog.records[0].exc_info[1])  # type: ignore[index]

    # Bytes that are not UTF-8: the call fails, the tool does not run.
    with caplog.at_level(logging.ERROR, logger="capstan"):
        not_utf8, ran = _run_once(FailingStore(answer=b"\xff{}"))
    assert not_utf8.is_error and "the host's lookup returned 1" in not_utf8.content and ran == []
    assert "refused what lookup() answered: record_json is not valid UTF-8" in str(caplog.records[-1].exc_info[1])  # type: ignore[index]

    # Text that is not a record, or another key's record: capstan says why.
    not_json, ran = _run_once(FailingStore(answer="{oops"))
    assert not_json.is_error and "the host's lookup answered: not valid JSON" in not_json.content and ran == []
    recorded = DictStore()
    _run_once(recorded)
    other = recorded.table["r", "c1"].encode()  # bytes are taken too
    wrong_key, ran = _run_once(FailingStore(answer=other), ToolCall("charge", {"amount": 5}, id="c9"))
    assert 'call "c9" answered the record of run "r" call "c1"' in wrong_key.content and ran == []


def test_a_store_without_both_plain_methods_is_refused():
    class NoLookup:
        def record(self, record_json: str) -> None: ...

    class Async(DictStore):
        async def record(self, record_json: str) -> None:  # type: ignore[override]
            ...

    with pytest.raises(TypeError, match=r"NoLookup has no lookup\(\) method"):
        Journal.custom(NoLookup())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Async.record is async def"):
        Journal.custom(Async())
    assert not any(isinstance(held, (NoLookup, Async)) for held in _journal_store._stores.values())


def test_the_store_lives_while_a_registry_uses_the_journal_and_is_released_once_after(releases):
    store, ran = DictStore(), []
    alive = weakref.ref(store)
    journal = Journal.custom(store)
    key = _key_of(store)
    registry = ToolRegistry(_tools(ran))
    registry.set_journal(journal)
    journal.close()  # the user's handle goes first: the registry keeps the journal
    journal.close()
    with pytest.raises(ValueError, match="the journal kept by DictStore is closed"):
        ToolRegistry().set_journal(journal)
    del store
    gc.collect()
    assert alive() is not None and releases.of(key) == 0
    first = registry.execute(CHARGE, run_id="r")
    again = registry.execute(CHARGE, run_id="r")
    assert first.content == again.content == "charged 5" and ran == ["charge"]
    assert alive().kinds("c1") == ["started", "completed"]  # type: ignore[union-attr]
    registry.close()
    releases.wait_for(key)
    gc.collect()
    assert alive() is None

    # The other order, and a journal dropped without close().
    store = DictStore()
    alive = weakref.ref(store)
    registry = ToolRegistry(_tools([]))
    journal = Journal.custom(store)
    other = _key_of(store)
    registry.set_journal(journal)
    del store, journal
    gc.collect()
    registry.execute(CHARGE, run_id="r")
    assert alive() is not None and releases.of(other) == 0
    registry.set_journal(None)  # the registry lets go of it too
    releases.wait_for(other)
    gc.collect()
    assert alive() is None
    registry.close()
    assert releases.of(key) == releases.of(other) == 1  # destroy ran once for each


def test_replay_with_the_hosts_store_runs_no_tool_and_writes_nothing():
    store = DictStore()
    _run_once(store)
    written = list(store.seen)
    ran: list[str] = []
    with Journal.custom(store) as journal, ToolRegistry(_tools(ran)) as registry:
        registry.set_journal(journal, replay=True)
        replayed = registry.execute(CHARGE, run_id="r")
        missing = registry.execute(ToolCall("charge", {"amount": 6}, id="c2"), run_id="r")
        idempotent = registry.execute(ToolCall("lookup", {"order": "7"}, id="c3"), run_id="r")
    assert (replayed.content, replayed.outcome) == ("charged 5", "ok")
    assert missing.is_error and 'Call "c2" of tool "charge" is not in the recording of run "r"' in missing.content
    assert idempotent.is_error and "not in the recording" in idempotent.content
    assert ran == [] and store.seen == written


def test_batches_async_tools_and_turns_call_the_store_from_capstans_threads():
    store, ran = DictStore(), []

    @tool
    async def fetch(page: int) -> str:
        """Fetch a page."""
        ran.append(f"fetch {page}")
        await asyncio.sleep(0)
        return f"page {page}"

    tools = [*_tools(ran), fetch]
    batch = [ToolCall("charge", {"amount": i}, id=f"b{i}") for i in range(6)]
    pages = [ToolCall("fetch", {"page": i}, id=f"p{i}") for i in range(4)]
    charges = [ToolCall("charge", {"amount": 10 + i}, id=f"a{i}") for i in range(3)]
    call = {"id": "t1", "type": "function", "function": {"name": "charge", "arguments": '{"amount": 9}'}}
    response = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}

    def run_all(registry: ToolRegistry) -> list[object]:
        sync = [r.content for r in registry.execute_many(batch, run_id="r")]
        awaited = [r.content for r in asyncio.run(registry.aexecute_many(pages, run_id="r"))]
        lone = asyncio.run(registry.aexecute(ToolCall("fetch", {"page": 9}, id="p9"), run_id="r")).content
        # Sync tools started on the loop's thread, which keeps the GIL meanwhile.
        inline = [r.content for r in asyncio.run(registry.aexecute_many(charges, run_id="r"))]
        return [sync, awaited, lone, inline, registry.run_turn("openai", response, run_id="r")]

    with Journal.custom(store) as journal, ToolRegistry(tools) as registry:
        registry.set_journal(journal)
        first = run_all(registry)
    assert first[:4] == [
        [f"charged {i}" for i in range(6)],
        [f"page {i}" for i in range(4)],
        "page 9",
        ["charged 10", "charged 11", "charged 12"],
    ]
    assert len(ran) == 15
    # The batch's calls are recorded on capstan's pool threads, not only here.
    assert store.threads - {threading.get_ident()}
    assert all(store.kinds(c.id) == ["started", "completed"] for c in batch + pages + charges)

    with Journal.custom(store) as journal, ToolRegistry(tools) as registry:
        registry.set_journal(journal)
        again = run_all(registry)
        replayed = sum(s["replayed"] for s in registry.stats().values())
    assert again == first and len(ran) == 15 and replayed == 15


def test_a_keyboard_interrupt_in_the_store_fails_the_call_and_reaches_the_caller(caplog):
    class Interrupted(DictStore):
        def record(self, record_json: str) -> None:
            if json.loads(record_json)["kind"] == "started":
                raise KeyboardInterrupt
            super().record(record_json)

    ran: list[str] = []
    with caplog.at_level(logging.ERROR, logger="capstan"):
        with Journal.custom(Interrupted()) as journal, ToolRegistry(_tools(ran)) as registry:
            registry.set_journal(journal)
            with pytest.raises(KeyboardInterrupt):
                registry.execute(CHARGE, run_id="r")  # raised again once capstan returned
            # The registry is still usable after it.
            assert registry.execute(ToolCall("lookup", {"order": "1"}, id="x")).content == "order 1: paid"
    assert ran == ["lookup"]
    assert "raised KeyboardInterrupt" in caplog.records[0].getMessage()

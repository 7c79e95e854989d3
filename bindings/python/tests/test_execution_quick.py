"""The fast paths: a lone call checked and run in the binding, and a batch of
quick sync calls run on the calling thread; each answers as a capstan batch would."""

import asyncio
import threading
import time

from capstan import ToolCall, ToolRegistry, tool


def test_a_lone_call_gives_the_same_result_as_a_batch_would():
    # execute()/aexecute() of a lone call validate with capstan_registry_check_call and
    # run the tool in the binding; a timeout sends the call through a capstan
    # batch instead. Both must read alike to the model and the caller.
    class Refused(Exception):
        pass

    @tool
    def echo(text: str, times: int = 1) -> str:
        """Repeat text."""
        return text * times

    @tool
    def record(text: str) -> dict:
        """Wrap text."""
        return {"text": text, "n": [1, 2.5, None]}

    @tool
    def refuse(text: str) -> str:
        """Fail."""
        raise Refused(f"no {text}")

    @tool
    def silent() -> str:
        """Fail without a message."""
        raise Refused()

    @tool
    def odd() -> str:
        """Return text that is not valid UTF-8."""
        return "a\ud800b"

    @tool
    async def aecho(text: str, times: int = 2) -> str:
        """Repeat text later."""
        return text * times

    calls = [
        ToolCall("echo", {"text": "ab"}),
        ToolCall("echo", '{"text": "Zürich", "times": 2}'),
        ToolCall("odd"),
        ToolCall("record", {"text": "x"}),
        ToolCall("refuse", {"text": "way"}),
        ToolCall("silent"),
        ToolCall("echo", {"text": 3}),
        ToolCall("echo", "{not json"),
        ToolCall("ecko", {"text": "a"}),
        ToolCall("aecho", {"text": "c"}),
        ToolCall("aecho", {"times": 1}),
    ]

    def key(r):
        return (r.call_id, r.name, r.content, r.is_error, r.data, r.outcome, type(r.error))

    async def main():
        with ToolRegistry([echo, record, refuse, silent, odd, aecho]) as registry:
            lone = [await registry.aexecute(c) for c in calls]
            batched = [await registry.aexecute(c, timeout=60) for c in calls]
            blocking = [registry.execute(c) for c in calls if c.name != "aecho"]
        return lone, batched, blocking

    lone, batched, blocking = asyncio.run(main())
    assert [key(r) for r in lone] == [key(r) for r in batched]
    assert [key(r) for r in blocking] == [key(r) for r in batched if r.name != "aecho"]
    assert [r.outcome for r in lone] == ["ok"] * 4 + ["tool_error"] * 2 + ["invalid_arguments"] * 2 + [
        "unknown_tool",
        "ok",
        "invalid_arguments",
    ]


def _until_seen_quick(registry: ToolRegistry, call: ToolCall) -> None:
    """Lone calls until one ran in under 100 us (on a busy machine one may not)."""
    for _ in range(200):
        registry.execute(call)
        if registry._lean[call.name][0].quick:
            return
    raise AssertionError("the tool was never seen quick")


def test_a_batch_of_quick_sync_calls_runs_on_the_calling_thread_in_order():
    threads: list[int] = []

    @tool
    def mark(i: int) -> int:
        """Note the thread."""
        threads.append(threading.get_ident())
        return i

    with ToolRegistry([mark]) as registry:
        calls = [ToolCall("mark", {"i": i}, id=f"c{i}") for i in range(50)]
        calls[7] = ToolCall("mark", {"i": "seven"}, id="c7")  # answered by capstan's check
        calls[9] = ToolCall("nope", {}, id="c9")
        first = registry.execute_many(calls[:3])  # never seen before: capstan's pool
        assert [r.data for r in first] == [0, 1, 2] and threading.get_ident() not in threads
        _until_seen_quick(registry, calls[0])
        threads.clear()
        results = registry.execute_many(calls)
        stats = registry.stats()["mark"]
    assert [r.call_id for r in results] == [c.id for c in calls]
    assert results[7].outcome == "invalid_arguments" and "/i" in results[7].content
    assert results[9].outcome == "unknown_tool"
    assert [r.data for r in results if r.outcome == "ok"] == [i for i in range(50) if i not in (7, 9)]
    assert set(threads) == {threading.get_ident()}
    assert stats["outcomes"]["invalid_arguments"] == 1  # counted as on any path


def test_a_tool_that_turns_slow_sends_the_rest_of_the_batch_to_the_pool():
    ran_on: dict[int, int] = {}

    @tool
    def sometimes(i: int, slow: bool = False) -> int:
        """Quick, unless told otherwise."""
        if slow:
            time.sleep(0.002)  # past 100 us whatever the load
        ran_on[i] = threading.get_ident()
        return i

    with ToolRegistry([sometimes]) as registry:
        _until_seen_quick(registry, ToolCall("sometimes", {"i": -1}))
        calls = [ToolCall("sometimes", {"i": i, "slow": i >= 2}) for i in range(12)]
        results = registry.execute_many(calls)
    assert [r.data for r in results] == list(range(12))
    here = threading.get_ident()
    assert ran_on[0] == here  # started here (seen quick)
    # Slow twice in a row (calls 2 and 3 at the latest): the rest ran on capstan's pool.
    assert all(ran_on[i] != here for i in range(4, 12))


def test_a_batch_with_a_timeout_or_an_event_hook_runs_on_the_pool():
    threads: list[int] = []

    @tool
    def mark(i: int) -> int:
        """Note the thread."""
        threads.append(threading.get_ident())
        return i

    with ToolRegistry([mark]) as registry:
        _until_seen_quick(registry, ToolCall("mark", {"i": 0}))
        threads.clear()
        registry.execute_many([ToolCall("mark", {"i": i}) for i in range(4)], timeout=30)
        registry.on_event(lambda event: None)
        registry.execute_many([ToolCall("mark", {"i": i}) for i in range(4)])
    assert threading.get_ident() not in threads


def test_calls_the_batch_check_answered_keep_their_answer_after_the_tool_turns_slow():
    @tool
    def sometimes(i: int, slow: bool = False) -> int:
        """Quick, unless told otherwise."""
        if slow:
            time.sleep(0.002)  # past 100 us whatever the load
        return i

    with ToolRegistry([sometimes]) as registry:
        _until_seen_quick(registry, ToolCall("sometimes", {"i": -1}))
        before = registry.stats()["sometimes"]["outcomes"]
        calls = [ToolCall("sometimes", {"i": i, "slow": i >= 2}, id=f"c{i}") for i in range(9)]
        calls[1] = ToolCall("sometimes", {"i": "one"}, id="bad1")  # before the tool turns slow
        calls[6] = ToolCall("sometimes", '{"i": "six"}', id="bad6")  # after: the pool's part
        calls[7] = ToolCall("nope", {}, id="gone")
        results = registry.execute_many(calls)
        after = registry.stats()["sometimes"]["outcomes"]
    assert [r.call_id for r in results] == [c.id for c in calls]
    assert [r.outcome for r in results] == ["ok", "invalid_arguments"] + ["ok"] * 4 + [
        "invalid_arguments",
        "unknown_tool",
        "ok",
    ]
    assert [r.data for r in results if r.outcome == "ok"] == [0, 2, 3, 4, 5, 8]
    assert "/i" in results[1].content and "/i" in results[6].content
    assert "sometimes" in results[7].content  # the closest name
    # Each call counted once, whichever path ran or answered it.
    assert after["ok"] - before.get("ok", 0) == 6
    assert after["invalid_arguments"] - before.get("invalid_arguments", 0) == 2


def test_a_batch_of_quick_calls_gives_each_call_what_a_lone_execute_gives_it():
    @tool
    def echo(text: str, times: int = 1) -> str:
        """Repeat the text."""
        return text * times

    calls = [
        ToolCall("echo", {"text": "a"}),
        ToolCall("echo", '{"text": "b", "times": 2}'),
        ToolCall("echo", {"text": "ünï", "times": 1}),
        ToolCall("echo", {"text": object()}),  # cannot be sent as JSON
        ToolCall("echo", '{"text": "\ud800"}'),  # a lone surrogate
        ToolCall("echo", "{not json"),
        ToolCall("echo", 42),  # type: ignore[arg-type]
        ToolCall("ech\u00f6", {}),
        ToolCall("echo", {"text": "z"}),
    ]
    with ToolRegistry([echo]) as registry:
        _until_seen_quick(registry, ToolCall("echo", {"text": ""}))
        batch = registry.execute_many(calls)
        lone = [registry.execute(call) for call in calls]
    assert [(r.call_id, r.content, r.outcome, r.data) for r in batch] == [
        (r.call_id, r.content, r.outcome, r.data) for r in lone
    ]
    assert batch[0].data == "a" and batch[1].data == "bb" and batch[-1].data == "z"


def test_a_lone_surrogate_in_one_calls_arguments_is_that_calls_invalid_arguments_on_the_pool_too():
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    calls = [ToolCall("echo", {"text": "a"}), ToolCall("echo", '{"text": "\ud800"}'), ToolCall("echo", '{"text": "é"}')]
    with ToolRegistry([echo]) as registry:
        pooled = registry.execute_many(calls, timeout=30)  # a timeout: capstan's pool
        lone = registry.execute(calls[1])
    assert [r.outcome for r in pooled] == ["ok", "invalid_arguments", "ok"]
    assert pooled[1].content == lone.content and "not valid JSON" in lone.content
    assert pooled[2].data == "é"


"""Issue #46's rows for `make bench-bindings`: capstan beside openai-agents
(FunctionTool.on_invoke_tool, its own invocation path), a lone call, 100
calls and 10,000 calls, of a trivial tool and of a tool awaiting 2 ms of
I/O; each printed as one BENCH-ROW line (see /work/briefs' common rules:
binding, case, tool, metric, capstan, peer, peer_value, goal, met) after a
human line. `goal` is issue 46's own (sync add <= 3 us; 10k async tools
gathered >= 2x openai-agents; 10k sync tools >= 150k calls/s), null on
the rows it sets none for. Every figure is the best of `trials`, the two frameworks' trials
taken in turn."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

ARGS_JSON = '{"a": 1, "b": 2}'
IO_S = 0.002
PEER = "openai-agents on_invoke_tool"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def aadd(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def io(i: int) -> int:
    """Wait 2 ms for I/O."""
    await asyncio.sleep(IO_S)
    return i


def _timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _best(pair: dict[str, Callable[[], Any]], trials: int) -> dict[str, float]:
    for run in pair.values():
        run()  # warm
    best = {k: float("inf") for k in pair}
    for _ in range(trials):
        for k, run in pair.items():
            best[k] = min(best[k], _timed(run))
    return best


def _row(case: str, tool: str, metric: str, capstan: float, peer: float, goal: str | None, met: bool | None) -> None:
    print(f"  {case:12} {tool:9} {metric:14} capstan {capstan:10.2f}   {PEER} {peer:10.2f}   goal {goal}: {met}")
    row = {
        "binding": "python",
        "case": case,
        "tool": tool,
        "metric": metric,
        "capstan": round(capstan, 2),
        "peer": PEER,
        "peer_value": round(peer, 2),
        "goal": goal,
        "met": met,
    }
    print("BENCH-ROW " + json.dumps(row), flush=True)


def run(trials: int, lone: int = 2000) -> None:
    import capstan
    from agents import function_tool
    from agents.tool_context import ToolContext

    registry = capstan.ToolRegistry([add, aadd, io])
    peer = {f.__name__: function_tool(f) for f in (add, aadd, io)}

    def ctx(name: str, args: str, i: int = 0) -> ToolContext:
        return ToolContext(context=None, tool_name=name, tool_call_id=f"call_{i}", tool_arguments=args)

    def peer_loop(name: str, args: str, n: int) -> Callable[[], Any]:
        t, c = peer[name], ctx(name, args)

        async def go() -> None:
            for _ in range(n):
                await t.on_invoke_tool(c, args)

        return lambda: asyncio.run(go())

    def peer_gather(name: str, args: list[str]) -> Callable[[], Any]:
        t = peer[name]
        contexts = [ctx(name, a, i) for i, a in enumerate(args)]

        async def go() -> None:
            await asyncio.gather(*(t.on_invoke_tool(c, a) for c, a in zip(contexts, args)))

        return lambda: asyncio.run(go())

    call = capstan.ToolCall("add", ARGS_JSON)
    acall = capstan.ToolCall("aadd", ARGS_JSON)
    print(f"\nIssue 46's rows, capstan beside {PEER} (best of {trials}, interleaved):")

    # A lone call of a trivial tool: sync execute (goal <= 3 us), then awaited aexecute.
    def lone_sync() -> None:
        execute = registry.execute
        for _ in range(lone):
            execute(call)

    def lone_async() -> None:
        async def go() -> None:
            aexecute = registry.aexecute
            for _ in range(lone):
                await aexecute(acall)

        asyncio.run(go())

    b = _best({"capstan": lone_sync, "peer": peer_loop("add", ARGS_JSON, lone)}, trials)
    c, p = b["capstan"] / lone * 1e6, b["peer"] / lone * 1e6
    _row("lone call", "trivial", "wall us/call", c, p, "sync add <= 3 us", c <= 3.0)
    b = _best({"capstan": lone_async, "peer": peer_loop("aadd", ARGS_JSON, lone)}, trials)
    c, p = b["capstan"] / lone * 1e6, b["peer"] / lone * 1e6
    _row("lone call", "trivial", "wall us/call (async)", c, p, None, None)

    io_calls = max(lone // 20, 20)

    def lone_io() -> None:
        async def go() -> None:
            aexecute, one = registry.aexecute, capstan.ToolCall("io", {"i": 1})
            for _ in range(io_calls):
                await aexecute(one)

        asyncio.run(go())

    b = _best({"capstan": lone_io, "peer": peer_loop("io", '{"i": 1}', io_calls)}, trials)
    c, p = b["capstan"] / io_calls * 1e6, b["peer"] / io_calls * 1e6
    _row("lone call", "2 ms I/O", "wall us/call", c, p, None, None)

    for n, case in ((100, "100 calls"), (10000, "10000 calls")):
        many = [capstan.ToolCall("aadd", ARGS_JSON, id=f"c{i}") for i in range(n)]

        def batch(many: list[Any] = many) -> None:
            asyncio.run(registry.aexecute_many(many, limit=len(many)))

        def gathered(n: int = n) -> None:
            async def go() -> None:
                aexecute = registry.aexecute
                await asyncio.gather(*(aexecute(acall) for _ in range(n)))

            asyncio.run(go())

        pg = peer_gather("aadd", [ARGS_JSON] * n)
        b = _best({"capstan": batch, "gathered": gathered, "peer": pg}, trials)
        c, g, p = n / b["capstan"], n / b["gathered"], n / b["peer"]
        _row(case, "trivial", "calls/s (aexecute_many)", c, p, None, None)
        goal = "10k async gathered >= 2x peer" if n == 10000 else None
        _row(case, "trivial", "calls/s (aexecute gathered)", g, p, goal, g >= 2 * p if goal else None)
        sync_many = [capstan.ToolCall("add", ARGS_JSON, id=f"s{i}") for i in range(n)]
        b = _best({"capstan": lambda: registry.execute_many(sync_many), "peer": peer_gather("add", [ARGS_JSON] * n)}, trials)
        c, p = n / b["capstan"], n / b["peer"]
        goal = "10k sync >= 150k calls/s" if n == 10000 else None
        _row(case, "trivial", "calls/s (sync tools)", c, p, goal, c >= 150_000 if goal else None)
        ios = [capstan.ToolCall("io", {"i": i}, id=f"io{i}") for i in range(n)]
        b = _best(
            {
                "capstan": lambda: asyncio.run(registry.aexecute_many(ios, limit=len(ios))),
                "peer": peer_gather("io", [json.dumps({"i": i}) for i in range(n)]),
            },
            trials,
        )
        _row(case, "2 ms I/O", "ms total", b["capstan"] * 1e3, b["peer"] * 1e3, None, None)

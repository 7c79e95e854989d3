"""Per-call overhead and fan-out of capstan's Python binding against the
tool-invocation paths of openai-agents, pydantic-ai and langchain-core.

    python bindings/python/bench/bench.py [--venv DIR] [--results FILE] [--quick] [--throughput]

Makes a virtualenv (python -m venv, default bindings/python/bench/.venv),
installs openai-agents, pydantic-ai-slim, langchain-core and this package
into it, then runs itself inside it. libcapstan comes from $CAPSTAN_LIB, else
the checkout's target/release (build it first: cargo build --release --lib).

What is measured, for the same `add(a: int, b: int) -> int` tool, sync and
`async def`, each through the framework's own invocation path with JSON
arguments as a model sends them:

  capstan         ToolRegistry.execute (blocking) / aexecute (event loop)
  openai-agents   FunctionTool.on_invoke_tool(ToolContext, json_args)
  pydantic-ai     ToolManager.handle_call(ToolCallPart) (validation + call)
  langchain-core  BaseTool.invoke / ainvoke

and the wall time of 64 calls of a tool that sleeps 20 ms, run at once
(capstan: execute_many/aexecute_many with limit=64; the others:
asyncio.gather over their invocation path). Each figure is the best of
several trials, taken in turn across the frameworks (the machine may be
shared); not run by the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent
REPO = PACKAGE.parent.parent
PEERS = ["openai-agents", "pydantic-ai-slim", "langchain-core", "fastjsonschema"]


# --- outer: the virtualenv -----------------------------------------------------


def outer(args: argparse.Namespace) -> int:
    env_dir = Path(args.venv).resolve()
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not python.exists():
        print(f"creating virtualenv {env_dir}", flush=True)
        venv.EnvBuilder(with_pip=True).create(env_dir)
    print("installing " + ", ".join(PEERS) + " and capstan", flush=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--upgrade", *PEERS, str(PACKAGE)],
        check=True,
    )
    env = dict(os.environ)
    if "CAPSTAN_LIB" not in env:
        built = REPO / "target" / "release" / "libcapstan.so"
        if not built.exists():
            print(f"no {built}: run `cargo build --release --lib` or set CAPSTAN_LIB", file=sys.stderr)
            return 1
        env["CAPSTAN_LIB"] = str(built)
    inner = [str(python), str(Path(__file__).resolve()), "--inner"]
    if args.results:
        inner += ["--results", args.results]
    if args.quick:
        inner.append("--quick")
    if args.trials:
        inner += ["--trials", str(args.trials)]
    if args.throughput:
        inner.append("--throughput")
    if args.rows:
        inner.append("--rows")
    # Run from the bench directory so that the installed capstan is imported.
    return subprocess.run(inner, env=env, cwd=HERE).returncode


# --- inner: the measurements ----------------------------------------------------


class PerCall:
    """Microseconds per call of a batch of `calls`."""

    def __init__(self, run_batch, calls: int) -> None:
        self.run_batch, self.calls = run_batch, calls

    def warm(self) -> None:
        self.run_batch(max(self.calls // 10, 50))

    def trial(self) -> float:
        start = time.perf_counter()
        self.run_batch(self.calls)
        return (time.perf_counter() - start) / self.calls * 1e6


class Wall:
    """Milliseconds of one run."""

    def __init__(self, run_once) -> None:
        self.run_once = run_once

    def warm(self) -> None:
        self.run_once()

    def trial(self) -> float:
        start = time.perf_counter()
        self.run_once()
        return (time.perf_counter() - start) * 1e3


def measure_interleaved(measures: dict[str, dict[str, object]], trials: int) -> dict[str, dict[str, float]]:
    """Best of `trials` for every measure, the trials of all frameworks taken
    in turn, so that a load that comes and goes hits them alike."""
    for group in measures.values():
        for m in group.values():
            m.warm()
    best: dict[str, dict[str, float]] = {f: {} for f in measures}
    for _ in range(trials):
        for framework, group in measures.items():
            for label, m in group.items():
                value = m.trial()
                best[framework][label] = min(value, best[framework].get(label, value))
    return best


ARGS = {"a": 1, "b": 2}
ARGS_JSON = json.dumps(ARGS)
BAD_JSON = json.dumps({"a": 1, "b": "two"})
MANY = 10000
FAN = 64
NAP = 0.02


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def aadd(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def nap(i: int) -> int:
    """Sleep 20 ms."""
    time.sleep(NAP)
    return i


async def anap(i: int) -> int:
    """Sleep 20 ms."""
    await asyncio.sleep(NAP)
    return i


def bench_capstan(calls: int) -> dict[str, object]:
    import capstan

    registry = capstan.ToolRegistry([add, aadd, nap, anap])
    sync_call = capstan.ToolCall("add", ARGS_JSON)
    async_call = capstan.ToolCall("aadd", ARGS_JSON)
    assert registry.execute(sync_call).data == 3
    out = {}

    def run(call):
        def batch(n):
            execute = registry.execute
            for _ in range(n):
                execute(call)

        return batch

    def arun(call):
        def batch(n):
            async def go():
                aexecute = registry.aexecute
                for _ in range(n):
                    await aexecute(call)

            asyncio.run(go())

        return batch

    out["sync"] = PerCall(run(sync_call), calls)
    out["sync (async API)"] = PerCall(arun(sync_call), calls // 4)
    out["async"] = PerCall(arun(async_call), calls // 4)
    out["async (blocking API)"] = PerCall(run(async_call), calls // 4)
    bad_call = capstan.ToolCall("add", BAD_JSON)
    assert registry.execute(bad_call).outcome == "invalid_arguments"
    out["invalid"] = PerCall(run(bad_call), calls)
    out["invalid (async API)"] = PerCall(arun(bad_call), calls // 4)
    many_sync = [capstan.ToolCall("add", ARGS_JSON) for _ in range(MANY)]

    def gather_async(n):
        async def go():
            aexecute = registry.aexecute
            await asyncio.gather(*(aexecute(async_call) for _ in range(n)))

        asyncio.run(go())

    out["10k async gathered"] = PerCall(gather_async, MANY)
    out["10k sync"] = PerCall(lambda n: registry.execute_many(many_sync[:n]), MANY)
    fan_sync = [capstan.ToolCall("nap", {"i": i}) for i in range(FAN)]
    fan_async = [capstan.ToolCall("anap", {"i": i}) for i in range(FAN)]
    out["fan sync"] = Wall(lambda: registry.execute_many(fan_sync, limit=FAN))
    out["fan async"] = Wall(lambda: asyncio.run(registry.aexecute_many(fan_async, limit=FAN)))
    return out  # the registry lives until the process ends


def bench_openai_agents(calls: int) -> dict[str, object]:
    from agents import function_tool
    from agents.tool_context import ToolContext

    tools = {f.__name__: function_tool(f) for f in (add, aadd, nap, anap)}

    def ctx(name: str, args: str) -> ToolContext:
        return ToolContext(context=None, tool_name=name, tool_call_id="call_1", tool_arguments=args)

    def per_call(name):
        t = tools[name]
        c = ctx(name, ARGS_JSON)

        def batch(n):
            async def go():
                for _ in range(n):
                    await t.on_invoke_tool(c, ARGS_JSON)

            asyncio.run(go())

        return batch

    def fan(name):
        t = tools[name]

        async def go():
            await asyncio.gather(
                *(t.on_invoke_tool(ctx(name, json.dumps({"i": i})), json.dumps({"i": i})) for i in range(FAN))
            )

        return lambda: asyncio.run(go())

    def invalid(n):
        t, c = tools["add"], ctx("add", BAD_JSON)

        async def go():
            for _ in range(n):
                await t.on_invoke_tool(c, BAD_JSON)

        asyncio.run(go())

    def gathered(name):
        t = tools[name]
        c = ctx(name, ARGS_JSON)

        def batch(n):
            async def go():
                await asyncio.gather(*(t.on_invoke_tool(c, ARGS_JSON) for _ in range(n)))

            asyncio.run(go())

        return batch

    assert asyncio.run(tools["add"].on_invoke_tool(ctx("add", ARGS_JSON), ARGS_JSON)) == 3
    return {
        "sync": PerCall(per_call("add"), calls // 4),
        "async": PerCall(per_call("aadd"), calls // 4),
        "invalid": PerCall(invalid, calls // 4),
        "10k async gathered": PerCall(gathered("aadd"), MANY),
        "10k sync": PerCall(gathered("add"), MANY),
        "fan sync": Wall(fan("nap")),
        "fan async": Wall(fan("anap")),
    }


def bench_pydantic_ai(calls: int) -> dict[str, object]:
    from pydantic_ai._run_context import RunContext
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.toolsets import FunctionToolset
    from pydantic_ai.usage import RunUsage

    async def manager():
        ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
        return await ToolManager(FunctionToolset([add, aadd, nap, anap])).for_run_step(ctx)

    def per_call(name):
        def batch(n):
            async def go():
                tm = await manager()
                call = ToolCallPart(tool_name=name, args=ARGS_JSON, tool_call_id="call_1")
                for _ in range(n):
                    await tm.handle_call(call)

            asyncio.run(go())

        return batch

    def fan(name):
        async def go():
            tm = await manager()
            await asyncio.gather(
                *(tm.handle_call(ToolCallPart(tool_name=name, args={"i": i}, tool_call_id=f"c{i}")) for i in range(FAN))
            )

        return lambda: asyncio.run(go())

    return {
        "sync": PerCall(per_call("add"), calls // 10),
        "async": PerCall(per_call("aadd"), calls // 10),
        "fan sync": Wall(fan("nap")),
        "fan async": Wall(fan("anap")),
    }


def bench_langchain(calls: int) -> dict[str, object]:
    from langchain_core.tools import StructuredTool

    sync_tool = StructuredTool.from_function(add)
    async_tool = StructuredTool.from_function(coroutine=aadd, name="aadd", description="Add two integers.")
    nap_tool = StructuredTool.from_function(nap)
    anap_tool = StructuredTool.from_function(coroutine=anap, name="anap", description="Sleep 20 ms.")
    assert sync_tool.invoke(ARGS) == 3

    def sync_batch(n):
        for _ in range(n):
            sync_tool.invoke(json.loads(ARGS_JSON))

    def async_batch(n):
        async def go():
            for _ in range(n):
                await async_tool.ainvoke(json.loads(ARGS_JSON))

        asyncio.run(go())

    def fan(t, use_async):
        async def go():
            if use_async:
                await asyncio.gather(*(t.ainvoke({"i": i}) for i in range(FAN)))
            else:
                await asyncio.gather(*(asyncio.to_thread(t.invoke, {"i": i}) for i in range(FAN)))

        return lambda: asyncio.run(go())

    return {
        "sync": PerCall(sync_batch, calls // 20),
        "async": PerCall(async_batch, calls // 20),
        "fan sync": Wall(fan(nap_tool, False)),
        "fan async": Wall(fan(anap_tool, True)),
    }


def bench_baseline(calls: int) -> dict[str, object]:
    """The same work written by hand in pure Python: parse the JSON
    arguments, validate them with a compiled fastjsonschema validator, call
    the function, render its result as text, build a result record."""
    import fastjsonschema

    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    validate = fastjsonschema.compile(schema)
    invalid = (ValueError, fastjsonschema.JsonSchemaException)

    def render(value):
        return value if isinstance(value, str) else json.dumps(value)

    def run_sync(args_json):
        try:
            args = validate(json.loads(args_json))
        except invalid as exc:
            return {"content": f"Invalid arguments: {exc}", "is_error": True}
        value = add(**args)
        return {"content": render(value), "is_error": False, "data": value}

    async def run_async(args_json):
        try:
            args = validate(json.loads(args_json))
        except invalid as exc:
            return {"content": f"Invalid arguments: {exc}", "is_error": True}
        value = await aadd(**args)
        return {"content": render(value), "is_error": False, "data": value}

    assert run_sync(ARGS_JSON)["data"] == 3 and run_sync(BAD_JSON)["is_error"]

    def sync_batch(args_json):
        def batch(n):
            for _ in range(n):
                run_sync(args_json)

        return batch

    def async_batch(n):
        async def go():
            for _ in range(n):
                await run_async(ARGS_JSON)

        asyncio.run(go())

    def gathered(n):
        async def go():
            await asyncio.gather(*(run_async(ARGS_JSON) for _ in range(n)))

        asyncio.run(go())

    return {
        "sync": PerCall(sync_batch(ARGS_JSON), calls),
        "async": PerCall(async_batch, calls // 4),
        "invalid": PerCall(sync_batch(BAD_JSON), calls),
        "10k async gathered": PerCall(gathered, MANY),
        "10k sync": PerCall(sync_batch(ARGS_JSON), MANY),
    }


def versions() -> dict[str, str]:
    from importlib.metadata import version

    import capstan

    out = {"capstan (libcapstan)": capstan.version()}
    for name in PEERS:
        out[name] = version(name)
    return out


THROUGHPUT_ROWS = ("sync", "async", "10k async gathered", "10k sync")


def throughput(calls: int, trials: int) -> int:
    """--throughput: issue #34's rows only, capstan against openai-agents,
    interleaved (a shorter run that a loaded machine can still compare)."""
    c, o = bench_capstan(calls), bench_openai_agents(calls)
    best = measure_interleaved(
        {"capstan": {k: c[k] for k in THROUGHPUT_ROWS}, "openai-agents": {k: o[k] for k in THROUGHPUT_ROWS}}, trials
    )
    print("| row | capstan | openai-agents | ratio (openai-agents time / capstan time) |")
    print("| --- | ---: | ---: | ---: |")
    for k in THROUGHPUT_ROWS:
        cv, ov = best["capstan"][k], best["openai-agents"][k]
        if k.startswith("10k"):
            print(f"| {k} | {1e3 / cv:.1f}k calls/s | {1e3 / ov:.1f}k calls/s | {ov / cv:.2f}x |")
        else:
            print(f"| {k} call | {cv:.2f} us | {ov:.2f} us | {ov / cv:.2f}x |")
    return 0


def inner(args: argparse.Namespace) -> int:
    calls = 2000 if args.quick else 20000
    trials = args.trials or (3 if args.quick else 7)
    if args.throughput:
        return throughput(calls // 5, trials)
    if args.rows:
        import peer_rows

        peer_rows.run(trials, calls // 10)
        return 0
    results = measure_interleaved(
        {
            "capstan": bench_capstan(calls),
            "openai-agents": bench_openai_agents(calls),
            "pydantic-ai": bench_pydantic_ai(calls),
            "langchain-core": bench_langchain(calls),
            "fastjsonschema loop": bench_baseline(calls),
        },
        trials,
    )
    oa_sync = results["openai-agents"]["sync"]
    lines = [
        "| framework | sync add, us/call | async add, us/call | 64 x 20 ms sync, ms | 64 x 20 ms async, ms |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    c = results["capstan"]
    lines.append(
        f"| capstan (blocking API) | {c['sync']:.1f} | {c['async (blocking API)']:.1f} | {c['fan sync']:.1f} | - |"
    )
    lines.append(
        f"| capstan (async API) | {c['sync (async API)']:.1f} | {c['async']:.1f} | - | {c['fan async']:.1f} |"
    )
    for name in ("openai-agents", "pydantic-ai", "langchain-core"):
        r = results[name]
        lines.append(f"| {name} | {r['sync']:.1f} | {r['async']:.1f} | {r['fan sync']:.1f} | {r['fan async']:.1f} |")
    table = "\n".join(lines)
    o, h = results["openai-agents"], results["fastjsonschema loop"]

    def per_s(us):
        return f"{1e6 / us / 1000:.1f}k/s"

    issue = [
        "| row | capstan | openai-agents | ratio | hand-written fastjsonschema loop |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| sync tool, blocking `execute` | {c['sync']:.1f} us | {o['sync']:.1f} us | "
        f"{o['sync'] / c['sync']:.1f}x | {h['sync']:.1f} us |",
        f"| async tool, `aexecute` | {c['async']:.1f} us | {o['async']:.1f} us | "
        f"{o['async'] / c['async']:.1f}x | {h['async']:.1f} us |",
        f"| invalid arguments, blocking / `aexecute` | {c['invalid']:.1f} / {c['invalid (async API)']:.1f} us | "
        f"{o['invalid']:.1f} us | {o['invalid'] / c['invalid']:.1f}x / {o['invalid'] / c['invalid (async API)']:.1f}x | "
        f"{h['invalid']:.1f} us |",
        f"| throughput, 10k async tools gathered | {per_s(c['10k async gathered'])} | "
        f"{per_s(o['10k async gathered'])} | {o['10k async gathered'] / c['10k async gathered']:.2f}x | "
        f"{per_s(h['10k async gathered'])} |",
        f"| throughput, 10k sync tools | {per_s(c['10k sync'])} | {per_s(o['10k sync'])} | "
        f"{o['10k sync'] / c['10k sync']:.1f}x | {per_s(h['10k sync'])} |",
    ]
    table += "\n\nIssue 16's rows (ratio = openai-agents time / capstan time):\n\n" + "\n".join(issue)
    summary = (
        f"capstan sync call: {c['sync']:.1f} us (goal <= 10 us); "
        f"{oa_sync / c['sync']:.1f}x faster than openai-agents on_invoke_tool for a sync tool (goal >= 10x)."
    )
    env = (
        f"Python {platform.python_version()} on {platform.machine()} {platform.system()}, "
        f"{os.cpu_count()} CPUs; best of {trials} trials; "
        + ", ".join(f"{k} {v}" for k, v in versions().items())
    )
    print()
    print(table)
    print()
    print(summary)
    print(env)
    import peer_rows  # issue 46's BENCH-ROW lines, for make bench-bindings

    peer_rows.run(trials, calls // 10)
    if args.results:
        Path(args.results).write_text(
            "# capstan Python binding: benchmark\n\n"
            "Command (from the repository root, after `cargo build --release --lib`):\n\n"
            "    python bindings/python/bench/bench.py\n\n"
            f"{table}\n\n{summary}\n\n{env}\n\n"
            "Per-call figures: microseconds for one call of `add(a: int, b: int)` with JSON arguments, "
            "through each framework's own invocation path (capstan: ToolRegistry.execute / aexecute; "
            "openai-agents: FunctionTool.on_invoke_tool; pydantic-ai: ToolManager.handle_call; "
            "langchain-core: BaseTool.invoke / ainvoke). Fan-out: wall time of 64 calls of a tool "
            "sleeping 20 ms, started together (capstan limit=64; the others asyncio.gather).\n"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", default=str(HERE / ".venv"))
    parser.add_argument("--results", default=str(HERE / "RESULTS.md"), help="write the table here ('' = don't)")
    parser.add_argument("--quick", action="store_true", help="fewer calls and trials")
    parser.add_argument("--trials", type=int, default=0, help="trials per figure (default 7; 3 with --quick)")
    parser.add_argument(
        "--throughput", action="store_true", help="only the single-call and 10k rows, against openai-agents"
    )
    parser.add_argument(
        "--rows", action="store_true", help="only issue 46's BENCH-ROW rows (capstan beside openai-agents)"
    )
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    return inner(args) if args.inner else outer(args)


if __name__ == "__main__":
    sys.exit(main())

"""Issue #34's capstan rows alone, no peer installed: a lone sync call, an
awaited async call, 10,000 async tools gathered and 10,000 sync tools in one
execute_many, each the best of --trials. For comparing two builds of the
binding on a loaded machine, alternate runs of the two:

    for i in 1 2 3; do
      PYTHONPATH=before CAPSTAN_LIB=... python bindings/python/bench/rows.py --label before
      PYTHONPATH=bindings/python CAPSTAN_LIB=... python bindings/python/bench/rows.py --label after
    done

Prints one line per run: label, then us per lone call and k calls/s.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import capstan

ARGS_JSON = '{"a": 1, "b": 2}'
MANY = 10_000


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def aadd(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def best(fn, n: int, trials: int) -> float:
    """Best seconds per unit of `fn(n)` over `trials`."""
    fn(max(n // 10, 50))
    out = float("inf")
    for _ in range(trials):
        start = time.perf_counter()
        fn(n)
        out = min(out, (time.perf_counter() - start) / n)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", default="capstan")
    parser.add_argument("--trials", type=int, default=7)
    parser.add_argument("--calls", type=int, default=4000)
    args = parser.parse_args()
    registry = capstan.ToolRegistry([add, aadd])
    sync_call = capstan.ToolCall("add", ARGS_JSON)
    async_call = capstan.ToolCall("aadd", ARGS_JSON)
    many = [capstan.ToolCall("add", ARGS_JSON) for _ in range(MANY)]
    assert registry.execute(sync_call).data == 3
    assert [r.data for r in registry.execute_many(many[:3])] == [3, 3, 3]

    def lone(n):
        execute = registry.execute
        for _ in range(n):
            execute(sync_call)

    def awaited(n):
        async def go():
            aexecute = registry.aexecute
            for _ in range(n):
                await aexecute(async_call)

        asyncio.run(go())

    def gathered(n):
        async def go():
            aexecute = registry.aexecute
            await asyncio.gather(*(aexecute(async_call) for _ in range(n)))

        asyncio.run(go())

    def batch(n):
        registry.execute_many(many[:n])

    t = args.trials
    figures = {
        "lone sync us": best(lone, args.calls, t) * 1e6,
        "awaited async us": best(awaited, args.calls // 4, t) * 1e6,
        "10k async gathered k/s": 1e-3 / best(gathered, MANY, t),
        "10k sync k/s": 1e-3 / best(batch, MANY, t),
    }
    print(args.label.ljust(8), "  ".join(f"{k} {v:.2f}" for k, v in figures.items()), flush=True)


if __name__ == "__main__":
    main()

"""Tools defined under `from __future__ import annotations` (string hints)."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal, Optional

from capstan import tool


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


@tool
def place(point: Point, label: Annotated[str, "What to write"], mode: Literal["a", "b"] = "a",
          note: Optional[str] = None, tags: list[str] | None = None) -> str:
    """Place a label at a point.

    Args:
        point: Where.
        label: Ignored: Annotated wins.
    """
    return f"{label}@{point.x},{point.y}:{mode}:{note}:{tags}"


def make_local_tool():
    @dataclasses.dataclass
    class Local:
        n: int

    @tool
    def use_local(item: Local) -> int:
        """Use a class local to the defining function."""
        return item.n * 2

    return use_local

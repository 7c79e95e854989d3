import gc
import sys
import threading
from pathlib import Path

import pytest

# The package next to these tests, even when another copy is installed
# (`pip install ./bindings/python` makes a copy that edits do not reach).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import capstan  # noqa: E402
from capstan import _callbacks  # noqa: E402


@pytest.fixture
def registry():
    with capstan.ToolRegistry() as reg:
        yield reg


@pytest.fixture(autouse=True)
def no_leaked_executions():
    yield
    # Every execution removes its Python-side state when its C call returns.
    assert not _callbacks._executions
    assert not _callbacks._inline


def live_entries() -> int:
    gc.collect()
    return len(_callbacks._entries)


class Gauge:
    """Counts how many calls run at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def __enter__(self):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def __exit__(self, *exc):
        with self.lock:
            self.now -= 1

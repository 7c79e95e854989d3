import gc
import sys
from pathlib import Path

import pytest

# The package next to these tests, even when another copy is installed
# (`pip install ./bindings/python` makes a copy that edits do not reach).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import capstan  # noqa: E402
from capstan import _registry  # noqa: E402


@pytest.fixture
def registry():
    with capstan.ToolRegistry() as reg:
        yield reg


@pytest.fixture(autouse=True)
def no_leaked_executions():
    yield
    # Every execution removes its Python-side state when its C call returns.
    assert not _registry._executions
    assert not _registry._inline


def live_entries() -> int:
    gc.collect()
    return len(_registry._entries)

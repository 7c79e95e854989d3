import gc

import pytest

import capstan
from capstan import _registry


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

"""ToolRegistry.mount_mcp(input=...): the host answers what a mounted server
asks while running a tool. The server is capstan's own, in-process over HTTP,
serving a tool that raises InputRequired; the mount answers for either
protocol era, and a host that gives no answer (or raises) fails the call as a
tool error without harm."""

import time

import pytest

from capstan import Context, InputRequired, ToolCall, ToolRegistry, _mcp_client, tool

ASK = {
    "name": {
        "method": "elicitation/create",
        "params": {
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        },
    }
}


@tool
def ask_name(ctx: Context) -> str:
    """Asks for a name, then greets it."""
    answer = (ctx.input.get("inputResponses") or {}).get("name") or {}
    if answer.get("action") != "accept":
        raise InputRequired(ASK, state="asked")
    return f"Hello, {answer['content']['name']}!"


@pytest.fixture(scope="module")
def served():
    with ToolRegistry([ask_name]) as registry, registry.start_mcp_server() as server:
        yield server.url


def _held_after(before: set) -> set:
    return set(_mcp_client._held) - before


def _released(before: set) -> bool:
    """capstan let go of the mount's answerer (bounded wait: input_destroy
    may run on one of its threads, soon after the unmount)."""
    for _ in range(200):
        if not _held_after(before):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_a_servers_input_request_is_answered_by_the_host(served, version):
    asked = []

    def answer(tool, method, params):
        asked.append((tool, method, params))
        return {"action": "accept", "content": {"name": "Ada"}}

    before = set(_mcp_client._held)
    with ToolRegistry() as reg:
        with reg.mount_mcp(url=served, prefix="in_", protocol_version=version, input=answer) as mount:
            assert _held_after(before), "the answerer is held while mounted"
            result = reg.execute(ToolCall("in_ask_name", {}))
        assert not mount.connected
    assert result.outcome == "ok" and result.content == "Hello, Ada!", result
    assert len(asked) == 1
    tool, method, params = asked[0]
    # A 2026-07-28 request belongs to the call; an older one names none.
    assert tool == ("in_ask_name" if version is None else None)
    assert method == "elicitation/create"
    assert params["message"] == "What is your name?"
    assert params["requestedSchema"]["required"] == ["name"]
    assert _released(before), "input_destroy released the answerer"


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_an_async_answerer_is_awaited(served, version):
    async def answer(tool, method, params):
        return {"action": "accept", "content": {"name": "Grace"}}

    with ToolRegistry() as reg, reg.mount_mcp(url=served, protocol_version=version, input=answer):
        result = reg.execute(ToolCall("ask_name", {}))
    assert result.content == "Hello, Grace!", result


def test_a_host_that_gives_no_answer_fails_the_call_saying_so(served):
    before = set(_mcp_client._held)
    with ToolRegistry() as reg, reg.mount_mcp(url=served, input=lambda tool, method, params: None):
        result = reg.execute(ToolCall("ask_name", {}))
    assert result.outcome == "tool_error", result
    assert "the host gave no answer to elicitation/create" in result.content, result
    assert _released(before)


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_an_answerer_that_raises_gives_no_answer_and_nothing_breaks(served, version):
    def answer(tool, method, params):
        raise RuntimeError("the user closed the window")

    before = set(_mcp_client._held)
    with ToolRegistry() as reg, reg.mount_mcp(url=served, protocol_version=version, input=answer):
        result = reg.execute(ToolCall("ask_name", {}))
        assert result.is_error, result
        if version is None:
            assert "the host gave no answer to elicitation/create" in result.content, result
        # The mount still serves the next call (a JSON-able answer this time is not needed).
        again = reg.execute(ToolCall("ask_name", {}))
        assert again.is_error, again
    assert _released(before)


def test_an_answer_that_is_not_json_is_no_answer(served):
    with ToolRegistry() as reg, reg.mount_mcp(url=served, input=lambda tool, method, params: object()):
        result = reg.execute(ToolCall("ask_name", {}))
    assert result.outcome == "tool_error" and "gave no answer" in result.content, result


def test_bad_input_options_are_clear_errors(served):
    before = set(_mcp_client._held)
    with ToolRegistry() as reg:
        with pytest.raises(ValueError, match="input_methods needs input"):
            reg.mount_mcp(url=served, input_methods=["roots/list"])
        with pytest.raises(ValueError, match="input_methods is empty"):
            reg.mount_mcp(url=served, input=lambda *a: None, input_methods=[])
        with pytest.raises(ValueError, match="unknown method 'ping'"):
            reg.mount_mcp(url=served, input=lambda *a: None, input_methods=["elicitation/create", "ping"])
        with pytest.raises(TypeError, match="not one string"):
            reg.mount_mcp(url=served, input=lambda *a: None, input_methods="roots/list")
        with pytest.raises(TypeError, match="input is a callable"):
            reg.mount_mcp(url=served, input="yes")  # type: ignore[arg-type]
        # A mount that fails in capstan still releases the answerer once.
        with pytest.raises(Exception):
            reg.mount_mcp(url="http://127.0.0.1:1/mcp", input=lambda *a: None, connect_timeout=2, max_reconnects=0)
    assert _released(before)


def test_the_methods_named_are_declared_to_the_server(served):
    # A method set without elicitation: the server's elicitation request is
    # one the client never declared, so the host is not asked.
    asked = []
    with ToolRegistry() as reg:
        with reg.mount_mcp(
            url=served, input=lambda *a: asked.append(a), input_methods=["roots/list", "sampling/createMessage"]
        ):
            result = reg.execute(ToolCall("ask_name", {}))
    assert result.is_error, result
    assert asked == []

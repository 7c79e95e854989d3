"""A Python tool asking its caller for input (raise InputRequired; read
ctx.input): an MCP client of either era (the official SDK's Client) answers
and the tool gets the answers and its state back; any other caller cannot be
asked, and the call is a tool error saying why."""

import asyncio

import pytest

import capstan
from capstan import Context, InputRequired, ToolCall, ToolRegistry, tool

ASK = {
    "name": {
        "method": "elicitation/create",
        "params": {
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        },
    }
}

seen: list[dict] = []


@tool
def greet(ctx: Context) -> str:
    """Greets the user by name, asking for it first."""
    seen.append(ctx.input)
    answer = (ctx.input.get("inputResponses") or {}).get("name") or {}
    if answer.get("action") != "accept":
        raise InputRequired(ASK, state="asked-name")
    return f"Hello, {answer['content']['name']}! ({ctx.input.get('requestState')})"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_an_mcp_client_of_either_era_answers_what_a_python_tool_asks(mode):
    mcp = pytest.importorskip("mcp")
    from mcp import types

    async def elicit(context, params):
        assert params.message == "What is your name?"
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def body(url):
        async with mcp.Client(url, mode=mode, read_timeout_seconds=30, elicitation_callback=elicit) as c:
            r = await c.call_tool("greet", {})
            assert not r.is_error, r
            return "".join(part.text for part in r.content if part.type == "text")

    seen.clear()
    with ToolRegistry([greet]) as served, served.start_mcp_server() as server:
        text = asyncio.run(body(server.url))
    assert text == "Hello, Ada! (asked-name)"
    assert seen[0]["canAsk"] == ["elicitation/create"]
    assert "inputResponses" not in seen[0]
    assert seen[1]["inputResponses"]["name"]["content"] == {"name": "Ada"}
    assert seen[1]["requestState"] == "asked-name"


def test_a_caller_that_cannot_answer_gets_a_tool_error_saying_why():
    seen.clear()
    with ToolRegistry([greet]) as r:
        # The fast path (no event hook) and capstan's own path (with one).
        lone = r.execute(ToolCall("greet", {}))
        r.on_event(lambda e: None)
        pooled = r.execute_many([ToolCall("greet", {}, "a"), ToolCall("greet", {}, "b")])
    assert lone.is_error and "InputRequired" in lone.content and "cannot" in lone.content, lone
    for result in pooled:
        assert result.is_error, result
        assert "cannot be asked" in result.content, result
    assert all(s == {"canAsk": []} for s in seen)


def test_requests_capstan_refuses_end_the_call_with_its_reason():
    @tool
    def bad(ctx: Context) -> str:
        """Asks for something MCP has no method for."""
        raise InputRequired({"k": {"method": "ping"}})

    with ToolRegistry([bad]) as r:
        r.on_event(lambda e: None)
        result = r.execute_many([ToolCall("bad", {}, "a"), ToolCall("bad", {}, "b")])[0]
    assert result.is_error and "must be one of elicitation/create" in result.content, result


def test_input_required_is_public():
    assert "InputRequired" in capstan.__all__
    assert not issubclass(InputRequired, capstan.CapstanError)

"""A capstan tool asking its client for input (capstan_call_require_input),
driven by the official Python SDK's Client (mcp==2.3.0) in both protocol
eras: a 2026-07-28 client gets an InputRequiredResult and retries with its
answers (the SDK's own multi round-trip driver); a 2025-11-25 session's
client is asked by capstan with server-initiated requests. Either way the
tool gets the answers, its sealed state back, and the client the tool's
result. serve_host's conformance tools (tests/mcp/serve_host.c,
test_input_required_result_*) do the asking."""

import pytest
from mcp import Client
from mcp import types

from conftest import BOUND, http_host, run


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


@pytest.fixture(params=["legacy", "2026-07-28"])
def mode(request):
    return request.param


class Answers:
    """The client's callbacks, noting what each was asked."""

    def __init__(self):
        self.asked = []

    async def elicit(self, context, params):
        self.asked.append(("elicitation", params.message))
        props = params.requested_schema["properties"]
        content = {"name": "Alice"} if "name" in props else {}
        if "color" in props:
            content = {"color": "blue"}
        if "ok" in props:
            content = {"ok": True}
        return types.ElicitResult(action="accept", content=content)

    async def sample(self, context, params):
        self.asked.append(("sampling", params.max_tokens))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Hi there"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def roots(self, context):
        self.asked.append(("roots", None))
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])


def test_a_tool_gets_the_answers_to_what_it_asks_in_both_eras(mode):
    async def body():
        answers = Answers()
        with http_host(mode="conformance") as (url, _):
            async with Client(
                url,
                mode=mode,
                read_timeout_seconds=BOUND,
                elicitation_callback=answers.elicit,
                sampling_callback=answers.sample,
                list_roots_callback=answers.roots,
            ) as c:
                r = await c.call_tool("test_input_required_result_elicitation", {})
                assert not r.is_error and text_of(r) == "Hello, Alice!", r
                assert answers.asked == [("elicitation", "What is your name?")]

                # Two rounds, each with the state the tool set in the one before.
                answers.asked.clear()
                r = await c.call_tool("test_input_required_result_multi_round", {})
                assert not r.is_error and text_of(r) == "both steps answered", r
                assert [a[1] for a in answers.asked] == [
                    "Step 1: What is your name?",
                    "Step 2: What is your favorite color?",
                ]

                # Three requests of three kinds in one round.
                answers.asked.clear()
                r = await c.call_tool("test_input_required_result_multiple_inputs", {})
                assert not r.is_error and text_of(r) == "all three answered", r
                assert sorted(a[0] for a in answers.asked) == ["elicitation", "roots", "sampling"]

                r = await c.call_tool("test_input_required_result_request_state", {})
                assert not r.is_error and "state-ok" in text_of(r), r

    run(body())


def test_a_client_that_declared_nothing_cannot_be_asked_and_the_tool_says_so(mode):
    """The tool's ask is refused and it fails: a legacy client gets the tool
    error; a 2026-07-28 client MissingRequiredClientCapability (-32021)
    naming what the tool needed."""

    async def body():
        with http_host(mode="conformance") as (url, _):
            async with Client(url, mode=mode, read_timeout_seconds=BOUND) as c:
                if mode == "legacy":
                    r = await c.call_tool("test_input_required_result_elicitation", {})
                    assert r.is_error, r
                    assert 'did not declare the "elicitation" capability' in text_of(r), r
                    return
                with pytest.raises(Exception) as raised:
                    await c.call_tool("test_input_required_result_elicitation", {})
                error = getattr(raised.value, "error", None)
                assert getattr(error, "code", None) == -32021, repr(raised.value)
                assert error.data["requiredCapabilities"] == {"elicitation": {}}, error

    run(body())

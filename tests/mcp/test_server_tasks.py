"""A capstan tool run as an MCP task (the Tasks extension
`io.modelcontextprotocol/tasks`, issue #33) by the official Python SDK
(mcp==2.3.0) at 2026-07-28, over stdio and HTTP. The SDK ships no Tasks
client of its own; its extension API (`Client(extensions=[...])`, a
`ResultClaim` for `resultType: "task"`) declares the extension and finishes a
task handle, here by polling `tasks/get` as a client application would.
serve_host's `patient` may run as a task (its `mcp_meta` says
`"taskSupport": "optional"`)."""

import contextlib
from typing import Any, Literal

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import CallToolResult, Request, RequestParams, Result

from conftest import BOUND, SERVE_HOST, http_host, run

TASKS = "io.modelcontextprotocol/tasks"


class TaskHandle(Result):
    """`CreateTaskResult` (SEP-2663): the task's seed state."""

    result_type: Literal["task"]
    task_id: str
    status: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class TaskState(Result):
    """`GetTaskResult`: a `DetailedTask`."""

    result_type: Literal["complete"] = "complete"
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class Ack(Result):
    result_type: Literal["complete"] = "complete"


class TaskParams(RequestParams):
    task_id: str


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class CancelTask(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


async def get_task(session, task_id):
    return await session.send_request(GetTask(params=TaskParams(task_id=task_id)), TaskState)


async def settled(session, task_id):
    """Polls tasks/get (at the interval the server suggests) until the task ends."""
    with anyio.fail_after(BOUND):
        while True:
            state = await get_task(session, task_id)
            if state.status != "working":
                return state
            await anyio.sleep((state.poll_interval_ms or 100) / 1000)


class Tasks(ClientExtension):
    """Declares the Tasks extension; a task handle is polled to its result."""

    identifier = TASKS

    def __init__(self):
        self.handles = []

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.finish)]

    async def finish(self, handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
        self.handles.append(handle)
        state = await settled(ctx.session, handle.task_id)
        assert state.status == "completed", state
        return CallToolResult.model_validate(state.result)


@contextlib.asynccontextmanager
async def client(transport, extensions):
    if transport == "stdio":
        target = StdioServerParameters(command=SERVE_HOST, args=["stdio"])
        async with Client(target, mode="2026-07-28", read_timeout_seconds=BOUND, extensions=extensions) as c:
            yield c
    else:
        with http_host() as (url, _):
            async with Client(url, mode="2026-07-28", read_timeout_seconds=BOUND, extensions=extensions) as c:
                yield c


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


def test_a_client_that_declares_the_extension_gets_a_task_and_its_result(transport):
    async def body():
        tasks = Tasks()
        async with client(transport, [tasks]) as c:
            r = await c.call_tool("patient", {"seconds": 0.1})
            assert text_of(r) == "slow done" and not r.is_error
            assert len(tasks.handles) == 1
            handle = tasks.handles[0]
            assert handle.status == "working" and handle.ttl_ms and handle.poll_interval_ms
            # A tool that says nothing of tasks stays a plain call.
            r = await c.call_tool("add", {"a": 2, "b": 40})
            assert text_of(r) == "42" and len(tasks.handles) == 1
        # Without the extension, the same tool is a plain call.
        async with client(transport, []) as c:
            r = await c.call_tool("patient", {"seconds": 0.1})
            assert text_of(r) == "slow done"

    run(body())


def test_tasks_cancel_reaches_the_tool(transport):
    async def body():
        async with client(transport, [Tasks()]) as c:
            handle = await c.session.call_tool("patient", {"seconds": 60}, allow_claimed=True)
            assert isinstance(handle, TaskHandle), handle
            ack = await c.session.send_request(CancelTask(params=TaskParams(task_id=handle.task_id)), Ack)
            assert ack.result_type == "complete"
            state = await settled(c.session, handle.task_id)
            assert state.status == "cancelled" and state.result is None, state
            # `patient` polls capstan_call_cancelled and counts what it saw.
            assert text_of(await c.call_tool("cancels", {})) == "1"

    run(body())

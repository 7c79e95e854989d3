"""A hostile MCP server over stdio (issue 29): its tool `answer` replies to
each call with the bad answer its `kind` argument names, written with the
call's id, so that capstan must fail that call and keep the connection.
With argument `deep-schema` its tools/list nests the tool's schema past 128
levels. Standard library only; it serves until its stdin closes."""

import json
import sys
import time

DEEP_SCHEMA = "deep-schema" in sys.argv[1:]
# With `slow-relist MARKER`: the call of kind "relist" is answered, then
# list_changed is sent; the next tools/list writes MARKER (a file) and is
# answered 12 s later, with one more tool.
SLOW_RELIST = sys.argv[2] if sys.argv[1:2] == ["slow-relist"] else None
listed = 0


def send(raw: bytes) -> None:
    sys.stdout.buffer.write(raw + b"\n")
    sys.stdout.buffer.flush()


def answer(id_, result) -> None:
    send(json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}).encode())


def schema():
    if not DEEP_SCHEMA:
        return {"type": "object", "properties": {"kind": {"type": "string"}}}
    inner = {"type": "string"}
    for _ in range(200):
        inner = {"type": "object", "properties": {"x": inner}}
    return inner


def bad(kind: str, id_) -> bytes:
    head = b'{"jsonrpc":"2.0","id":' + json.dumps(id_).encode()
    if kind == "utf8":
        return head + b',"result":{"content":[{"type":"text","text":"\xff\xfe"}]}}'
    if kind == "long":
        # 17 MiB of text, the id last: it is found after the cap.
        text = b"x" * (17 * 1024 * 1024)
        return (b'{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"'
                + text + b'"}]},"id":' + json.dumps(id_).encode() + b"}")
    if kind == "deep":
        return head + b',"result":{"content":[],"structuredContent":' + b"[" * 200 + b"]" * 200 + b"}}"
    if kind == "json":
        return head + b',"result":{"content":[{"type":"text"'
    if kind == "shape":
        return b'{"jsonrpc":"1.0","id":' + json.dumps(id_).encode() + b',"result":{}}'
    if kind == "result":
        return head + b',"result":5}'
    return head + b',"result":{"content":[{"type":"text","text":"ok"}]}}'


for line in sys.stdin.buffer:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method, id_ = message.get("method"), message.get("id")
    if id_ is None:
        continue
    if method == "initialize":
        answer(id_, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                     "serverInfo": {"name": "bad-answers", "version": "1"}})
    elif method == "tools/list":
        listed += 1
        tools = [{"name": "answer", "inputSchema": schema()}]
        if SLOW_RELIST and listed > 1:
            open(SLOW_RELIST, "w").close()
            time.sleep(12)
            tools.append({"name": "late", "inputSchema": schema()})
        answer(id_, {"tools": tools})
    elif method == "tools/call" and SLOW_RELIST:
        answer(id_, {"content": [{"type": "text", "text": "ok"}]})
        send(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}')
    elif method == "tools/call":
        kind = (message.get("params") or {}).get("arguments", {}).get("kind", "ok")
        send(bad(kind, id_))
    else:
        send(json.dumps({"jsonrpc": "2.0", "id": id_,
                         "error": {"code": -32601, "message": "no"}}).encode())

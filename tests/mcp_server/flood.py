"""A hostile MCP server over stdio (issue 29): the call of its tool `flood`
makes it send COUNT (once; later calls get "ok") server-to-client requests (ping, roots/list,
sampling/createMessage, elicitation/create, in turn) without reading its
input, then answer the call and read again.
Standard library only; a bounded loop; serves until its stdin closes."""

import json
import sys

COUNT = int(sys.argv[1]) if sys.argv[1:] else 200_000
METHODS = [
    ("ping", {}),
    ("roots/list", {}),
    ("sampling/createMessage", {"messages": [], "maxTokens": 1}),
    ("elicitation/create", {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}),
]
out = sys.stdout.buffer
flooded = False
listings = 0


def send(message) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


for line in sys.stdin.buffer:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method, id_ = message.get("method"), message.get("id")
    if method is None or id_ is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id_, "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "flood", "version": "1"}}})
    elif method == "tools/list":
        listings += 1
        send({"jsonrpc": "2.0", "id": id_, "result": {"tools": [
            {"name": "flood", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call" and (message.get("params") or {}).get("arguments", {}).get("churn"):
        # 20,000 list_changed notifications in a tight loop; the answer says
        # how many listings capstan asked for so far.
        for _ in range(20_000):
            out.write(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n')
        out.flush()
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [
            {"type": "text", "text": str(listings)}]}})
    elif method == "tools/call" and (message.get("params") or {}).get("arguments", {}).get("listings"):
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [
            {"type": "text", "text": str(listings)}]}})
    elif method == "tools/call" and flooded:
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [
            {"type": "text", "text": "ok"}]}})
    elif method == "tools/call":
        flooded = True
        chunk = []
        for n in range(COUNT):
            name, params = METHODS[n % len(METHODS)]
            chunk.append(json.dumps({"jsonrpc": "2.0", "id": f"f{n}", "method": name,
                                     "params": params}).encode())
            if len(chunk) == 1000:
                out.write(b"\n".join(chunk) + b"\n")
                chunk = []
        out.write(b"\n".join(chunk) + b"\n" if chunk else b"")
        out.flush()
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [
            {"type": "text", "text": "flooded"}]}})
    else:
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "no"}})

"""A hostile MCP server over stdio (issue 45, finding 8): the call of its
tool `burst` with {"n": N} makes it send N `elicitation/create` requests at
once (ids "e0".."e<N-1>") and answer the call; it goes on reading, and
counts the answers it gets to them. The call of `tally` answers with those
counts as JSON: {"answered": results, "refused": errors, "codes": [...],
"message": the first error's message}.
Standard library only; serves until its stdin closes."""

import json
import sys

out = sys.stdout.buffer
answered = 0
refused = 0
codes = set()
first_message = None


def send(message) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


for line in sys.stdin.buffer:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method, id_ = message.get("method"), message.get("id")
    if method is None:
        if isinstance(id_, str) and id_.startswith("e"):
            if "error" in message:
                refused += 1
                codes.add(message["error"].get("code"))
                if first_message is None:
                    first_message = message["error"].get("message")
            else:
                answered += 1
        continue
    if id_ is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id_, "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "ask_burst", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id_, "result": {"tools": [
            {"name": "burst", "inputSchema": {"type": "object"}},
            {"name": "tally", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call" and message["params"]["name"] == "burst":
        n = int(message["params"].get("arguments", {}).get("n", 0))
        request = {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}
        lines = [json.dumps({"jsonrpc": "2.0", "id": f"e{i}", "method": "elicitation/create",
                             "params": request}).encode() for i in range(n)]
        out.write(b"\n".join(lines) + b"\n" if lines else b"")
        out.flush()
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [
            {"type": "text", "text": "sent"}]}})
    elif method == "tools/call":
        tally = {"answered": answered, "refused": refused, "codes": sorted(codes),
                 "message": first_message}
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [
            {"type": "text", "text": json.dumps(tally)}]}})
    else:
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "no"}})

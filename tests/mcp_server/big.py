"""A hostile MCP server over stdio (issue 29): tools/list and tool results
past capstan's bounds. The first argument picks the listing:

  pages-loop      every page's nextCursor is the same
  pages-endless   every page has a new nextCursor (bounded here: 100,000)
  many-tools N    N tools on one page
  fat-tools       20 tools of ~900 KB schemas, 5 a page (18 MB in all)
  long-fields     a tool with a 10,000-character name, one with a 2 MiB
                  schema, one with a 20,000-character description, and `blocks`
  (anything else) the tool `blocks` only

`blocks` answers a call with `n` text blocks of `size` bytes each (default
one block of one byte). Standard library only; it serves until its stdin
closes."""

import json
import sys

MODE = sys.argv[1] if sys.argv[1:] else ""
BLOCKS = {"name": "blocks", "inputSchema": {"type": "object", "properties": {
    "n": {"type": "integer"}, "size": {"type": "integer"}}}}
out = sys.stdout.buffer


def send(message) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def page(cursor):
    """The tools of the page at `cursor`, and the next cursor."""
    if MODE == "pages-loop":
        return [BLOCKS], "again"
    if MODE == "pages-endless":
        n = int(cursor or 0) + 1
        return [], (str(n) if n < 100_000 else None)
    if MODE == "many-tools":
        count = int(sys.argv[2])
        return [{"name": f"t{n}", "inputSchema": {"type": "object"}} for n in range(count)], None
    if MODE == "fat-tools":
        n = int(cursor or 0)
        fat = {"type": "object", "description": "f" * 900_000}
        tools = [{"name": f"fat{n + i}", "inputSchema": fat} for i in range(5)]
        return tools, (str(n + 5) if n + 5 < 20 else None)
    if MODE == "long-fields":
        return [
            {"name": "n" * 10_000, "inputSchema": {"type": "object"}},
            {"name": "schema", "inputSchema": {"type": "object", "description": "s" * (2 << 20)}},
            {"name": "wordy", "description": "w" * 20_000, "inputSchema": {"type": "object"}},
            BLOCKS,
        ], None
    return [BLOCKS], None


for line in sys.stdin.buffer:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method, id_ = message.get("method"), message.get("id")
    if id_ is None:
        continue
    params = message.get("params") or {}
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id_, "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "big", "version": "1"}}})
    elif method == "tools/list":
        tools, cursor = page(params.get("cursor"))
        result = {"tools": tools}
        if cursor is not None:
            result["nextCursor"] = cursor
        send({"jsonrpc": "2.0", "id": id_, "result": result})
    elif method == "tools/call":
        args = params.get("arguments") or {}
        n, size = int(args.get("n", 1)), int(args.get("size", 1))
        block = json.dumps({"type": "text", "text": "b" * size}).encode()
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(id_).encode() + b',"result":{"content":['
        out.write(head + b",".join([block] * n) + b"]}}\n")
        out.flush()
    else:
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "no"}})

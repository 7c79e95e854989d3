"""An MCP server over stdio that fails the handshake (issue 29): it writes
its pid to the file named by its second argument, then, by its first:

  exit      exits at once
  error     answers initialize with a JSON-RPC error, then waits for stdin to end
  garbage   answers initialize with a line that is not JSON, then waits
  silent    never answers and ignores SIGTERM and the end of stdin (60 s at most)
  flood     answers nothing, sends pings without reading (60 s at most)

Standard library only."""

import json
import os
import signal
import sys
import time

MODE, PIDFILE = sys.argv[1], sys.argv[2]
with open(PIDFILE + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.replace(PIDFILE + ".tmp", PIDFILE)
out = sys.stdout.buffer

if MODE == "exit":
    sys.exit(1)
if MODE in ("silent", "flood"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    deadline = time.time() + 60
    ping = b'{"jsonrpc":"2.0","id":"p","method":"ping"}\n' * 1000
    while time.time() < deadline:
        if MODE == "flood":
            try:
                out.write(ping)
                out.flush()
            except BrokenPipeError:
                time.sleep(0.1)
        else:
            time.sleep(0.1)
    sys.exit(0)

line = sys.stdin.buffer.readline()
if MODE == "error":
    id_ = json.loads(line or b"{}").get("id", 0)
    out.write(json.dumps({"jsonrpc": "2.0", "id": id_,
                          "error": {"code": -32600, "message": "no"}}).encode() + b"\n")
else:
    out.write(b"this is not JSON\n")
out.flush()
for line in sys.stdin.buffer:
    pass

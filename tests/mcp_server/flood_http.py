"""A hostile MCP server over streamable HTTP (issue 29, row 1): it floods
its GET (server-sent events) stream when its tool `flood` is called.

  flood_http.py MODE COUNT

prints the port it listens on (127.0.0.1) on its first line, then serves
until its stdin closes (or 300 s pass). The call of `flood` makes the GET
stream send, according to MODE:
  requests       COUNT server-to-client requests (ping, roots/list,
                 sampling/createMessage, elicitation/create in turn), while
                 every POST carrying capstan's answers waits, unread, until
                 the flood has been written: the server does not read;
  notifications  COUNT notifications (notifications/message);
  endless        one event whose data never ends: COUNT MiB of it, no
                 newline, then the stream closes.
The call is answered "flooded" once the flood is written; `echo` answers
"ok"; `answers` answers how many of capstan's answers reached the server.
Standard library only; bounded loops; 127.0.0.1 only."""

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1] if sys.argv[1:] else "requests"
COUNT = int(sys.argv[2]) if sys.argv[2:] else 50_000
METHODS = [
    ("ping", {}),
    ("roots/list", {}),
    ("sampling/createMessage", {"messages": [], "maxTokens": 1}),
    ("elicitation/create", {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}),
]
TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("flood", "echo", "answers")]

start_flood = threading.Event()
flood_done = threading.Event()
lock = threading.Lock()
answers = 0
flooded = False


def events():
    """The flood, as SSE bytes, in chunks."""
    if MODE == "endless":
        yield b"data: "
        mib = b"x" * (1 << 20)
        for _ in range(COUNT):
            yield mib
        return
    chunk = []
    for n in range(COUNT):
        if MODE == "notifications":
            message = {"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": "n%d" % n}}
        else:
            name, params = METHODS[n % len(METHODS)]
            message = {"jsonrpc": "2.0", "id": "f%d" % n, "method": name, "params": params}
        chunk.append(b"data: " + json.dumps(message).encode() + b"\n\n")
        if len(chunk) == 500:
            yield b"".join(chunk)
            chunk = []
    if chunk:
        yield b"".join(chunk)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body=None, session=False):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        if session:
            self.send_header("Mcp-Session-Id", "s1")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_DELETE(self):
        self.reply(200)

    def do_GET(self):
        global flooded
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.flush()
        try:
            # One flood, on the first GET stream open when `flood` is called;
            # later streams (capstan resuming) stay open, quiet.
            while not start_flood.wait(0.2):
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
            with lock:
                mine = not flooded
                flooded = True
            if mine:
                for chunk in events():
                    self.wfile.write(chunk)
                self.wfile.flush()
                flood_done.set()
                if MODE == "endless":
                    return
            for _ in range(300):
                time.sleep(1)
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
        except OSError:
            flood_done.set()

    def do_POST(self):
        global answers
        length = int(self.headers.get("Content-Length") or 0)
        if start_flood.is_set() and not flood_done.is_set() and MODE == "requests":
            # capstan's answers: not read until the flood is written.
            flood_done.wait(120)
        try:
            message = json.loads(self.rfile.read(length))
        except ValueError:
            return self.reply(400)
        method, id_ = message.get("method"), message.get("id")
        if method is None:
            with lock:
                answers += 1
            return self.reply(202)
        if id_ is None:
            return self.reply(202)
        if method == "initialize":
            return self.reply(200, {"jsonrpc": "2.0", "id": id_, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "flood_http", "version": "1"}}}, session=True)
        if method == "tools/list":
            return self.reply(200, {"jsonrpc": "2.0", "id": id_, "result": {"tools": TOOLS}})
        if method == "tools/call":
            name = (message.get("params") or {}).get("name")
            if name == "flood":
                start_flood.set()
                flood_done.wait(120)
                text = "flooded"
            elif name == "answers":
                with lock:
                    text = str(answers)
            else:
                text = "ok"
            return self.reply(200, {"jsonrpc": "2.0", "id": id_, "result": {
                "content": [{"type": "text", "text": text}]}})
        return self.reply(200, {"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "no"}})


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # capstan closing a connection (a refused event, an unmount)


server = Server(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(server.server_address[1], flush=True)
# Until the test closes stdin (or drops the child), at most 300 s.
timer = threading.Timer(300, lambda: os._exit(0))
timer.daemon = True
timer.start()
sys.stdin.read()
os._exit(0)

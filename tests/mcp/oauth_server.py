"""An OAuth-protected MCP server for the mount tests (tests/mcp_client.rs).

One process plays both roles, on 127.0.0.1:PORT (argv[1]):
- the MCP server at /mcp (streamable HTTP, stateless JSON answers,
  2025-11-25 `initialize`), which answers 401 with a WWW-Authenticate
  challenge naming its protected resource metadata unless the request carries
  a live access token; its one tool `whoami` says which token it was given;
- the authorization server: metadata, dynamic client registration, an
  authorization endpoint that redirects at once (no user; `deny` in the query
  string of the authorization URL is never sent by capstan, the test's
  authorize callback decides), and a token endpoint that checks PKCE S256,
  the client, the redirect URI and the resource indicator, and issues access
  tokens that expire after EXPIRES_IN seconds, with refresh tokens; and the
  client-credentials grant for one pre-registered client (MACHINE), its
  secret in the body or as HTTP Basic.
GET /stats gives counts of what happened, for the test to check; GET /quit
ends the server.
"""

import base64
import hashlib
import json
import secrets
import sys
import time
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])  # 0: any free port, printed on stdout as the first line
EXPIRES_IN = int(sys.argv[2]) if len(sys.argv) > 2 else 3600
SERVER = None

clients = {}  # client_id -> redirect_uris
codes = {}  # code -> (client_id, redirect_uri, challenge, resource)
tokens = {}  # access token -> expiry (epoch seconds)
refresh_tokens = {}  # refresh token -> client_id
# The one pre-registered client for the client-credentials grant (no user).
MACHINE = ("machine-1", "s3cret")
stats = {"registrations": 0, "authorizations": 0, "code_grants": 0, "refresh_grants": 0,
         "client_credentials_grants": 0,
         "unauthorized": 0, "resources": []}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/.well-known/oauth-protected-resource/mcp":
            self.send_json(200, {"resource": RESOURCE, "authorization_servers": [BASE],
                                 "scopes_supported": ["tools"]})
        elif url.path == "/.well-known/oauth-authorization-server":
            self.send_json(200, {
                "issuer": BASE,
                "authorization_endpoint": f"{BASE}/authorize",
                "token_endpoint": f"{BASE}/token",
                "registration_endpoint": f"{BASE}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token",
                                          "client_credentials"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_post",
                                                          "client_secret_basic"],
                "scopes_supported": ["tools"],
            })
        elif url.path == "/authorize":
            stats["authorizations"] += 1
            ok = (query.get("client_id") in clients
                  and query.get("redirect_uri") in clients[query["client_id"]]
                  and query.get("code_challenge_method") == "S256"
                  and query.get("response_type") == "code")
            if not ok:
                self.send_json(400, {"error": "invalid_request"})
                return
            code = secrets.token_urlsafe(16)
            codes[code] = (query["client_id"], query["redirect_uri"], query["code_challenge"],
                           query.get("resource"))
            to = query["redirect_uri"] + "?" + urllib.parse.urlencode(
                {"code": code, "state": query.get("state", ""), "iss": BASE})
            self.send_response(302)
            self.send_header("Location", to)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif url.path == "/stats":
            self.send_json(200, stats)
        elif url.path == "/quit":
            self.send_json(200, {})
            threading.Thread(target=SERVER.shutdown).start()
        else:
            self.send_json(405 if url.path == "/mcp" else 404, {"error": "not here"})

    def do_DELETE(self):
        self.send_json(405, {"error": "no sessions"})

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.body()
        if url.path == "/register":
            meta = json.loads(body)
            client_id = "client-" + secrets.token_hex(4)
            clients[client_id] = meta.get("redirect_uris", [])
            stats["registrations"] += 1
            self.send_json(201, {"client_id": client_id, "redirect_uris": clients[client_id],
                                 "token_endpoint_auth_method": "none"})
        elif url.path == "/token":
            self.token(dict(urllib.parse.parse_qsl(body.decode())), self.headers.get("Authorization", ""))
        elif url.path == "/mcp":
            self.mcp(body)
        else:
            self.send_json(404, {"error": "not here"})

    def token(self, form, authorization):
        grant = form.get("grant_type")
        if grant == "client_credentials":
            # The pre-registered machine client, its secret in the body or
            # as HTTP Basic.
            given = (form.get("client_id"), form.get("client_secret"))
            if authorization.startswith("Basic "):
                pair = base64.b64decode(authorization[6:]).decode()
                given = tuple(urllib.parse.unquote(p) for p in pair.split(":", 1))
            if given != MACHINE:
                self.send_json(401, {"error": "invalid_client"})
                return
            stats["client_credentials_grants"] += 1
            stats["resources"].append(form.get("resource"))
            access = "at-" + secrets.token_hex(8)
            tokens[access] = time.time() + EXPIRES_IN
            self.send_json(200, {"access_token": access, "token_type": "Bearer",
                                 "expires_in": EXPIRES_IN, "scope": "tools"})
            return
        if grant == "authorization_code":
            entry = codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            challenge = base64.urlsafe_b64encode(
                hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if (entry is None or entry[0] != form.get("client_id")
                    or entry[1] != form.get("redirect_uri") or entry[2] != challenge):
                self.send_json(400, {"error": "invalid_grant"})
                return
            stats["code_grants"] += 1
            stats["resources"].append(form.get("resource"))
            client_id = entry[0]
        elif grant == "refresh_token":
            client_id = refresh_tokens.pop(form.get("refresh_token", ""), None)
            if client_id is None:
                self.send_json(400, {"error": "invalid_grant"})
                return
            stats["refresh_grants"] += 1
        else:
            self.send_json(400, {"error": "unsupported_grant_type"})
            return
        access = "at-" + secrets.token_hex(8)
        refresh = "rt-" + secrets.token_hex(8)
        tokens[access] = time.time() + EXPIRES_IN
        refresh_tokens[refresh] = client_id
        self.send_json(200, {"access_token": access, "token_type": "Bearer",
                             "expires_in": EXPIRES_IN, "refresh_token": refresh,
                             "scope": "tools"})

    def mcp(self, body):
        auth = self.headers.get("Authorization", "")
        token = auth[7:] if auth.startswith("Bearer ") else None
        if token is None or tokens.get(token, 0) < time.time():
            stats["unauthorized"] += 1
            self.send_json(401, {"error": "invalid_token"}, [(
                "WWW-Authenticate",
                f'Bearer error="invalid_token", resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"')])
            return
        message = json.loads(body)
        if "id" not in message:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        method = message.get("method")
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"],
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "oauth-test", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "whoami", "description": "The token the call came with.",
                                 "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": token}]}
        else:
            self.send_json(200, {"jsonrpc": "2.0", "id": message["id"],
                                 "error": {"code": -32601, "message": "method not found"}})
            return
        self.send_json(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})


SERVER = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
PORT = SERVER.server_address[1]
BASE = f"http://127.0.0.1:{PORT}"
RESOURCE = f"{BASE}/mcp"
print(PORT, flush=True)
SERVER.serve_forever()

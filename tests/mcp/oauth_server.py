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
  secret in the body or as HTTP Basic; the same grant for a client that
  authenticates with a signed assertion (KEYED, private_key_jwt, ES256, its
  public key tests/fixtures/oauth/client_key.jwk.json); and the JWT-bearer
  grant (RFC 7523) for an assertion "workload:<issuer>" (what the tests'
  host gives for that audience; the scope "rejected" is refused).
With argv[3] "dpop" (or "dpop-nonce") the authorization server offers DPoP
(RFC 9449): a token request with a valid proof gets a token bound to the
proof's key (token_type DPoP), and the MCP server then takes that token
only with the DPoP scheme and a valid, fresh proof for the request (and,
with "dpop-nonce", only proofs carrying the nonces the servers hand out).
With argv[3] "legacy-issuer" the server is one of the 2025-03-26 era: no
protected resource metadata (404, and a challenge that names none) and
authorization server metadata at the root whose issuer is BASE/oauth (the
conformance suite's oauth-metadata-backcompat); "foreign-issuer" the same
with an issuer of another origin (localhost for 127.0.0.1), which a client
must refuse. With argv[3] "no-metadata" the server publishes no OAuth
metadata at all (a 2025-03-26 server whose client guesses /authorize, /token
and /register at its origin), and its redirect carries no `iss`. With
argv[3] "as=URL" its protected resource metadata names the authorization
server at URL (another process: a third origin) instead of its own.
The refusals of the token endpoint quote back the credentials they were
sent, as a careless (or hostile) server might: a client must not pass them
on in its error text.
Signatures are checked here with a few lines of P-256 arithmetic, so that the
server stays standard-library only.
GET /stats gives counts of what happened, for the test to check; GET /quit
ends the server.
"""

import base64
import hashlib
import os
import json
import secrets
import sys
import time
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])  # 0: any free port, printed on stdout as the first line
EXPIRES_IN = int(sys.argv[2]) if len(sys.argv) > 2 else 3600
MODE = sys.argv[3] if len(sys.argv) > 3 else ""
DPOP = MODE.startswith("dpop")
NONCE = MODE == "dpop-nonce"
NO_METADATA = MODE == "no-metadata"
LEGACY = MODE in ("legacy-issuer", "foreign-issuer", "no-metadata")
NAMED_AS = MODE[3:] if MODE.startswith("as=") else None
AS_NONCE, RS_NONCE = "as-nonce-1", "rs-nonce-1"
SERVER = None
KEYED = "keyed-1"
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "oauth",
                       "client_key.jwk.json")) as f:
    KEYED_JWK = json.load(f)

# ECDSA P-256 (FIPS 186-4; curve parameters of SEC 2), verification only.
P = 2**256 - 2**224 + 2**192 + 2**96 - 1
N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551
A = P - 3
B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b
G = (0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296,
     0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5)


def point_add(p1, p2):
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    (x1, y1), (x2, y2) = p1, p2
    if x1 == x2 and (y1 + y2) % P == 0:
        return None
    if p1 == p2:
        slope = (3 * x1 * x1 + A) * pow(2 * y1, -1, P) % P
    else:
        slope = (y2 - y1) * pow(x2 - x1, -1, P) % P
    x3 = (slope * slope - x1 - x2) % P
    return (x3, (slope * (x1 - x3) - y1) % P)


def point_mul(k, point):
    result = None
    while k:
        if k & 1:
            result = point_add(result, point)
        point = point_add(point, point)
        k >>= 1
    return result


def b64d(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64e(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def verify_jws(jws, jwk):
    """(header, claims) of a compact ES256 JWS whose signature verifies with
    the EC P-256 public JWK, else None."""
    try:
        head, body, sig = jws.split(".")
        header, claims, raw = json.loads(b64d(head)), json.loads(b64d(body)), b64d(sig)
        if header.get("alg") != "ES256" or len(raw) != 64 or jwk.get("crv") != "P-256":
            return None
        r, s = int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
        q = (int.from_bytes(b64d(jwk["x"]), "big"), int.from_bytes(b64d(jwk["y"]), "big"))
        if not (0 < r < N and 0 < s < N) or (q[1] ** 2 - q[0] ** 3 - A * q[0] - B) % P:
            return None
        e = int.from_bytes(hashlib.sha256(f"{head}.{body}".encode()).digest(), "big")
        w = pow(s, -1, N)
        point = point_add(point_mul(e * w % N, G), point_mul(r * w % N, q))
        if point is None or point[0] % N != r:
            return None
        return header, claims
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def thumbprint(jwk):
    """RFC 7638 SHA-256 thumbprint of an EC public JWK."""
    members = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"),
                         sort_keys=True)
    return b64e(hashlib.sha256(members.encode()).digest())


seen_jtis = set()
dpop_tokens = {}  # access token -> thumbprint of the key it is bound to


def check_proof(proof, method, url, token=None, nonce=None):
    """Why a DPoP proof is not good for this request, or None (RFC 9449
    section 4.3), and the thumbprint of its key."""
    try:
        jwk = json.loads(b64d(proof.split(".")[0])).get("jwk") or {}
    except (AttributeError, ValueError):
        return "no valid proof", None
    checked = verify_jws(proof, jwk)
    if checked is None:
        return "no valid proof", None
    header, claims = checked
    if header.get("typ") != "dpop+jwt" or "d" in header["jwk"]:
        return "bad proof header", None
    if claims.get("htm") != method or claims.get("htu") != url:
        return f"proof for {claims.get('htm')} {claims.get('htu')}", None
    if abs(time.time() - claims.get("iat", 0)) > 300 or claims.get("jti") in seen_jtis:
        return "stale or replayed proof", None
    if token is not None and claims.get("ath") != b64e(hashlib.sha256(token.encode()).digest()):
        return "ath does not match the token", None
    if nonce is not None and claims.get("nonce") != nonce:
        return "use_dpop_nonce", None
    seen_jtis.add(claims["jti"])
    return None, thumbprint(header["jwk"])

clients = {}  # client_id -> redirect_uris
codes = {}  # code -> (client_id, redirect_uri, challenge, resource)
tokens = {}  # access token -> expiry (epoch seconds)
refresh_tokens = {}  # refresh token -> (client_id, thumbprint of its DPoP key or None)
# The one pre-registered client for the client-credentials grant (no user).
MACHINE = ("machine-1", "s3cret")
stats = {"registrations": 0, "authorizations": 0, "code_grants": 0, "refresh_grants": 0,
         "client_credentials_grants": 0, "key_grants": 0, "jwt_bearer_grants": 0,
         "dpop_tokens": 0, "dpop_requests": 0, "as_nonce_challenges": 0,
         "rs_nonce_challenges": 0, "bad_proofs": [],
         "unauthorized": 0, "resources": [],
         # Every credential that reached this server: the tokens presented
         # to /mcp, the refresh tokens and the client credentials (a secret
         # or an assertion) sent to /token.
         "presented": [], "refreshes": [], "client_credentials": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, status, body, headers=()):
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (a mount being freed): nothing to tell it

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/.well-known/oauth-protected-resource/mcp" and not LEGACY:
            self.send_json(200, {"resource": RESOURCE, "authorization_servers": [NAMED_AS or BASE],
                                 "scopes_supported": ["tools"]})
        elif url.path == "/.well-known/oauth-authorization-server" and not NO_METADATA:
            self.send_json(200, {
                **({"dpop_signing_alg_values_supported": ["ES256"]} if DPOP else {}),
                "issuer": ISSUER,
                "authorization_endpoint": f"{BASE}/authorize",
                "token_endpoint": f"{BASE}/token",
                "registration_endpoint": f"{BASE}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token",
                                          "client_credentials",
                                          "urn:ietf:params:oauth:grant-type:jwt-bearer"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_post",
                                                          "client_secret_basic",
                                                          "private_key_jwt"],
                "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
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
                {"code": code, "state": query.get("state", ""),
                 **({} if NO_METADATA else {"iss": ISSUER})})
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
        if "refresh_token" in form:
            stats["refreshes"].append(form["refresh_token"])
        if ("client_secret" in form or "client_assertion" in form
                or authorization.startswith("Basic ")):
            stats["client_credentials"] += 1
        bound = None
        if DPOP:
            # A proof is optional (a token without one is a Bearer token);
            # a bad one is refused.
            proof = self.headers.get("DPoP")
            if proof is not None:
                why, bound = check_proof(proof, "POST", f"{BASE}/token",
                                         nonce=AS_NONCE if NONCE else None)
                if why == "use_dpop_nonce":
                    stats["as_nonce_challenges"] += 1
                    self.send_json(400, {"error": "use_dpop_nonce"}, [("DPoP-Nonce", AS_NONCE)])
                    return
                if why is not None:
                    stats["bad_proofs"].append(why)
                    self.send_json(400, {"error": "invalid_dpop_proof", "error_description": why})
                    return
        self.bound = bound
        if grant == "client_credentials" and "client_assertion" in form:
            # The keyed client (private_key_jwt, RFC 7523 section 2.2).
            checked = verify_jws(form["client_assertion"], KEYED_JWK)
            claims = checked[1] if checked else {}
            if (form.get("client_assertion_type")
                    != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
                    or claims.get("iss") != KEYED or claims.get("sub") != KEYED
                    or claims.get("aud") != BASE or claims.get("exp", 0) < time.time()
                    or claims.get("jti") in seen_jtis):
                self.send_json(401, {"error": "invalid_client", "error_description":
                                     "bad client assertion " + form["client_assertion"]})
                return
            seen_jtis.add(claims["jti"])
            stats["key_grants"] += 1
            stats["resources"].append(form.get("resource"))
            self.issue(None)
            return
        if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            if form.get("assertion") == "long":
                # A server that says too much: the client must not pass it all on.
                self.send_json(400, {"error": "invalid_grant", "error_description": "x" * 100000})
                return
            if form.get("assertion") != "workload:" + BASE:
                self.send_json(400, {"error": "invalid_grant", "error_description":
                                     "not the workload's assertion: " + form.get("assertion", "")})
                return
            if "rejected" in form.get("scope", "").split():
                self.send_json(400, {"error": "invalid_scope",
                                     "error_description": "scope rejected is not granted"})
                return
            stats["jwt_bearer_grants"] += 1
            stats["resources"].append(form.get("resource"))
            self.issue(None)
            return
        if grant == "client_credentials":
            # The pre-registered machine client, its secret in the body or
            # as HTTP Basic.
            given = (form.get("client_id"), form.get("client_secret"))
            if authorization.startswith("Basic "):
                pair = base64.b64decode(authorization[6:]).decode()
                given = tuple(urllib.parse.unquote(p) for p in pair.split(":", 1))
            if given != MACHINE:
                self.send_json(401, {"error": "invalid_client", "error_description":
                                     f"no client {given[0]} with secret {given[1]}"})
                return
            stats["client_credentials_grants"] += 1
            stats["resources"].append(form.get("resource"))
            self.issue(None)
            return
        if grant == "authorization_code":
            entry = codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            challenge = base64.urlsafe_b64encode(
                hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if (entry is None or entry[0] != form.get("client_id")
                    or entry[1] != form.get("redirect_uri") or entry[2] != challenge):
                self.send_json(400, {"error": "invalid_grant", "error_description":
                                     "unknown code " + form.get("code", "")})
                return
            stats["code_grants"] += 1
            stats["resources"].append(form.get("resource"))
            client_id = entry[0]
        elif grant == "refresh_token":
            client_id, key = refresh_tokens.pop(form.get("refresh_token", ""), (None, None))
            if client_id is None:
                self.send_json(400, {"error": "invalid_grant", "error_description":
                                     "unknown refresh token " + form.get("refresh_token", "")})
                return
            if key is not None and self.bound != key:
                # A public client's refresh token is bound to its DPoP key
                # (RFC 9449 section 5): only a proof of that key refreshes it.
                stats["bad_proofs"].append("refresh without the token's key")
                self.send_json(400, {"error": "invalid_grant",
                                     "error_description": "refresh token bound to another key"})
                return
            stats["refresh_grants"] += 1
        else:
            self.send_json(400, {"error": "unsupported_grant_type"})
            return
        refresh = "rt-" + secrets.token_hex(8)
        refresh_tokens[refresh] = (client_id, self.bound)
        self.issue(refresh)

    def issue(self, refresh):
        """An access token (bound to the proof's key if the request had one)."""
        access = "at-" + secrets.token_hex(8)
        tokens[access] = time.time() + EXPIRES_IN
        answer = {"access_token": access, "token_type": "Bearer", "expires_in": EXPIRES_IN,
                  "scope": "tools"}
        if refresh is not None:
            answer["refresh_token"] = refresh
        if self.bound is not None:
            dpop_tokens[access] = self.bound
            stats["dpop_tokens"] += 1
            answer["token_type"] = "DPoP"
        self.send_json(200, answer)

    def refuse(self, error, scheme="Bearer", headers=()):
        stats["unauthorized"] += 1
        pointer = "" if LEGACY else \
            f', resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
        self.send_json(401, {"error": error}, [
            ("WWW-Authenticate", f'{scheme} error="{error}"{pointer}'), *headers])

    def mcp(self, body):
        auth = self.headers.get("Authorization", "")
        scheme, _, token = auth.partition(" ")
        if token:
            stats["presented"].append(token)
        if tokens.get(token, 0) < time.time():
            self.refuse("invalid_token", "DPoP" if DPOP else "Bearer")
            return
        if token in dpop_tokens:
            # A bound token: the DPoP scheme and a proof of its key for this request.
            why, key = check_proof(self.headers.get("DPoP"), "POST", RESOURCE, token,
                                   RS_NONCE if NONCE else None)
            if why == "use_dpop_nonce":
                stats["rs_nonce_challenges"] += 1
                self.refuse("use_dpop_nonce", "DPoP", [("DPoP-Nonce", RS_NONCE)])
                return
            if scheme != "DPoP" or why is not None or key != dpop_tokens[token]:
                stats["bad_proofs"].append(why or f"scheme {scheme}")
                self.refuse("invalid_token", "DPoP")
                return
            stats["dpop_requests"] += 1
        elif scheme != "Bearer":
            self.refuse("invalid_token")
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
ISSUER = {"legacy-issuer": f"{BASE}/oauth",
          "foreign-issuer": f"http://localhost:{PORT}/oauth"}.get(MODE, BASE)
print(PORT, flush=True)
SERVER.serve_forever()

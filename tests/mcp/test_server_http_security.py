"""The HTTP transport's guards, with raw requests: Origin (403), bearer token
(401), body size (413), malformed JSON-RPC (a JSON-RPC error), Host (403)."""

import http.client
import json
from urllib.parse import urlparse

from conftest import BOUND, http_host

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


def post(url, body, headers=None):
    """POSTs `body` (bytes or JSON-able) to the MCP endpoint; returns (status, headers, text)."""
    u = urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=BOUND)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    h.update(headers or {})
    try:
        conn.request("POST", u.path, body=data, headers=h)
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read().decode(errors="replace")
    finally:
        conn.close()


def jsonrpc_of(text):
    """The JSON-RPC message of a JSON or single-event SSE response body."""
    text = text.strip()
    if text.startswith("{"):
        return json.loads(text)
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip().startswith("{"):
            return json.loads(line[5:])
    raise AssertionError(f"no JSON-RPC message in {text!r}")


def test_a_loopback_origin_or_none_is_served():
    with http_host() as (url, _):
        status, _, text = post(url, INIT)
        assert status == 200, text
        assert jsonrpc_of(text)["result"]["serverInfo"]["name"] == "serve_host"
        port = urlparse(url).port
        status, _, text = post(url, INIT, {"Origin": f"http://localhost:{port}"})
        assert status == 200, text


def test_a_foreign_origin_is_refused_with_403():
    with http_host() as (url, _):
        status, _, text = post(url, INIT, {"Origin": "http://evil.example"})
        assert status == 403
        assert json.loads(text)["error"]["code"] == -32600


def test_a_foreign_host_header_is_refused_with_403():
    with http_host() as (url, _):
        status, _, _ = post(url, INIT, {"Host": "evil.example"})
        assert status == 403


def test_without_the_bearer_token_a_request_gets_401():
    with http_host("s3cret") as (url, _):
        status, headers, text = post(url, INIT)
        assert status == 401
        assert headers.get("www-authenticate", headers.get("WWW-Authenticate")) == "Bearer"
        assert "error" in json.loads(text)
        status, _, _ = post(url, INIT, {"Authorization": "Bearer wrong!"})
        assert status == 401
        status, _, text = post(url, INIT, {"Authorization": "Bearer s3cret"})
        assert status == 200, text


def test_a_body_over_the_limit_gets_413():
    with http_host("", "2048") as (url, _):
        big = dict(INIT)
        big["params"] = dict(INIT["params"], padding="x" * 4096)
        status, _, _ = post(url, big)
        assert status == 413
        status, _, text = post(url, INIT)
        assert status == 200, text


def test_malformed_jsonrpc_gets_a_jsonrpc_error_and_no_crash():
    with http_host() as (url, proc):
        for bad in (b"{not json", b"[]", b'{"jsonrpc":"2.0","id":1}', b'"just a string"'):
            status, _, text = post(url, bad)
            assert 400 <= status < 500, (bad, status, text)
            error = json.loads(text)
            assert error["jsonrpc"] == "2.0" and error["id"] is None, text
            # Not JSON at all: a parse error; JSON but no message: invalid.
            want = -32700 if bad == b"{not json" else -32600
            assert error["error"]["code"] == want, text
        assert proc.poll() is None
        status, _, text = post(url, INIT)
        assert status == 200, text

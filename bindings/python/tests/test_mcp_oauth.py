"""ToolRegistry.mount_mcp(oauth=OAuth(...)): a server over HTTP that asks for
OAuth 2.1 (tests/mcp/oauth_server.py, standard library only) is authorized
through the host's callables, which capstan calls on its own threads; the
tokens kept serve the next mount without a new authorization; a refusal or
an exception in authorize fails the mount cleanly, saying why."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import capstan
from capstan import CapstanError, OAuth, ToolCall, ToolRegistry
from capstan import _mcp_client

SERVER = Path(__file__).resolve().parents[3] / "tests" / "mcp" / "oauth_server.py"
REDIRECT = "http://127.0.0.1:9/callback"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return None


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(url, timeout=30) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as answer:
        return answer.code, dict(answer.headers), answer.read()


@pytest.fixture
def oauth_server():
    process = subprocess.Popen([sys.executable, str(SERVER), "0"], stdout=subprocess.PIPE, text=True)
    try:
        port = process.stdout.readline().strip()  # type: ignore[union-attr]
        assert port.isdigit(), port
        yield f"http://127.0.0.1:{port}"
        _get(f"http://127.0.0.1:{port}/quit")
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _stats(base: str) -> dict:
    return json.loads(_get(f"{base}/stats")[2])


def _browser(threads: list[str]):
    """The user's browser: follows the authorization URL (the test server
    redirects at once) and hands back where it was sent."""

    def authorize(url: str) -> str | None:
        threads.append(threading.current_thread().name)
        status, headers, _ = _get(url)
        assert status == 302, status
        return headers["Location"]

    return authorize


def _released() -> bool:
    """capstan let go of every mount's callables (bounded wait: it may do so
    on one of its threads, soon after the unmount)."""
    for _ in range(200):
        if not _mcp_client._held:
            return True
        time.sleep(0.05)
    return False


def test_an_oauth_server_is_mounted_and_the_kept_tokens_serve_the_next_mount(oauth_server):
    kept: list[str | None] = []
    threads: list[str] = []
    oauth = OAuth(
        authorize=_browser(threads),
        redirect_uri=REDIRECT,
        tokens_load=lambda: kept[-1] if kept else None,
        tokens_save=kept.append,
    )
    for _ in range(2):
        with ToolRegistry() as registry:
            with registry.mount_mcp(
                url=f"{oauth_server}/mcp", prefix="o_", protocol_version="2025-11-25", oauth=oauth, connect_timeout=60
            ) as mount:
                assert mount.tools == {"o_whoami": "whoami"}
                result = registry.execute(ToolCall("o_whoami", {}))
                assert not result.is_error, result
                assert result.content.startswith("at-"), result  # the access token the server issued
    stats = _stats(oauth_server)
    # One registration and one authorization for both mounts.
    assert stats["registrations"] == 1, stats
    assert stats["authorizations"] == 1, stats
    assert len(threads) == 1 and threads[0] != threading.current_thread().name
    assert kept and "access_token" in (kept[-1] or "")
    assert _released()


def test_an_exception_in_authorize_fails_the_mount_naming_it(oauth_server):
    def authorize(url: str) -> str | None:
        raise RuntimeError("no browser here")

    with ToolRegistry() as registry:
        with pytest.raises(CapstanError) as err:
            registry.mount_mcp(
                url=f"{oauth_server}/mcp",
                protocol_version="2025-11-25",
                oauth=OAuth(authorize=authorize, redirect_uri=REDIRECT),
            )
        assert err.value.status == "CAPSTAN_ERR_MCP_CONNECT"
        assert "OAuth authorization was refused" in str(err.value)
        assert "RuntimeError in an OAuth callback: no browser here" in str(err.value)
        assert isinstance(err.value.__cause__, RuntimeError)
        assert registry.schemas("openai") == []  # nothing mounted
    assert _released()


def test_a_refusal_and_bad_options_fail_the_mount(oauth_server):
    with ToolRegistry() as registry:
        with pytest.raises(CapstanError) as err:
            registry.mount_mcp(
                url=f"{oauth_server}/mcp",
                protocol_version="2025-11-25",
                oauth=OAuth(authorize=lambda url: None, redirect_uri=REDIRECT),
            )
        assert err.value.status == "CAPSTAN_ERR_MCP_CONNECT"
        assert "OAuth authorization was refused" in str(err.value)
        with pytest.raises(CapstanError) as err:
            registry.mount_mcp(url=f"{oauth_server}/mcp", oauth=OAuth(authorize=lambda url: None))
        assert err.value.status == "CAPSTAN_ERR_INVALID_ARGUMENT"
        assert "redirect_uri" in str(err.value)
        with pytest.raises(CapstanError) as err:
            registry.mount_mcp(["true"], oauth=OAuth(tokens_load=lambda: None))
        assert err.value.status == "CAPSTAN_ERR_INVALID_ARGUMENT"
        with pytest.raises(TypeError):
            registry.mount_mcp(url=f"{oauth_server}/mcp", oauth={"redirect_uri": REDIRECT})  # type: ignore[arg-type]
    assert _released()


def test_oauth_is_public():
    assert "OAuth" in capstan.__all__

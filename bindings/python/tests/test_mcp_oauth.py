"""ToolRegistry.mount_mcp(oauth=OAuth(...)): a server over HTTP that asks for
OAuth 2.1 (tests/mcp/oauth_server.py, standard library only) is authorized
through the host's callables, which capstan calls on its own threads; the
tokens kept serve the next mount without a new authorization; a refusal or
an exception in authorize fails the mount cleanly, saying why. Without a
user: a client key (private_key_jwt) and the host's workload assertion (the
JWT-bearer grant) get tokens, and the options capstan refuses name the
problem."""

from __future__ import annotations

import ctypes
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
from capstan import CapstanError, IdentityProvider, OAuth, ToolCall, ToolRegistry
from capstan import _mcp_client
from capstan._lib import lib

SERVER = Path(__file__).resolve().parents[3] / "tests" / "mcp" / "oauth_server.py"
REDIRECT = "http://127.0.0.1:9/callback"
# The test-only key of oauth_server.py's client "keyed-1" (tests/fixtures/README.md).
CLIENT_KEY = (Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "oauth" / "client_key.pem").read_text()


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


def _mount_whoami(base: str, oauth: OAuth) -> None:
    """Mounts the server with ``oauth`` and calls whoami: the access token."""
    with ToolRegistry() as registry:
        with registry.mount_mcp(
            url=f"{base}/mcp", prefix="o_", protocol_version="2025-11-25", oauth=oauth, connect_timeout=60
        ) as mount:
            assert mount.tools == {"o_whoami": "whoami"}
            result = registry.execute(ToolCall("o_whoami", {}))
            assert not result.is_error, result
            assert result.content.startswith("at-"), result


def test_a_client_key_gets_tokens_with_a_signed_assertion(oauth_server):
    _mount_whoami(oauth_server, OAuth(client_id="keyed-1", client_key=CLIENT_KEY))
    stats = _stats(oauth_server)
    assert stats["key_grants"] == 1, stats
    assert stats["client_credentials_grants"] == 0, stats  # not with a secret
    assert stats["authorizations"] == 0 and stats["registrations"] == 0, stats
    assert stats["resources"] == [f"{oauth_server}/mcp"], stats
    assert _released()


def test_a_workload_assertion_gets_tokens_with_the_jwt_bearer_grant_and_a_refusal_fails_the_mount(oauth_server):
    asked: list[str] = []
    threads: list[str] = []

    def workload(audience: str) -> str | None:
        asked.append(audience)
        threads.append(threading.current_thread().name)
        return f"workload:{audience}"  # what the test server takes from its workloads

    _mount_whoami(oauth_server, OAuth(assertion=workload))
    assert asked == [oauth_server], "the audience is the authorization server's issuer"
    assert threads[0] != threading.current_thread().name
    assert _stats(oauth_server)["jwt_bearer_grants"] == 1

    with ToolRegistry() as registry:
        with pytest.raises(CapstanError) as err:
            registry.mount_mcp(
                url=f"{oauth_server}/mcp",
                protocol_version="2025-11-25",
                oauth=OAuth(assertion=workload, scopes=["rejected"]),
                connect_timeout=60,
            )
        assert err.value.status == "CAPSTAN_ERR_MCP_CONNECT"
        assert "invalid_scope" in str(err.value), err.value
        assert len(asked) == 2, "asked once for the refused mount, not again"

        def broken(audience: str) -> str | None:
            raise RuntimeError("no workload identity here")

        with pytest.raises(CapstanError) as err:
            registry.mount_mcp(url=f"{oauth_server}/mcp", protocol_version="2025-11-25", oauth=OAuth(assertion=broken))
        assert err.value.status == "CAPSTAN_ERR_MCP_CONNECT"
        assert "RuntimeError in an OAuth callback: no workload identity here" in str(err.value)
        assert isinstance(err.value.__cause__, RuntimeError)
        assert registry.schemas("openai") == []  # nothing mounted
    stats = _stats(oauth_server)
    assert stats["jwt_bearer_grants"] == 1, stats
    for other in ("authorizations", "registrations", "client_credentials_grants", "key_grants"):
        assert stats[other] == 0, stats
    assert _released()


def test_a_client_key_goes_only_to_the_issuer_it_is_pinned_to(oauth_server):
    with ToolRegistry() as registry:
        with pytest.raises(CapstanError) as err:
            registry.mount_mcp(
                url=f"{oauth_server}/mcp",
                protocol_version="2025-11-25",
                oauth=OAuth(client_id="keyed-1", client_key=CLIENT_KEY, client_issuer="https://as.example.com"),
                connect_timeout=60,
            )
        assert err.value.status == "CAPSTAN_ERR_MCP_CONNECT"
        assert "client_issuer" in str(err.value), err.value
    assert _stats(oauth_server)["client_credentials"] == 0, "the key signed nothing for that server"
    _mount_whoami(oauth_server, OAuth(client_id="keyed-1", client_key=CLIENT_KEY, client_issuer=oauth_server))
    assert _stats(oauth_server)["key_grants"] == 1
    assert _released()


def test_options_without_a_user_that_capstan_refuses_name_the_problem():
    url = "http://127.0.0.1:9/mcp"  # never reached: the options fail first
    idp = IdentityProvider(issuer="https://idp.example.com", token_endpoint="https://idp.example.com/token",
                           client_id="host-1")
    not_pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
    for oauth, why in (
        (OAuth(identity_provider=idp), "opts.oauth_idp_* needs opts.oauth_assertion"),
        (OAuth(client_key=CLIENT_KEY), "opts.oauth_client_key needs opts.oauth_client_id"),
        (OAuth(client_id="keyed-1", client_issuer="https://as.example.com"), "opts.oauth_client_issuer"),
        (OAuth(client_id="keyed-1", client_key=not_pem), "opts.oauth_client_key: "),
        (OAuth(client_id="keyed-1", client_key="not a key"), "PKCS#8 EC P-256"),
        (
            OAuth(assertion=lambda audience: None, identity_provider=IdentityProvider("https://idp.example.com", "", "h")),
            "go together",
        ),
    ):
        with ToolRegistry() as registry:
            with pytest.raises(CapstanError) as err:
                registry.mount_mcp(url=url, oauth=oauth)
            assert err.value.status == "CAPSTAN_ERR_INVALID_ARGUMENT", err.value
            assert why in str(err.value), err.value
    with ToolRegistry() as registry:
        with pytest.raises(TypeError):
            registry.mount_mcp(url=url, oauth=OAuth(assertion=lambda a: None, identity_provider={"issuer": "x"}))  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            registry.mount_mcp(url=url, oauth=OAuth(assertion="workload:x"))  # type: ignore[arg-type]
    assert _released()


def test_the_mount_options_have_the_librarys_layout():
    """The binding's struct is as big as capstan_mcp_mount_options (else the
    fields appended last are never read)."""
    init = lib().blocking.capstan_mcp_mount_options_init
    init.restype, init.argtypes = ctypes.c_int32, [ctypes.c_void_p]
    # Room for any version's struct (struct_size is at most 4096): _init
    # writes the library's size, which would overrun a smaller struct.
    room = (ctypes.c_uint64 * 512)()
    assert init(ctypes.addressof(room)) == 0
    library_size = ctypes.c_uint32.from_buffer(room).value
    assert library_size == ctypes.sizeof(_mcp_client._MountOptions)


def test_oauth_is_public():
    assert "OAuth" in capstan.__all__
    assert "IdentityProvider" in capstan.__all__

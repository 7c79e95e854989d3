"""Mounting an MCP server's tools into a registry (``ToolRegistry.mount_mcp``),
over ``capstan_mcp_mount_new`` (include/capstan.h), with OAuth 2.1 for a
server over HTTP that asks for it (:class:`OAuth`), and the host's answers to
what a mounted server asks while running a tool (``input=``).

The OAuth callables and the answerer reach capstan as module-level ctypes
trampolines whose ``user_data`` is an integer key into ``_held`` (never an
object address); capstan's ``oauth_destroy``/``input_destroy`` removes the
entry once, after the last call."""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import inspect
import itertools
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from ctypes import CFUNCTYPE, POINTER, Structure, c_char_p, c_int32, c_size_t, c_uint32, c_void_p
from typing import Any

from ._errors import CapstanError
from ._lib import DESTROY_FN, lib

_STALE_HANDLE = 12
_MCP_CONNECT = 24

AUTHORIZE_FN = CFUNCTYPE(c_size_t, c_void_p, c_char_p, c_void_p, c_size_t)
TOKENS_LOAD_FN = CFUNCTYPE(c_size_t, c_void_p, c_void_p, c_size_t)
TOKENS_SAVE_FN = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t)
INPUT_FN = CFUNCTYPE(c_size_t, c_void_p, c_char_p, c_char_p, c_void_p, c_size_t, c_void_p, c_size_t)
ASSERTION_FN = CFUNCTYPE(c_size_t, c_void_p, c_char_p, c_void_p, c_size_t)

# capstan_mcp_mount_options.input_methods (CAPSTAN_MCP_INPUT_*).
INPUT_METHODS = {"elicitation/create": 1, "sampling/createMessage": 2, "roots/list": 4}

Answerer = Callable[[str | None, str, Any], Any]


@dataclasses.dataclass(frozen=True)
class IdentityProvider:
    """The enterprise identity provider of :attr:`OAuth.identity_provider`
    (enterprise-managed authorization, SEP-990): its ``issuer`` identifier,
    the ``token_endpoint`` where capstan exchanges the user's ID token for
    an ID-JAG, and the host's ``client_id`` there (with its
    ``client_secret``, None for a public client)."""

    issuer: str
    token_endpoint: str
    client_id: str
    client_secret: str | None = None


@dataclasses.dataclass(frozen=True)
class OAuth:
    """OAuth 2.1 for :meth:`ToolRegistry.mount_mcp` of a ``url`` whose server
    asks for authorization (the MCP authorization spec). capstan runs the
    flow (discovery, client registration, PKCE, the code exchange, refresh,
    a step-up on ``insufficient_scope``); the host does what only it can::

        def authorize(url: str) -> str | None:
            webbrowser.open(url)
            return wait_for_redirect()   # the whole redirect URL, code and state

        registry.mount_mcp(url="https://mcp.example.com/mcp",
                           oauth=OAuth(authorize, redirect_uri="http://127.0.0.1:8976/callback"))

    ``authorize(url)``: shows the authorization URL to the user, waits for
    the authorization server to send them to ``redirect_uri`` and returns
    that whole URL (at most 8192 bytes); ``None`` or ``""`` refuses. It runs
    on one of capstan's threads and may block up to the mount's
    ``connect_timeout``. An exception in it refuses too: the mount then
    raises :class:`CapstanError` (``CAPSTAN_ERR_MCP_CONNECT``) naming it,
    chained to it. ``redirect_uri`` is required with ``authorize``.
    ``client_id``/``client_secret``: a client registered beforehand (else
    capstan registers one); ``client_metadata_url``: an HTTPS client-id
    metadata document; ``scopes``: space-separated or a list (else the
    server's choice). ``tokens_load()`` returns the JSON text
    ``tokens_save(json)`` kept last (``None``: nothing kept); ``tokens_save``
    gets ``None`` to forget. The text holds secrets: keep it as one. Without
    them tokens live in memory for the mount's life. Every callable runs on
    capstan's threads (possibly on several at once); capstan lets go of
    them once the mount is unmounted (or failed).

    Without a user (no ``authorize``): ``client_id`` with ``client_secret``
    or ``client_key`` (PEM text of the client's PKCS#8 EC P-256 private key:
    it authenticates with a signed assertion, private_key_jwt, ES256) gets
    tokens with the client-credentials grant. ``assertion(audience)``
    returns a JWT the host got elsewhere (``None`` or ``""``: none): alone,
    the workload's identity token, sent in the JWT-bearer grant to the
    server's authorization server, whose issuer is ``audience``; with
    ``identity_provider`` (:class:`IdentityProvider`), the user's ID token
    from that enterprise identity provider (``audience`` is its issuer),
    which capstan exchanges there for an ID-JAG first. It runs on one of
    capstan's threads; an exception in it refuses, as in ``authorize``. A
    key that is not such PEM text, a key without ``client_id`` or an
    identity provider without ``assertion`` raise :class:`CapstanError`
    (``CAPSTAN_ERR_INVALID_ARGUMENT``) naming the option. DPoP needs nothing
    from the host: capstan binds its tokens when the authorization server
    offers it.

    ``client_issuer``: the issuer identifier of the authorization server
    ``client_secret`` or ``client_key`` belong to; they are sent there
    only. Without it they go only to an authorization server of the MCP
    server's own origin; another one fails the mount, and nothing is sent.
    """

    authorize: Callable[[str], str | None] | None = None
    redirect_uri: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    client_metadata_url: str | None = None
    scopes: str | Sequence[str] | None = None
    tokens_load: Callable[[], str | None] | None = None
    tokens_save: Callable[[str | None], None] | None = None
    client_key: str | None = None
    assertion: Callable[[str], str | None] | None = None
    identity_provider: IdentityProvider | None = None
    client_issuer: str | None = None


class _Held:
    """One mount's OAuth callables or answerer, and the first exception one
    raised."""

    __slots__ = ("oauth", "answer", "error", "lock")

    def __init__(self, oauth: OAuth | None = None, answer: Answerer | None = None) -> None:
        self.oauth = oauth
        self.answer = answer
        self.error: BaseException | None = None
        self.lock = threading.Lock()

    def note(self, exc: BaseException) -> None:
        with self.lock:
            if self.error is None:
                self.error = exc


_held: dict[int, _Held] = {}
_keys = itertools.count(1)


def _on_authorize(key: int, url: bytes | None, redirect: int, cap: int) -> int:
    held = _held.get(key)
    if held is None or held.oauth is None or held.oauth.authorize is None:
        return 0
    try:
        to = held.oauth.authorize((url or b"").decode("utf-8", "replace"))
        if not to:
            return 0
        data = str(to).encode("utf-8")
        if len(data) > cap:
            raise ValueError(f"the redirect URL is {len(data)} bytes, more than the {cap} capstan takes")
    except Exception as exc:
        held.note(exc)
        return 0
    ctypes.memmove(redirect, data, len(data))
    return len(data)


def _on_assertion(key: int, audience: bytes | None, out: int, cap: int) -> int:
    held = _held.get(key)
    if held is None or held.oauth is None or held.oauth.assertion is None:
        return 0
    try:
        jwt = held.oauth.assertion((audience or b"").decode("utf-8", "replace"))
        if not jwt:
            return 0
        if not isinstance(jwt, str):
            raise TypeError(f"assertion returned {type(jwt).__name__}, not the JWT as a str")
        data = jwt.encode("utf-8")
        if len(data) > cap:
            raise ValueError(f"the assertion is {len(data)} bytes, more than the {cap} capstan takes")
    except Exception as exc:
        held.note(exc)
        return 0
    ctypes.memmove(out, data, len(data))
    return len(data)


def _on_tokens_load(key: int, buf: int, cap: int) -> int:
    held = _held.get(key)
    if held is None or held.oauth is None or held.oauth.tokens_load is None:
        return 0
    try:
        text = held.oauth.tokens_load()
        data = b"" if not text else str(text).encode("utf-8")
    except Exception as exc:
        held.note(exc)
        return 0
    if len(data) > cap:
        return 0  # as nothing kept: capstan authorizes again
    ctypes.memmove(buf, data, len(data))
    return len(data)


def _on_tokens_save(key: int, data: int | None, size: int) -> None:
    held = _held.get(key)
    if held is None or held.oauth is None or held.oauth.tokens_save is None:
        return
    try:
        held.oauth.tokens_save(ctypes.string_at(data, size).decode("utf-8", "replace") if data and size else None)
    except Exception as exc:
        held.note(exc)


def _on_input(key: int, tool: bytes | None, method: bytes | None, params: int, size: int, out: int, cap: int) -> int:
    held = _held.get(key)
    if held is None or held.answer is None:
        return 0
    try:
        args = json.loads(ctypes.string_at(params, size)) if params and size else {}
        answer = held.answer(
            None if tool is None else tool.decode("utf-8", "replace"), (method or b"").decode("utf-8", "replace"), args
        )
        if inspect.iscoroutine(answer):
            answer = asyncio.run(answer)  # a capstan thread: no loop of the host's runs here
        if answer is None:
            return 0
        data = json.dumps(answer, ensure_ascii=False).encode("utf-8")
        if len(data) > cap:
            raise ValueError(f"the answer is {len(data)} bytes, more than the {cap} capstan takes")
    except Exception as exc:
        held.note(exc)
        return 0
    ctypes.memmove(out, data, len(data))
    return len(data)


def _on_release(key: int) -> None:
    _held.pop(key, None)


# Module-level: ctypes keeps a callback alive only while it is referenced.
_AUTHORIZE = AUTHORIZE_FN(_on_authorize)
_TOKENS_LOAD = TOKENS_LOAD_FN(_on_tokens_load)
_TOKENS_SAVE = TOKENS_SAVE_FN(_on_tokens_save)
_INPUT = INPUT_FN(_on_input)
_ASSERTION = ASSERTION_FN(_on_assertion)
_RELEASE = DESTROY_FN(_on_release)


class _MountOptions(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("argv", POINTER(c_char_p)),
        ("argc", c_size_t),
        ("env", POINTER(c_char_p)),
        ("env_count", c_size_t),
        ("cwd", c_char_p),
        ("url", c_char_p),
        ("headers", POINTER(c_char_p)),
        ("header_count", c_size_t),
        ("prefix", c_char_p),
        ("connect_timeout_ms", c_uint32),
        ("call_timeout_ms", c_uint32),
        ("max_reconnects", c_uint32),
        ("reconnect_backoff_ms", c_uint32),
        ("protocol_version", c_char_p),
        # Appended in 0.4 (OAuth for HTTP mounts).
        ("oauth_authorize", AUTHORIZE_FN),
        ("oauth_redirect_uri", c_char_p),
        ("oauth_client_id", c_char_p),
        ("oauth_client_secret", c_char_p),
        ("oauth_client_metadata_url", c_char_p),
        ("oauth_scopes", c_char_p),
        ("oauth_tokens_load", TOKENS_LOAD_FN),
        ("oauth_tokens_save", TOKENS_SAVE_FN),
        ("oauth_user_data", c_void_p),
        ("oauth_destroy", DESTROY_FN),
        # Appended in 0.4 (the host answers a server's input requests).
        ("input_answer", INPUT_FN),
        ("input_methods", c_uint32),
        ("input_user_data", c_void_p),
        ("input_destroy", DESTROY_FN),
        # Appended in 0.4 (grants without a user).
        ("oauth_client_key", c_char_p),
        ("oauth_assertion", ASSERTION_FN),
        ("oauth_idp_issuer", c_char_p),
        ("oauth_idp_token_endpoint", c_char_p),
        ("oauth_idp_client_id", c_char_p),
        ("oauth_idp_client_secret", c_char_p),
        # Appended in 0.4 (the issuer client credentials are pinned to).
        ("oauth_client_issuer", c_char_p),
    ]


_declared: dict[str, Any] | None = None


def _fns() -> dict[str, Any]:
    """The MCP client functions, GIL released (mount and unmount wait)."""
    global _declared
    if _declared is None:
        handle = lib().blocking
        fns = {}
        for name, restype, argtypes in (
            ("capstan_mcp_mount_new", c_int32, [c_void_p, POINTER(_MountOptions), POINTER(c_void_p)]),
            ("capstan_mcp_mount_free", c_int32, [c_void_p]),
            ("capstan_mcp_mount_info_json", c_int32, [c_void_p, POINTER(c_void_p), POINTER(c_size_t)]),
        ):
            fn = getattr(handle, name)
            fn.restype, fn.argtypes = restype, argtypes
            fns[name] = fn
        _declared = fns
    return _declared


def _strings(items: Sequence[str]) -> tuple[Any, int]:
    array = (c_char_p * max(len(items), 1))(*[s.encode() for s in items])
    return array, len(items)


def _input_methods(answer: Answerer | None, methods: Sequence[str] | None) -> int:
    """The CAPSTAN_MCP_INPUT_* flags of ``input_methods``, checked."""
    if answer is None:
        if methods is not None:
            raise ValueError("input_methods needs input (the callable that answers them)")
        return 0
    if not callable(answer):
        raise TypeError("input is a callable (tool, method, params) -> answer or None")
    if methods is None:
        return INPUT_METHODS["elicitation/create"]
    if isinstance(methods, str):
        raise TypeError("input_methods is a list of method names, not one string")
    flags = 0
    for name in methods:
        if name not in INPUT_METHODS:
            raise ValueError(f"input_methods: unknown method {name!r}; known: {', '.join(INPUT_METHODS)}")
        flags |= INPUT_METHODS[name]
    if flags == 0:
        raise ValueError(f"input_methods is empty; name at least one of {', '.join(INPUT_METHODS)}")
    return flags


def _ms(seconds: float | None, what: str) -> int:
    if seconds is None:
        return 0
    if seconds < 0:
        raise ValueError(f"{what} must not be negative")
    return max(1, min(int(seconds * 1000), 2**32 - 2))


class McpMount:
    """A mounted MCP server. Its tools are tools of the registry until
    ``unmount()`` (also at the end of a ``with`` block)."""

    def __init__(self, handle: int) -> None:
        self._handle: int | None = handle

    @property
    def info(self) -> dict[str, Any]:
        """``connected``, ``tools`` (local name -> remote name), ``problems``
        (remote tools not mounted, with why), ``reconnects``, ``gave_up``,
        ``last_error``."""
        out, size = c_void_p(), c_size_t()
        st = _fns()["capstan_mcp_mount_info_json"](self._handle, ctypes.byref(out), ctypes.byref(size))
        if st != 0:
            raise lib().error(st, "mount info")
        return json.loads(lib().take_text(out, size))

    @property
    def connected(self) -> bool:
        """True while the mount is connected to its server (the "connected"
        field of capstan_mcp_mount_info_json); False once unmounted."""
        if self._handle is None:
            return False
        try:
            return bool(self.info["connected"])
        except CapstanError:
            return False

    @property
    def tools(self) -> dict[str, str]:
        return self.info["tools"]

    @property
    def problems(self) -> list[dict[str, str]]:
        return self.info["problems"]

    def unmount(self) -> None:
        """Disconnects, stops the server process, unregisters the tools.
        Calls still in flight end as tool errors. Idempotent."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        st = _fns()["capstan_mcp_mount_free"](handle)
        if st not in (0, _STALE_HANDLE):
            raise lib().error(st, "unmount")

    def __enter__(self) -> McpMount:
        return self

    def __exit__(self, *exc: object) -> None:
        self.unmount()

    def __del__(self) -> None:
        try:
            self.unmount()
        except Exception:
            pass


def mount_mcp(
    registry: Any,
    command: Sequence[str] | None = None,
    *,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    prefix: str = "",
    connect_timeout: float = 10.0,
    call_timeout: float | None = None,
    max_reconnects: int = 5,
    reconnect_backoff: float = 0.2,
    protocol_version: str | None = None,
    oauth: OAuth | None = None,
    input: Answerer | None = None,
    input_methods: Sequence[str] | None = None,
) -> McpMount:
    """Mounts the tools of an MCP server: ``command`` (argv of a stdio
    server) or ``url`` (streamable HTTP, with ``headers``, and ``oauth`` for
    a server that asks for authorization, see :class:`OAuth`). Each remote
    tool becomes ``prefix + name``.

    ``input(tool, method, params)`` answers what the server asks while
    running a tool, for the methods in ``input_methods`` (of
    "elicitation/create", "sampling/createMessage", "roots/list"; default
    elicitation only), declared to the server: ``tool`` is the mounted
    tool's local name (``None`` for an older server's request made
    mid-call), ``params`` the request's params (parsed JSON). It returns the
    method's result as a JSON-able value (e.g. ``{"action": "accept",
    "content": {"name": "Ada"}}``), or ``None`` for no answer: the call then
    fails as a tool error saying the host gave no answer, as it does when
    ``input`` raises. It may be ``async def`` (run to completion on its own
    event loop) and may block (a user answering); it runs on capstan's
    threads, possibly on several at once. Raises CapstanError (status
    CAPSTAN_ERR_MCP_CONNECT when the server cannot be reached or its
    authorization failed or was refused). When the connection dies the
    mount reconnects up to ``max_reconnects`` times in a row (5 by default,
    as in Rust; 0: never), ``reconnect_backoff`` seconds apart, doubled
    after each failure."""
    if (command is None) == (url is None):
        raise ValueError("give either command (a list of strings) or url")
    if isinstance(command, str):
        raise TypeError("command is a list of strings (argv), not one string")
    if oauth is not None and not isinstance(oauth, OAuth):
        raise TypeError("oauth is a capstan.OAuth")
    if oauth is not None and oauth.identity_provider is not None and not isinstance(
        oauth.identity_provider, IdentityProvider
    ):
        raise TypeError("oauth.identity_provider is a capstan.IdentityProvider")
    if oauth is not None and oauth.assertion is not None and not callable(oauth.assertion):
        raise TypeError("oauth.assertion is a callable (audience) -> JWT or None")
    methods = _input_methods(input, input_methods)
    opts = _MountOptions()
    opts.struct_size = ctypes.sizeof(_MountOptions)
    keep: list[Any] = []
    if command is not None:
        argv, opts.argc = _strings(list(command))
        opts.argv = ctypes.cast(argv, POINTER(c_char_p))
        envs, opts.env_count = _strings([f"{k}={v}" for k, v in (env or {}).items()])
        opts.env = ctypes.cast(envs, POINTER(c_char_p))
        keep += [argv, envs]
        opts.cwd = cwd.encode() if cwd else None
    else:
        assert url is not None
        opts.url = url.encode()
        hs, opts.header_count = _strings([f"{k}: {v}" for k, v in (headers or {}).items()])
        opts.headers = ctypes.cast(hs, POINTER(c_char_p))
        keep.append(hs)
    opts.prefix = prefix.encode()
    opts.connect_timeout_ms = _ms(connect_timeout, "connect_timeout")
    opts.call_timeout_ms = _ms(call_timeout, "call_timeout")
    if max_reconnects < 0:
        raise ValueError("max_reconnects must not be negative")
    # The C field: 0 is its default (5), UINT32_MAX (CAPSTAN_MCP_RECONNECT_NEVER) never.
    opts.max_reconnects = 2**32 - 1 if max_reconnects == 0 else min(max_reconnects, 2**32 - 2)
    opts.reconnect_backoff_ms = _ms(reconnect_backoff, "reconnect_backoff")
    opts.protocol_version = protocol_version.encode() if protocol_version else None
    held = None
    if oauth is not None:
        scopes = oauth.scopes if oauth.scopes is None or isinstance(oauth.scopes, str) else " ".join(oauth.scopes)
        idp = oauth.identity_provider
        for field, text in (
            ("oauth_redirect_uri", oauth.redirect_uri),
            ("oauth_client_id", oauth.client_id),
            ("oauth_client_secret", oauth.client_secret),
            ("oauth_client_metadata_url", oauth.client_metadata_url),
            ("oauth_scopes", scopes),
            ("oauth_client_key", oauth.client_key),
            ("oauth_idp_issuer", None if idp is None else idp.issuer),
            ("oauth_idp_token_endpoint", None if idp is None else idp.token_endpoint),
            ("oauth_idp_client_id", None if idp is None else idp.client_id),
            ("oauth_idp_client_secret", None if idp is None else idp.client_secret),
            ("oauth_client_issuer", oauth.client_issuer),
        ):
            setattr(opts, field, text.encode() if text else None)
        held = _Held(oauth)
        key = next(_keys)
        _held[key] = held  # capstan runs _RELEASE once, whatever happens below
        if oauth.authorize is not None:
            opts.oauth_authorize = _AUTHORIZE
        if oauth.assertion is not None:
            opts.oauth_assertion = _ASSERTION
        if oauth.tokens_load is not None:
            opts.oauth_tokens_load = _TOKENS_LOAD
        if oauth.tokens_save is not None:
            opts.oauth_tokens_save = _TOKENS_SAVE
        opts.oauth_user_data = key
        opts.oauth_destroy = _RELEASE
    if input is not None:
        key = next(_keys)
        _held[key] = _Held(answer=input)  # capstan runs _RELEASE once
        opts.input_answer = _INPUT
        opts.input_methods = methods
        opts.input_user_data = key
        opts.input_destroy = _RELEASE
    out = c_void_p()
    ptr = registry._enter()
    try:
        st = _fns()["capstan_mcp_mount_new"](ptr, ctypes.byref(opts), ctypes.byref(out))
    finally:
        registry._leave()
    if st != 0:
        error = lib().error(st, "mount_mcp")
        raised = None if held is None else held.error
        if raised is not None and st == _MCP_CONNECT:
            error.args = (f"{error.args[0]} ({type(raised).__name__} in an OAuth callback: {raised})",)
            raise error from raised
        raise error
    if not out.value:
        raise CapstanError("mount_mcp returned no mount")
    return McpMount(out.value)


__all__ = ["IdentityProvider", "McpMount", "OAuth", "mount_mcp", "CapstanError"]

"""ToolRegistry's fast paths, where capstan checks the calls and the binding
runs the tools itself: a lone call (``execute``/``aexecute``: one crossing,
capstan_registry_check_call) and a batch of quick sync calls
(``execute_many``: one crossing for the batch, capstan_registry_check_calls).
Each result reads exactly as a capstan batch's would."""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Callable
from typing import Any

from . import _callbacks, _json, _lib
from . import _registry_core as _core
from ._calls import ToolCall, ToolResult
from ._errors import RegistryClosedError
from ._json import _scan
from ._lone import _failed, _now, _ok, _run_here
from ._registry_core import _advance
from ._registry_host import _HostExecutions

_c_char_p, _c_size_t, _c_uint32, _byref = ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32, ctypes.byref
# CAPSTAN_NTS as a ready parameter: a name, or arguments without a NUL byte,
# go NUL-terminated (bytes objects are), with no length to convert per call.
_NTS = _c_size_t.from_param(_lib.NTS)
_QUICK_NS = _callbacks.QUICK_NS
_new_result = ToolResult.__new__

# The library's functions of the lone call's check, bound once it is loaded.
_check_call: Any = None
_free: Any = None


def _library() -> None:
    global _check_call, _free
    library = _core._library()
    _check_call, _free = library.raw_registry_check_call, library.raw_string_free

# The check's outputs (outcome, text, and the pointers to them ctypes
# passes), reused: one is taken for a crossing and put back after its
# outputs are read, so a call made meanwhile on this thread (a signal
# handler's) or on another gets one of its own.
_spare: list[tuple[Any, Any, Any, Any]] = []
_take, _put_back = _spare.pop, _spare.append


def _arguments(arguments: Any) -> bytes | None:
    """A call's arguments as the check takes them; None: the general path
    says what is wrong with them."""
    kind = type(arguments)
    if kind is str:
        try:
            return arguments.encode()  # type: ignore[no-any-return]
        except UnicodeEncodeError:  # a lone surrogate: capstan's parser names it
            return arguments.encode("utf-8", "backslashreplace")  # type: ignore[no-any-return]
    if kind is dict:
        try:
            return (_json.dumps(arguments) if arguments else "{}").encode()
        except (TypeError, ValueError, RecursionError):
            return None
    return None


def _outputs() -> tuple[Any, Any, Any, Any]:
    outcome, text = _c_uint32(), _c_char_p()
    return outcome, text, _byref(outcome), _byref(text)


class _LoneExecutions(_HostExecutions):
    """The fast paths of ToolRegistry's execution."""

    # The general path (_registry_exec), where a batch goes on from a call
    # the fast path cannot take.
    _run_general: Callable[..., list[ToolResult]]

    def _check(self, call: ToolCall) -> Any:
        """The lone-call fast path: capstan_registry_check_call validates the call on
        this thread (no callback, thread or timer), and the binding runs the
        tool itself. For tools without approval, timeout or output cap (and
        unknown names): returns the result of a call that cannot run, or
        (entry, validated arguments); None when the general path must run it."""
        name = call.name
        name_len: Any
        lean = self._lean.get(name)
        if lean is None:
            if name in self._tools:
                return None
            entry, name_bytes = None, name.encode("utf-8", "backslashreplace")
            name_len = _c_size_t(len(name_bytes))
        else:
            entry, name_bytes = lean
            name_len = _NTS  # [A-Za-z0-9_-]
        arguments = call.arguments
        if type(arguments) is str and arguments.isascii():  # the commonest, without a call
            encoded = arguments.encode()
        else:
            encoded = _arguments(arguments)  # type: ignore[assignment]
            if encoded is None:
                return None
        found, text = self._cross(name_bytes, name_len, encoded)
        if found:
            return ToolResult(call.id, name, text.decode(), True, None, _lib.OUTCOMES[found], 0)
        if entry is None:  # registered meanwhile: the general path
            return None
        return entry, (_scan(text.decode(), 0)[0] if text != b"{}" else {})

    def _cross(self, name: bytes, name_len: Any, encoded: bytes) -> tuple[int, bytes]:
        """capstan_registry_check_call: (outcome, its text)."""
        try:
            slot = _take()
        except IndexError:
            slot = _outputs()
        outcome, out, outcome_ref, out_ref = slot
        next(self._entered)
        try:
            if self._ptr is None or self._closing:
                raise RegistryClosedError("the tool registry is closed", "CAPSTAN_ERR_SHUTTING_DOWN")
            status = _check_call(
                self._ptr_arg,
                name,
                name_len,
                encoded,
                _NTS if b"\0" not in encoded else _c_size_t(len(encoded)),
                self._check_flags,
                outcome_ref,
                out_ref,
                None,
            )
            if status != 0:
                raise _core._L.error(status, "capstan_registry_check_call failed")
            text, found = out.value, outcome.value
            _free(out)
        finally:
            next(self._left)  # self._leave(), inline
            if self._closing:
                self._free_when_idle()
        _put_back(slot)
        return found, text

    def _execute_lone(self, call: ToolCall, lean: tuple[Any, bytes]) -> ToolResult | None:
        """:meth:`execute` of a lone call of a plain sync tool (``lean``: its
        entry and encoded name): :meth:`_check` and :meth:`_run_lone` in one
        frame (each Python call costs here), for the commonest arguments and
        results. None: :meth:`_check` takes it."""
        entry, name = lean
        arguments = call.arguments
        if type(arguments) is not str or not arguments.isascii():
            return None
        encoded = arguments.encode()
        if b"\0" in encoded:
            return None
        try:
            slot = _take()
        except IndexError:
            slot = _outputs()
        next(self._entered)
        try:
            if self._ptr is None or self._closing:
                raise RegistryClosedError("the tool registry is closed", "CAPSTAN_ERR_SHUTTING_DOWN")
            status = _check_call(self._ptr_arg, name, _NTS, encoded, _NTS, self._check_flags, slot[2], slot[3], None)
            if status != 0:
                raise _core._L.error(status, "capstan_registry_check_call failed")
            out = slot[1]
            text, found = out.value, slot[0].value
            _free(out)
        finally:
            next(self._left)  # self._leave(), inline
            if self._closing:
                self._free_when_idle()
        _put_back(slot)
        if found:  # counted by the core
            return ToolResult(call.id, call.name, text.decode(), True, None, _lib.OUTCOMES[found], 0)
        args = _scan(text.decode(), 0)[0] if text != b"{}" else {}
        started = _now()
        try:
            value = entry.fn(**args)
        except Exception as exc:
            _callbacks.observe(entry, started)
            return self._counted(_failed(call, exc, started))
        ended = _now()
        if ended - started >= _QUICK_NS or entry.strikes:  # observe(), inline
            _callbacks.observe(entry, started)
        elif not entry.quick:
            entry.quick = True
        kind = type(value)
        if kind is int:  # as _ok() renders it
            content = int.__repr__(value)
        elif kind is str and value.isascii():
            content = value
        else:
            try:
                result = _ok(call, value, started, self._max_result_bytes)
            except Exception as exc:
                result = _failed(call, exc, started)
            return self._counted(result)
        result = _new_result(ToolResult)  # ToolResult(...) without its __init__'s frame
        result.call_id, result.name, result.content, result.is_error = call.id, call.name, content, False
        result.data, result.outcome, result.duration_us, result.error = value, "ok", (ended - started) // 1000, None
        counter = entry.ok_count
        if counter is None:
            counter = entry.ok_count = self._lone.setdefault((call.name, "ok"), itertools.count())
        next(counter)
        return result

    def _run_lone(self, call: ToolCall, entry: Any, args: dict[str, Any]) -> ToolResult:
        """Runs a checked lone call of a sync tool on this thread and counts it."""
        return self._counted(_run_here(call, entry, args, self._max_result_bytes))

    def _counted(self, result: ToolResult) -> ToolResult:
        """Counts a lone call the fast path ran for :meth:`stats` (the core
        counted those it answered without running)."""
        key = (result.name, result.outcome)
        counter = self._lone.get(key)
        if counter is None:
            counter = self._lone.setdefault(key, itertools.count())
        next(counter)
        return result

    def _all_quick(self, calls: list[ToolCall]) -> bool:
        """Whether every call names a quick lean tool, or a name capstan
        answers itself (an unknown tool; a core tool such as the search
        tool or a mounted one goes to the general path from that call on)."""
        lean, tools = self._lean, self._tools
        for call in calls:
            found = lean.get(call.name)
            if found is None:
                if call.name in tools:
                    return False
            elif not found[0].quick:
                return False
        return True

    def _run_inline(self, calls: list[ToolCall], approved: Any, parallel: bool, limit: int) -> list[ToolResult]:
        """Runs quick calls here, each as the lone-call fast path does, all
        checked by capstan in one crossing (capstan_registry_check_calls);
        from a call that cannot take that path or ran slow, the rest goes to
        the general path."""
        checked = self._check_all(calls)
        if checked is None:
            return self._run_each(calls, approved, parallel, limit)
        results: list[ToolResult] = []
        append, lean, bound = results.append, self._lean, self._max_result_bytes
        now, observe, quick_ns = _now, _callbacks.observe, _callbacks.QUICK_NS
        tally: dict[tuple[str, str], int] = {}
        for call, (outcome, found) in zip(calls, checked):
            if outcome != "ok":  # found is the text; counted by the core
                append(ToolResult(call.id, call.name, found, True, None, outcome, 0))
                continue
            lean_entry = lean.get(call.name)
            if lean_entry is None:  # registered or replaced meanwhile
                break
            entry = lean_entry[0]
            if entry.plain:  # _run_here, inlined for the commonest results
                started = now()
                try:
                    value = entry.fn(**found)
                except Exception as exc:
                    observe(entry, started)
                    result = _failed(call, exc, started)
                else:
                    ended = now()
                    if ended - started < quick_ns:  # observe(), inlined
                        entry.quick, entry.strikes = True, 0
                    else:
                        observe(entry, started)
                    kind = type(value)
                    if kind is int or kind is str:  # _ok() renders these so
                        content = value if kind is str else int.__repr__(value)
                        if not content.isascii():
                            content = content.encode("utf-8", "backslashreplace").decode()
                        result = ToolResult(call.id, call.name, content, False, value, "ok", (ended - started) // 1000)
                    else:
                        try:
                            result = _ok(call, value, started, bound)
                        except Exception as exc:
                            result = _failed(call, exc, started)
            else:
                result = _run_here(call, entry, found, bound)
            append(result)
            key = (call.name, result.outcome)
            tally[key] = tally.get(key, 0) + 1
            if not entry.quick:  # slow twice in a row: the pool from here
                break
        self._count_lone(tally)
        done = len(results)
        if done == len(calls):
            return results
        # The rest: those capstan answered keep their answer (counted once);
        # the others run on the general path.
        rest = [i for i in range(done, len(calls)) if checked[i][0] == "ok"]
        ran = self._run_general([calls[i] for i in rest], approved, parallel, limit, None, None) if rest else []
        tail: list[Any] = [None] * (len(calls) - done)
        for i, result in zip(rest, ran):
            tail[i - done] = result
        for i in range(done, len(calls)):
            if tail[i - done] is None:
                (outcome, text), call = checked[i], calls[i]
                tail[i - done] = ToolResult(call.id, call.name, text, True, None, outcome, 0)
        return results + tail

    def _check_all(self, calls: list[ToolCall]) -> list[list[Any]] | None:
        """capstan_registry_check_calls over ``calls``: per call
        ``["ok", arguments]`` or ``[outcome, text]``; None when a call's
        arguments cannot be sent as they are (the per-call path says
        which)."""
        text = self._check_all_text(calls)
        return None if text is None else _scan(text, 0)[0]  # type: ignore[no-any-return]

    def _check_all_text(self, calls: list[ToolCall]) -> str | None:
        """:meth:`_check_all`'s answer as capstan's JSON text (an array of
        the pairs), for a caller that reads one call's pair at a time."""
        lean = self._lean
        parts: list[str] = []
        append = parts.append
        encode_str, dumps = _json._encode_str, _json.dumps
        try:
            for call in calls:
                name = call.name
                # A registered name is [A-Za-z0-9_-]: nothing to escape.
                quoted = f'"{name}"' if name in lean else dumps(name)
                arguments = call.arguments
                if type(arguments) is str:
                    encoded = encode_str(arguments if arguments.isascii() else _sendable(arguments))
                elif type(arguments) is dict:
                    encoded = dumps(arguments) if arguments else "{}"
                else:
                    return None
                append(f'{{"name":{quoted},"arguments":{encoded}}}')
        except (TypeError, ValueError, RecursionError):
            return None
        payload = ("[" + ",".join(parts) + "]").encode()
        out = _c_char_p()
        ptr = self._enter()
        try:
            status = _core._L.registry_check_calls(ptr, payload, len(payload), self._check_flags, out, None)
        finally:
            self._leave()
        if status != 0:  # e.g. a lone surrogate in a name: the per-call path
            return None
        text: str = out.value.decode()  # type: ignore[union-attr]
        _core._L.string_free(out)
        return text

    def _count_lone(self, tally: dict[tuple[str, str], int]) -> None:
        """Adds the lone calls of a batch, by (tool, outcome), for :meth:`stats`."""
        for key, n in tally.items():
            counter = self._lone.get(key)
            if counter is None:
                counter = self._lone.setdefault(key, itertools.count())
            _advance(counter, n)

    def _run_each(self, calls: list[ToolCall], approved: Any, parallel: bool, limit: int) -> list[ToolResult]:
        """:meth:`_run_inline` one call at a time (capstan_registry_check_call
        each), for a batch whose payload cannot be sent whole."""
        results: list[ToolResult] = []
        append, check, counted = results.append, self._check, self._counted
        bound = self._max_result_bytes
        for call in calls:
            checked = check(call)
            if checked is None:
                break
            if type(checked) is ToolResult:  # invalid arguments: counted by the core
                append(checked)
                continue
            entry, args = checked
            append(counted(_run_here(call, entry, args, bound)))
            if not entry.quick:  # slow twice in a row: the pool from here
                break
        else:
            return results
        rest = calls[len(results):]
        if rest:
            results += self._run_general(rest, approved, parallel, limit, None, None)
        return results


def _sendable(arguments: str) -> str:
    """Arguments text as the lone call sends it (``_check``): a lone surrogate,
    which UTF-8 cannot hold, as its backslash escape, for capstan's parser to
    refuse in this call alone (as JSON-string text it would make the whole
    batch's JSON invalid)."""
    return arguments.encode("utf-8", "backslashreplace").decode()

"""render_result equals the core's rendering of JSON content byte for byte
(issue #34): each value goes to capstan as CAPSTAN_CONTENT_JSON, written as
json.dumps writes it by default (spaces, \\u escapes), so that the core
parses it and writes it again itself; its content must be what
render_result gives, which is also what a Python tool's result reads."""

from __future__ import annotations

import ctypes
import dataclasses
import enum
import json

import pytest

from capstan import ToolCall, ToolRegistry, _lib, render_result

VALUES = [
    {"a": 1},
    {"city": "Zürich", "temp": 18.5, "tags": ["å", "日本", "🙂"], "ok": True, "none": None},
    [1, -1, 0, 2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**63) - 1, 10**25, -(10**30)],
    [0.0, -0.0, 1.0, -2.5, 0.1, 1 / 3, 123456.789, 1e15, 9999999999999998.0],
    [1e16, 1e17, 1.5e16, 1e21, 1e22, 1.7976931348623157e308, 5e-324, -1e300],
    [1e-4, 1.5e-4, 1e-5, -1.5e-5, 9.99e-5, 1e-6, -1.25e-7, 3e-9, 1e-10, 2.2250738585072014e-308],
    {"nested": {"deep": [{"x": [[], {}]}]}, "empty": "", "order": {"z": 1, "a": 2, "m": 3}},
    ["quote \" backslash \\ slash /", "tab\tnewline\nreturn\r", "\x00\x01\x1f\x7f", "\u2028\u2029"],
    {"1e+16": "1e+16 as text", "x": [1e16]},
    "a bare string",
    3.25,
    True,
    None,
    [],
    {},
]


@pytest.fixture
def core_render():
    """The content capstan gives a call whose tool returned ``text`` as
    CAPSTAN_CONTENT_JSON: a raw ctypes tool, not the binding's trampoline."""
    texts: list[bytes] = []
    library = _lib.lib()

    def raw(_user: int, call: int) -> None:
        size = ctypes.c_size_t()
        args = json.loads(library.call_arguments(call, ctypes.byref(size)))
        text = texts[args["i"]]
        library.call_return(call, _lib.CONTENT_JSON, text, len(text))

    callback = _lib.TOOL_FN(raw)
    with ToolRegistry() as registry:
        definition = _lib.ToolDef(
            struct_size=ctypes.sizeof(_lib.ToolDef),
            name=b"raw",
            description=b"Returns JSON content.",
            parameters=b'{"type":"object","properties":{"i":{"type":"integer"}},"required":["i"]}',
            callback=callback,
        )
        assert library.registry_add_tool(registry._ptr, ctypes.byref(definition)) == _lib.OK

        def render(values: list[object]) -> list[str]:
            texts[:] = [json.dumps(v).encode() for v in values]
            results = registry.execute_many([ToolCall("raw", {"i": i}) for i in range(len(values))])
            assert all(r.outcome == "ok" for r in results), [r.content for r in results]
            return [r.content for r in results]

        yield render


def test_render_result_is_the_cores_rendering_byte_for_byte(core_render):
    expected = core_render(VALUES)
    for value, core in zip(VALUES, expected):
        assert render_result(value) == core, value


def test_the_spaced_input_really_was_rewritten_by_the_core(core_render):
    # The check above would be empty if the core kept its input as is.
    assert json.dumps({"a": [1e-5, "é", 2**70]}) == '{"a": [1e-05, "\\u00e9", 1180591620717411303424]}'
    assert core_render([{"a": [1e-5, "é", 2**70]}]) == ['{"a":[0.00001,"é",1.1805916207174113e+21]}']


def test_a_python_tools_result_reads_as_the_core_renders_it():
    @dataclasses.dataclass
    class Reading:
        city: str
        temp: float

    class Unit(enum.Enum):
        C = "celsius"

    def weather(city: str) -> dict:
        """Weather."""
        return {"reading": Reading(city, 1e-5), "unit": Unit.C, "seen": ("a",)}

    expected = '{"reading":{"city":"Zürich","temp":0.00001},"unit":"celsius","seen":["a"]}'
    with ToolRegistry([weather]) as registry:
        call = ToolCall("weather", {"city": "Zürich"})
        assert registry.execute(call).content == expected  # the lone-call fast path
        assert [r.content for r in registry.execute_many([call, call])] == [expected, expected]  # the trampoline


def test_what_json_cannot_hold_is_its_repr():
    loop: list[object] = []
    loop.append(loop)
    assert render_result(loop) == repr(loop)
    assert render_result(float("nan")) == "NaN"

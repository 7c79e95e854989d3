#!/usr/bin/env python3
"""Writes the checked-in seed corpus of every fuzz target (fuzz/seeds/<target>/)
from the provider fixtures in tests/fixtures and hand-written cases.

Run from anywhere: `python3 fuzz/seeds.py`. The output is deterministic; commit it.
Each file is one input in the target's own layout (see the target's doc comment).

Kept out of the seeds on purpose, until the validation helper's fixes land
(issue 17, findings 1-4 and 8): deeply nested calculator expressions, chains
of anyOf/$ref definitions, and many unknown tool names. `make fuzz` (long)
may still reach them; `make fuzz-smoke` caps input sizes (fuzz/run.sh).
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SEEDS = os.path.join(HERE, "seeds")

DESCRIBE, OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC, GEMINI, MCP = range(6)
SEQUENTIAL, STRICT_NULLS, TIMEOUT, APPROVED_IDS = 0x01, 0x04, 0x20, 0x40


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def fixture(name):
    with open(os.path.join(ROOT, "tests", "fixtures", "providers", name), encoding="utf-8") as f:
        body = json.load(f)
    body.pop("_source", None)
    return body


def schema(name):
    with open(os.path.join(HERE, "schemas", name + ".json"), encoding="utf-8") as f:
        return json.load(f)


def write(target, name, data):
    directory = os.path.join(SEEDS, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


# --- responses in each format, calling the tools of capstan_fuzz::tool_registry

def chat(calls):
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for i, n, a in calls]},
        "finish_reason": "tool_calls"}]}


def responses(calls):
    return {"output": [{"type": "function_call", "id": "fc_" + i, "call_id": i, "name": n,
                        "arguments": json.dumps(a)} for i, n, a in calls]}


def anthropic(calls):
    return {"role": "assistant", "content": [{"type": "text", "text": "ok"}] + [
        {"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls], "stop_reason": "tool_use"}


def gemini(calls):
    return {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"id": i, "name": n, "args": a}} for i, n, a in calls]}, "index": 0}]}


def mcp(calls):
    return [{"jsonrpc": "2.0", "id": k, "method": "tools/call", "params": {"name": n, "arguments": a}}
            for k, (_, n, a) in enumerate(calls)]


def describe(calls):
    return [{"id": i, "name": n, "arguments": a} for i, n, a in calls]


BUILDERS = {DESCRIBE: describe, OPENAI_CHAT: chat, OPENAI_RESPONSES: responses, ANTHROPIC: anthropic,
            GEMINI: gemini, MCP: mcp}

CALL_SETS = {
    "ok": [("a", "echo", {"n": 2, "s": "é"})],
    "mixed": [("a", "echo", {}), ("b", "fail", {}), ("c", "text", {"s": "x"}), ("call_1", "guarded", {"n": 1})],
    "slow": [("h", "hang", {}), ("w", "wait", {}), ("d", "defer", {})],
    "approval": [("ab", "guarded", {}), ("abc", "guarded", {"n": 3})],
    "serial": [("s1", "serial", {"n": 1}), ("s2", "serial", {"n": 2}), ("s3", "serial", {})],
    "invalid": [("i", "echo", {"n": "three"}), ("j", "nope", {}), ("k", "echo", {"n": None, "s": None})],
    "coerce": [("x", "echo", {"n": "7"}), ("y", "echo", {"n": "7.5"})],
    # Content parts through the result callback (issue #30): a text and an
    # image part with structured content, and a part that fails its check.
    "parts": [("p", "parts", {"content": [{"type": "text", "text": "hi"},
                                          {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}],
                              "structuredContent": {"a": 1}}),
              ("q", "parts", {"content": [{"type": "image", "data": "%%", "mimeType": "image/png"}]})],
}


def parse_calls_seeds():
    t = "parse_calls"
    pairs = [
        (ANTHROPIC, "anthropic_parallel.json"), (ANTHROPIC, "anthropic_no_calls.json"),
        (GEMINI, "gemini_parallel.json"), (GEMINI, "gemini_with_ids.json"),
        (OPENAI_CHAT, "openai_chat_parallel.json"), (OPENAI_CHAT, "openai_chat_no_calls.json"),
        (OPENAI_RESPONSES, "openai_responses_parallel.json"),
    ]
    for fmt, name in pairs:
        write(t, "fixture_%s" % name, bytes([fmt]) + compact(fixture(name)))
    write(t, "fixture_mcp_batch", bytes([MCP]) + compact(fixture("mcp_tools_call_batch.json")["requests"]))
    for fmt, build in BUILDERS.items():
        for set_name in ("mixed", "invalid"):
            write(t, "built_%d_%s" % (fmt, set_name), bytes([fmt]) + compact(build(CALL_SETS[set_name])))
    hand = [
        (OPENAI_CHAT, {"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
                                                            "function": {"name": "f", "arguments": "{not json"}}]}),
        (OPENAI_CHAT, {"choices": [{"message": {"tool_calls": [{"id": "1", "function": {"arguments": "{}"}}]}}]}),
        (OPENAI_CHAT, {"choices": []}),
        (OPENAI_RESPONSES, [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "[1]"}]),
        (OPENAI_RESPONSES, {"output": [{"type": "reasoning"}, {"type": "custom_tool_call", "name": "x"}]}),
        (ANTHROPIC, [{"type": "tool_use", "id": "t", "name": "f", "input": {"deep": [[[[{"a": 1e300}]]]]}}]),
        (ANTHROPIC, {"content": [{"type": "tool_use", "id": "t"}]}),
        (GEMINI, {"parts": [{"functionCall": {"name": "f"}}, {"text": "hi"}]}),
        (GEMINI, {"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": []}}]}}]}),
        (MCP, {"name": "f", "arguments": {"q": "\u2603"}}),
        (MCP, {"jsonrpc": "2.0", "id": None, "method": "tools/list"}),
        (DESCRIBE, {"id": "1", "name": "f", "arguments": "{\"a\":1}"}),
        (DESCRIBE, [{"id": 1, "name": "f"}]),
    ]
    for k, (fmt, body) in enumerate(hand):
        write(t, "hand_%02d" % k, bytes([fmt]) + compact(body))
    for k, raw in enumerate([b"", b"null", b"[]", b"{}", b"\"x\"", b"{\"choices\":[{\"message\":", b"\xff\xfe"]):
        write(t, "raw_%02d" % k, bytes([k % 6]) + raw)
    write(t, "unknown_format", bytes([6]) + b"[]")


def format_results_seeds():
    t = "format_results"
    results = [
        {"id": "a", "name": "echo", "content": "{\"n\":1}", "is_error": False, "outcome": "ok", "duration_us": 12},
        {"id": "b", "name": "fail", "content": "it failed", "is_error": True, "outcome": "tool_error",
         "duration_us": 3},
        {"id": "gemini_call_0_1", "name": "t", "content": "ünïcode ✓", "is_error": True, "outcome": "timeout"},
        {"id": "d", "name": "x", "content": "", "is_error": True, "outcome": "invalid_arguments"},
        {"id": "e", "name": "nope", "content": "unknown tool", "is_error": True, "outcome": "unknown_tool"},
        {"id": "f", "name": "w", "content": "cancelled", "outcome": "cancelled"},
        {"id": "g", "name": "guarded", "content": "denied: not today", "is_error": True, "outcome": "denied"},
    ]
    for fmt in range(6):
        write(t, "all_%d" % fmt, bytes([fmt]) + compact(results))
        write(t, "one_%d" % fmt, bytes([fmt]) + compact(results[0]))
        write(t, "empty_%d" % fmt, bytes([fmt]) + b"[]")
    hand = [
        [{"id": "x", "name": "y", "content": "z", "is_error": True}],
        [{"id": "x", "name": "y", "content": "z", "outcome": "exploded"}],
        [{"id": "x", "name": "y"}],
        [{"id": 1, "name": "y", "content": {"a": 1}}],
        {"results": []},
        [{"id": "x", "name": "y", "content": "{\"json\":[1,2]}", "is_error": False, "outcome": "ok",
          "duration_us": 18446744073709551615}],
    ]
    for k, body in enumerate(hand):
        write(t, "hand_%02d" % k, bytes([k % 6]) + compact(body))
    write(t, "raw_not_json", bytes([ANTHROPIC]) + b"[{\"id\":")
    write(t, "unknown_format", bytes([7]) + b"[]")
    # Content parts (issue #30): every kind, structured content, and bad ones.
    png, pdf = "iVBORw0KGgo=", "JVBERi0xLjQK"
    with_parts = [
        {"id": "p", "name": "shot", "content": "", "outcome": "ok", "structured_content": {"w": 640},
         "parts": [
             {"type": "text", "text": "the screen"},
             {"type": "image", "data": png, "mimeType": "image/png"},
             {"type": "image", "data": png, "mimeType": "image/bmp"},
             {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
             {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"},
             {"type": "resource", "resource": {"uri": "mem://n", "mimeType": "text/plain", "text": "note"}},
             {"type": "resource", "resource": {"uri": "file:///r.pdf", "mimeType": "application/pdf", "blob": pdf}},
         ]},
        {"id": "q", "name": "t", "content": "plain", "outcome": "ok"},
    ]
    for fmt in range(6):
        write(t, "parts_%d" % fmt, bytes([fmt]) + compact(with_parts))
    bad_parts = [
        [{"id": "x", "name": "y", "parts": [{"type": "image", "data": "%%", "mimeType": "image/png"}]}],
        [{"id": "x", "name": "y", "parts": [{"type": "image", "data": png, "mimeType": ""}]}],
        [{"id": "x", "name": "y", "parts": [{"type": "video"}]}],
        [{"id": "x", "name": "y", "parts": {"type": "text", "text": "not an array"}}],
        [{"id": "x", "name": "y", "parts": [], "structured_content": [1]}],
    ]
    for k, body in enumerate(bad_parts):
        write(t, "bad_parts_%02d" % k, bytes([k % 6]) + compact(body))


def run_turn_seeds():
    t = "run_turn"
    options = [0, SEQUENTIAL, STRICT_NULLS, TIMEOUT, APPROVED_IDS | SEQUENTIAL]
    k = 0
    for fmt, build in BUILDERS.items():
        for set_name, calls in CALL_SETS.items():
            write(t, "%d_%s" % (fmt, set_name), bytes([fmt, options[k % len(options)]]) + compact(build(calls)))
            k += 1
    write(t, "no_calls", bytes([ANTHROPIC, 0]) + compact(fixture("anthropic_no_calls.json")))
    write(t, "bad_body", bytes([OPENAI_CHAT, 0]) + b"{\"choices\":[{}]}")
    write(t, "unknown_format", bytes([6, 0]) + b"[]")


def execute_seeds():
    t = "execute"
    options = [0, SEQUENTIAL, STRICT_NULLS | 0x08, TIMEOUT, APPROVED_IDS, 0x18]
    k = 0
    for set_name, calls in CALL_SETS.items():
        for mode in range(6):
            if (k + mode) % 2 == 0:
                write(t, "%s_mode%d" % (set_name, mode),
                      bytes([options[k % len(options)], mode]) + compact(describe(calls)))
        k += 1
    write(t, "single_object", bytes([0, 0]) + compact({"id": "1", "name": "echo", "arguments": "{\"n\":5}"}))
    write(t, "empty", bytes([0, 2]) + b"[]")
    write(t, "not_calls", bytes([0, 0]) + b"[{\"id\":\"1\"}]")
    write(t, "args_string_bad", bytes([0, 3]) + compact([{"id": "1", "name": "echo", "arguments": "{"}]))
    many = [("m%d" % i, ["echo", "fail", "defer", "wait"][i % 4], {"n": i}) for i in range(24)]
    write(t, "many_cancelled", bytes([0x08, 4]) + compact(describe(many)))
    write(t, "many_freed", bytes([0, 5]) + compact(describe(many)))


def strings_seeds():
    t = "strings"
    texts = {
        "name": b"get_weather",
        "utf8_bad": b"na\xc3me\xff",
        "nul_inside": b"ab\x00cd",
        "call": compact({"id": "1", "name": "echo", "arguments": {"n": 1}}),
        "results": compact([{"id": "1", "name": "echo", "content": "x", "outcome": "ok"}]),
        "schema": b"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}",
        "json": b"{\"ok\":[1,2,\"\xe2\x9c\x93\"]}",
        "approved": b"g1",
        "long": "é".encode() * 40,
        "empty": b"",
    }
    plan = [
        (0, "name"), (0, "utf8_bad"), (1, "name"), (2, "call"), (3, "results"), (4, "call"), (5, "call"),
        (6, "call"), (7, "call"), (8, "json"), (8, "utf8_bad"), (8, "long"), (9, "long"), (9, "utf8_bad"),
        (10, "approved"), (11, "name"), (11, "utf8_bad"), (12, "long"), (13, "schema"), (13, "nul_inside"),
    ]
    for k, (entry, text) in enumerate(plan):
        for mode in (0, 1, 3):
            if mode == 3 and k % 3:
                continue
            extra = (k * 5 + mode) % 256
            write(t, "%02d_%s_m%d" % (entry, text, mode), bytes([entry, mode, extra]) + texts[text])
    write(t, "null_zero", bytes([5, 2, 0]))
    write(t, "ptr_zero", bytes([0, 4, 3]) + b"abc")


SCHEMA_CASES = [
    ({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]}, {"n": "3"}),
    ({"properties": {"a": {"type": "string", "pattern": "^[a-z]+$", "default": "x"}}}, {"a": "Abc"}),
    ({"type": "object", "properties": {"o": {"type": "object", "properties": {"d": {"default": [1]}}}}}, {"o": {}}),
    ({"type": "object", "additionalProperties": {"type": "number"}, "propertyNames": {"maxLength": 3}},
     {"abcd": 1, "x": "y"}),
    ({"type": "object", "properties": {"l": {"type": "array", "prefixItems": [{"type": "string"}],
                                             "items": {"type": "boolean"}, "contains": {"const": True}}}},
     {"l": ["a", False, "b"]}),
    ({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}], "not": {"required": ["c"]}},
     {"a": 1, "b": 2}),
    ({"type": "object", "$defs": {"p": {"type": "string", "format": "email"}},
      "properties": {"e": {"$ref": "#/$defs/p"}}}, {"e": "nope"}),
    ({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
      "properties": {"m": {"type": "number", "maximum": 5, "exclusiveMaximum": True}}}, {"m": 5}),
    ({"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}, "unevaluatedProperties": False,
      "properties": {"a": {}, "b": {}}}, {"a": 1, "z": 0}),
    ({"type": "object", "if": {"required": ["x"]}, "then": {"properties": {"y": {"type": "null"}}}},
     {"x": 1, "y": None}),
    ({"type": "object", "properties": {"r": {"$ref": "https://example.com/s.json"}}}, {}),
    ({"type": "object", "properties": {"p": {"type": "string", "pattern": "(?=a)b"}}}, {}),
    ({"type": "string"}, "x"),
    (True, {}),
    ({"type": ["object", "null"]}, None),
    ({"type": "object", "properties": {"s": {"type": "string", "minLength": 2, "maxLength": 3}}}, "{not json"),
    ({"type": "object", "properties": {"b": {"type": "boolean"}, "i": {"type": "integer"}}},
     {"b": "true", "i": "2.0"}),
    ({"type": "object", "required": ["a", "a"], "minProperties": 1, "maxProperties": 1}, {}),
]


def schema_seeds():
    t = "schema"
    for k, (s, instance) in enumerate(SCHEMA_CASES):
        write(t, "case_%02d" % k, bytes([k % 8]) + compact(s) + b"\x00" + compact(instance))
    realistic = {
        "get_weather": {"location": "Paris", "include": ["wind", "wind"]},
        "edit_file": {"path": "src/a.rs", "edits": [{"old_string": "a", "new_string": "b"}]},
        "sql_query": {"database": "main", "query": "select 1", "page_token": "x", "options": {"x-a": 1}},
        "send_email": {"to": ["a@b.c"], "subject": "hi", "body": "x", "send_at": "2026-13-01"},
    }
    for k, (name, instance) in enumerate(sorted(realistic.items())):
        write(t, "realistic_" + name, bytes([k % 4]) + compact(schema(name)) + b"\x00" + compact(instance))
    write(t, "not_json_schema", b"\x00{\"type\":\"object\",\x00{}")
    write(t, "no_instance", b"\x01{\"type\":\"object\"}")


def expr(depth, k=0):
    """A calculator expression `depth` levels deep (kept small: see the docstring)."""
    if depth == 0:
        return k + 0.5
    return {"op": "+*"[depth % 2], "args": [expr(depth - 1, k + 1), k]}


def validate_seeds():
    t = "validate"
    names = ["get_weather", "edit_file", "sql_query", "calculate", "send_email"]
    cases = {
        "get_weather": [{"location": "São Paulo, BR", "unit": "fahrenheit", "days": 3},
                        {"coordinates": {"lat": 48.85, "lon": 2.35}, "include": ["uv", "wind"]},
                        {"location": "x", "coordinates": {"lat": 91, "lon": 0}},
                        {"location": "", "days": "3"}, {"unit": None, "location": "Oslo"}],
        "edit_file": [{"path": "src/main.rs", "edits": [{"old_string": "foo", "new_string": "bar",
                                                         "replace_all": True}]},
                      {"path": "notes.txt", "mode": "create", "content": "hello"},
                      {"path": "../etc/passwd", "mode": "create", "edits": []},
                      {"path": "a", "edits": [{"old_string": ""}], "dry_run": "yes"}],
        "sql_query": [{"database": "sales", "query": "select * from t where id = ?", "params": [1, "a", None, True]},
                      {"database": "Sales", "query": "", "limit": 0, "page_token": "p"},
                      {"database": "db", "query": "q", "options": {"x-trace": True, "y": 1}, "format": "xml"},
                      {"database": "db", "query": "q", "limit": "50", "page_token": None}],
        "calculate": [{"expression": expr(3), "precision": 2}, {"expression": 4},
                      {"expression": {"op": "-", "args": [1, 2]}},
                      {"expression": {"op": "+", "args": [1, {"op": "*", "args": [2]}]}},
                      {"expression": expr(5), "precision": "3"}],
        "send_email": [{"to": ["ana@example.com"], "subject": "Hi", "body": "Hello", "priority": 1},
                       {"to": ["not-an-email"], "subject": "x" * 10, "body": "", "send_at": "yesterday"},
                       {"to": [], "subject": "s", "body": "b", "attachments": [{"name": "a", "url": "::"}]},
                       {"to": ["b@c.d"], "subject": "s", "body": "b", "cc": None, "priority": "2"}],
    }
    for index, name in enumerate(names):
        for k, instance in enumerate(cases[name]):
            selector = index | (0x40 if k % 2 else 0) | (0x80 if k % 3 == 2 else 0)
            write(t, "%s_%d" % (name, k), bytes([selector]) + compact(instance))
    write(t, "not_an_object", bytes([0]) + b"[1,2]")
    write(t, "not_json", bytes([1]) + b"{\"path\":")


def export_seeds():
    t = "export"
    for k, name in enumerate(["get_weather", "edit_file", "sql_query", "calculate", "send_email"]):
        write(t, "realistic_" + name, bytes([k % 4]) + compact(schema(name)))
    for k, (s, _) in enumerate(SCHEMA_CASES):
        write(t, "case_%02d" % k, bytes([k % 4]) + compact(s))
    hand = [
        {"type": "object", "properties": {"a": {"type": "string", "default": "x"}, "b": {"type": "integer"}},
         "required": ["b"], "additionalProperties": True},
        {"type": "object", "properties": {"t": {"$ref": "#/$defs/t"}},
         "$defs": {"t": {"type": "object", "properties": {"n": {"type": "number", "minimum": 1}}}}},
        {"type": "object", "properties": {"u": {"type": ["string", "null"], "const": "x", "examples": ["x"],
                                                "contentEncoding": "base64"}}},
        {"type": "object", "patternProperties": {"^a": {"type": "string"}}},
    ]
    for k, s in enumerate(hand):
        write(t, "hand_%02d" % k, bytes([k]) + compact(s))


def mount_reader_seeds():
    """What a mounted server writes to its stdout: answers, pages of tools,
    tool results, requests and notifications, good and bad lines. Prefix:
    piece size, line bound (16 + 16 x byte), result bound (8 x byte)."""
    t = "mount_reader"
    rpc = lambda id_, result: compact({"jsonrpc": "2.0", "id": id_, "result": result}) + b"\n"
    page = rpc(1, {"tools": [{"name": "a", "description": "d" * 40, "inputSchema": {"type": "object"}},
                             {"name": "b" * 300, "inputSchema": {}}, {"name": "t", "title": "T",
                             "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}],
                   "nextCursor": "c1"})
    page2 = rpc(2, {"tools": [{"name": "c", "inputSchema": {"type": "object"}}], "nextCursor": "c1"})
    blocks = [{"type": "text", "text": "x" * 9}, {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
              {"type": "resource", "resource": {"uri": "file:///a", "text": "r" * 20}},
              {"type": "resource_link", "uri": "file:///b", "name": "b"}]
    result = rpc(3, {"content": blocks * 3, "structuredContent": {"k": "v"}, "isError": False})
    notes = (b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
             b'{"jsonrpc":"2.0","id":"p","method":"ping"}\n')
    bad = b'{"jsonrpc":"2.0","id":4,"result":{"t":"\xff"}}\n{"jsonrpc":"2.0","id":5,"result":[[[[1]]]]}\n{"id":6\n'
    write(t, "page", bytes([255, 255, 255]) + page + page2)
    write(t, "page_pieces", bytes([3, 40, 255]) + page)
    write(t, "result", bytes([255, 255, 4]) + result)
    write(t, "result_small_lines", bytes([7, 2, 1]) + result)
    write(t, "result_alone", bytes([255, 255, 2]) + compact({"content": blocks * 4}))
    write(t, "mixed", bytes([16, 255, 255]) + notes + bad + result)


def server_request_seeds():
    """HTTP requests to capstan's MCP server (capstan::mcp::fuzz::server_request):
    method byte (0 POST, 1 GET, 2 DELETE, 3 PUT), flags byte (1 in a fresh
    session, 2 no bearer token, 4 no default Content-Type/Accept), header
    lines, an empty line, the body."""
    t = "server_request"
    POST, GET, DELETE, PUT = 0, 1, 2, 3
    SESSION, NO_TOKEN, NO_DEFAULTS = 1, 2, 4
    rpc = lambda id_, method, params=None: compact(
        {"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params is not None else {})})
    init = rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "seed", "version": "1"}})
    seeds = {
        "initialize": (POST, 0, b"", init),
        "initialize_no_token": (POST, NO_TOKEN, b"", init),
        "initialize_wrong_token": (POST, 0, b"Authorization: Bearer nope", init),
        "initialize_lowercase_scheme": (POST, 0, b"Authorization: bearer fuzz-token", init),
        "tools_list": (POST, SESSION, b"", rpc(2, "tools/list")),
        "tools_call": (POST, SESSION, b"", rpc("c", "tools/call", {"name": "echo", "arguments": {"x": [1, {"y": None}]}})),
        "tools_call_int_name": (POST, SESSION, b"", rpc(3, "tools/call", {"name": 5})),
        "tools_call_array_args": (POST, SESSION, b"", rpc(4, "tools/call", {"name": "echo", "arguments": [1]})),
        "tools_call_unknown": (POST, SESSION, b"", rpc(5, "tools/call", {"name": "nope", "arguments": {}})),
        "unknown_method": (POST, SESSION, b"", rpc(6, "no/such")),
        "ping": (POST, SESSION, b"", rpc(7, "ping")),
        "notification": (POST, SESSION, b"", compact({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                    "params": {"requestId": 1}})),
        "parse_error": (POST, SESSION, b"", b'{"jsonrpc":"2.0","id":'),
        "not_json": (POST, 0, b"", b"\xff\xfe garbage"),
        "batch": (POST, SESSION, b"", b"[" + rpc(8, "ping") + b"," + rpc(9, "tools/list") + b"]"),
        "no_session": (POST, 0, b"", rpc(10, "tools/list")),
        "bad_session": (POST, 0, b"Mcp-Session-Id: nope", rpc(11, "tools/list")),
        "wrong_content_type": (POST, SESSION | NO_DEFAULTS, b"Content-Type: text/plain\nAccept: text/event-stream", rpc(12, "ping")),
        "no_accept": (POST, SESSION | NO_DEFAULTS, b"Content-Type: application/json", rpc(13, "ping")),
        "duplicate_host": (POST, 0, b"Host: 127.0.0.1\nHost: evil.com", init),
        "userinfo_host": (POST, 0, b"Host: evil.com@localhost", init),
        "evil_origin": (POST, 0, b"Origin: http://evil.com", init),
        "duplicate_origin": (POST, 0, b"Origin: http://localhost:1\nOrigin: http://evil.com", init),
        "evil_host": (POST, 0, b"Host: evil.com", init),
        "get_stream": (GET, SESSION, b"Accept: text/event-stream", b""),
        "get_no_session": (GET, 0, b"Accept: text/event-stream", b""),
        "delete": (DELETE, SESSION, b"", b""),
        "put": (PUT, SESSION, b"", rpc(14, "ping")),
        "version_header": (POST, SESSION, b"MCP-Protocol-Version: 1999-01-01", rpc(15, "ping")),
        "over_body_cap": (POST, SESSION, b"", rpc(16, "tools/call", {"name": "echo", "arguments": {"x": "y" * 70000}})),
    }
    for name, (method, flags, headers, body) in seeds.items():
        write(t, name, bytes([method, flags]) + headers + b"\n\n" + body)


def main():
    if os.path.isdir(SEEDS):
        shutil.rmtree(SEEDS)
    parse_calls_seeds()
    format_results_seeds()
    run_turn_seeds()
    execute_seeds()
    strings_seeds()
    schema_seeds()
    validate_seeds()
    export_seeds()
    mount_reader_seeds()
    server_request_seeds()
    for target in sorted(os.listdir(SEEDS)):
        files = os.listdir(os.path.join(SEEDS, target))
        print("%-15s %3d seeds, largest %d bytes" % (
            target, len(files), max(os.path.getsize(os.path.join(SEEDS, target, f)) for f in files)))


if __name__ == "__main__":
    main()

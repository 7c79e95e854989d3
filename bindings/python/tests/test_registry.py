import json

import pytest

from capstan import (
    FunctionTool,
    RegistryClosedError,
    ToolCall,
    ToolNotFoundError,
    ToolRegistry,
    ToolResult,
    ValidationError,
    tool,
)


@tool
def double(x: int) -> int:
    """Double a number."""
    return x * 2


@tool
def echo(text: str) -> str:
    """Echo text."""
    return text


@tool(requires_approval=True)
def delete_everything(confirm: bool) -> str:
    """Delete everything."""
    return "deleted"


def test_add_accepts_tools_and_plain_callables(registry):
    def plain(a: int) -> int:
        """Plain."""
        return a

    assert registry.add(double) is double
    wrapped = registry.add(plain)
    assert isinstance(wrapped, FunctionTool)
    assert registry.names() == ["double", "plain"]
    assert registry.get("plain") is wrapped
    assert "plain" in registry and len(registry) == 2


def test_add_rejects_what_is_not_a_tool(registry):
    with pytest.raises(TypeError):
        registry.add(42)


def test_extend_returns_self(registry):
    assert registry.extend([double, echo]) is registry
    assert registry.names() == ["double", "echo"]


def test_names_are_sorted():
    with ToolRegistry([echo, double]) as registry:
        assert registry.names() == ["double", "echo"]
        assert list(registry.tools) == ["echo", "double"] or set(registry.tools) == {"echo", "double"}


def test_remove_and_remove_absent_is_a_no_op(registry):
    registry.add(double)
    registry.remove("double")
    registry.remove("double")
    registry.remove("never")
    assert registry.names() == []
    result = registry.execute(ToolCall("double", {"x": 1}))
    assert result.outcome == "unknown_tool"


def test_get_unknown_lists_the_available_tools():
    with ToolRegistry([double, echo]) as registry:
        with pytest.raises(ToolNotFoundError) as info:
            registry.get("nope")
    assert "double" in str(info.value) and "echo" in str(info.value)
    assert info.value.available == ["double", "echo"]
    assert isinstance(info.value, LookupError)


def test_adding_a_tool_of_the_same_name_is_refused_unless_replace(registry):
    registry.add(double)
    triple = FunctionTool(lambda x: x * 3, name="double", parameters={"type": "object"})
    with pytest.raises(ValidationError) as info:
        registry.add(triple)
    assert "'double'" in str(info.value) and "already registered" in str(info.value)
    assert info.value.status == "CAPSTAN_ERR_INVALID_ARGUMENT"
    assert registry.execute(ToolCall("double", {"x": 2})).data == 4  # the old tool stays
    registry.add(triple, replace=True)
    assert registry.execute(ToolCall("double", {"x": 2})).data == 6


def test_unknown_tool_is_an_error_result_not_an_exception():
    with ToolRegistry([double, echo]) as registry:
        result = registry.execute(ToolCall("doubel", {"x": 1}, id="c1"))
    assert result.is_error and result.outcome == "unknown_tool"
    assert result.call_id == "c1" and result.name == "doubel"
    assert "double" in result.content and "echo" in result.content


def test_invalid_arguments_are_capstans_model_readable_text():
    with ToolRegistry([double]) as registry:
        wrong_type = registry.execute(ToolCall("double", {"x": "four"}))
        missing = registry.execute(ToolCall("double", {}))
        extra = registry.execute(ToolCall("double", {"x": 1, "y": 2}))
    for result in (wrong_type, missing, extra):
        assert result.is_error and result.outcome == "invalid_arguments"
        assert result.data is None
    assert "/x" in wrong_type.content and "integer" in wrong_type.content
    assert "x" in missing.content
    assert "y" in extra.content


def test_full_json_schema_validation_from_the_core():
    @tool(parameters={
        "type": "object",
        "properties": {
            "email": {"type": "string", "pattern": "^[^@]+@[^@]+$"},
            "n": {"type": "integer", "minimum": 1, "maximum": 3},
        },
        "required": ["email", "n"],
        "additionalProperties": False,
    })
    def subscribe(email: str, n: int) -> str:
        return email

    with ToolRegistry([subscribe]) as registry:
        ok = registry.execute(ToolCall("subscribe", {"email": "a@b", "n": 2}))
        bad = registry.execute(ToolCall("subscribe", {"email": "nope", "n": 7}))
    assert ok.content == "a@b"
    assert bad.outcome == "invalid_arguments"
    assert "/email" in bad.content and "/n" in bad.content


def test_openai_style_string_arguments():
    with ToolRegistry([double]) as registry:
        ok = registry.execute(ToolCall("double", '{"x": 21}'))
        bad = registry.execute(ToolCall("double", '{"x": '))
    assert ok.data == 42
    assert bad.outcome == "invalid_arguments"


def test_arguments_that_are_not_json_are_an_error_result():
    with ToolRegistry([double]) as registry:
        result = registry.execute(ToolCall("double", {"x": {1, 2}}))
    assert result.outcome == "invalid_arguments" and "JSON" in result.content


def test_tool_call_and_result_shapes():
    call = ToolCall("double", {"x": 1}, "id-1")
    assert (call.name, call.arguments, call.id) == ("double", {"x": 1}, "id-1")
    assert ToolCall("a").id != ToolCall("a").id
    result = ToolResult("id-1", "double", "2", False, 2)
    assert (result.call_id, result.name, result.content, result.is_error, result.data) == (
        "id-1", "double", "2", False, 2)


def test_results_keep_the_callers_ids():
    with ToolRegistry([double]) as registry:
        results = registry.execute_many([ToolCall("double", {"x": i}, id="same") for i in range(3)])
    assert [r.call_id for r in results] == ["same"] * 3
    assert [r.data for r in results] == [0, 2, 4]


def test_render_and_data():
    @tool
    def info(city: str) -> dict:
        return {"city": city, "temp": 18}

    @tool
    def nothing() -> None:
        return None

    with ToolRegistry([info, nothing]) as registry:
        r = registry.execute(ToolCall("info", {"city": "Zürich"}))
        n = registry.execute(ToolCall("nothing"))
    assert r.content == '{"city":"Zürich","temp":18}'
    assert r.data == {"city": "Zürich", "temp": 18}
    assert n.content == "null" and n.data is None and not n.is_error


SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "additionalProperties": False}


def test_schemas_in_every_style():
    with ToolRegistry([echo, double]) as registry:
        openai = registry.schemas()
        assert openai == registry.schemas("openai")
        assert [s["function"]["name"] for s in openai] == ["double", "echo"]
        assert openai[0] == {
            "type": "function",
            "function": {"name": "double", "description": "Double a number.", "parameters": SCHEMA},
        }
        anthropic = registry.schemas("anthropic")
        assert anthropic[0] == {"name": "double", "description": "Double a number.", "input_schema": SCHEMA}
        gemini = registry.schemas("gemini")
        assert gemini[0]["name"] == "double"
        assert gemini[0]["description"] == "Double a number."
        assert gemini[0].get("parametersJsonSchema", gemini[0].get("parameters"))["properties"]["x"]
        responses = registry.schemas("openai_responses")
        assert responses[0]["type"] == "function" and responses[0]["name"] == "double"
        mcp = registry.schemas("mcp")
        assert mcp[0]["name"] == "double" and mcp[0]["inputSchema"] == SCHEMA
        with pytest.raises(ValueError, match="unknown format"):
            registry.schemas("cohere")


def test_schemas_of_an_empty_registry_are_empty(registry):
    for style in ("openai", "anthropic", "gemini"):
        assert registry.schemas(style) == []


def test_describe_is_json_safe():
    with ToolRegistry([double, delete_everything]) as registry:
        described = registry.describe()
    json.dumps(described)
    by_name = {d["name"]: d for d in described}
    assert by_name["double"]["parameters"] == SCHEMA
    assert by_name["delete_everything"]["requires_approval"] is True
    assert by_name["double"]["requires_approval"] is False


def test_needs_approval_lists_the_gated_calls():
    calls = [
        ToolCall("double", {"x": 1}),
        ToolCall("delete_everything", {"confirm": True}),
        ToolCall("unknown"),
    ]
    with ToolRegistry([double, delete_everything]) as registry:
        assert registry.needs_approval(calls) == [calls[1]]


def test_unapproved_calls_are_denied_approved_ones_run():
    call = ToolCall("delete_everything", {"confirm": True}, id="del")
    other = ToolCall("double", {"x": 1})
    with ToolRegistry([double, delete_everything]) as registry:
        denied = registry.execute(call)
        assert denied.is_error and denied.outcome == "denied"
        assert "approval" in denied.content
        assert registry.execute(call, approved=True).content == "deleted"
        mixed = registry.execute_many([call, other])
        assert [r.outcome for r in mixed] == ["denied", "ok"]
        by_id = registry.execute_many([call, other], approved={"del"})
        assert [r.outcome for r in by_id] == ["ok", "ok"]


def test_invalid_schema_is_a_validation_error(registry):
    with pytest.raises(ValidationError, match="bad"):
        registry.add(FunctionTool(lambda: 1, name="bad", parameters={"type": "object", "properties": {"a": {"type": 12}}}))
    assert registry.names() == []


def test_close_is_idempotent_and_final():
    registry = ToolRegistry([double])
    registry.close()
    registry.close()
    assert registry.closed
    with pytest.raises(RegistryClosedError):
        registry.execute(ToolCall("double", {"x": 1}))
    with pytest.raises(RegistryClosedError):
        registry.add(echo)


def test_context_manager_closes():
    with ToolRegistry([double]) as registry:
        pass
    assert registry.closed


def test_coerce_option_accepts_strings_for_numbers():
    with ToolRegistry([double], coerce=True) as registry:
        result = registry.execute(ToolCall("double", {"x": "4"}))
    # Coercion is the core's (CAPSTAN_REGISTRY_COERCE); an interim core may not do it yet.
    assert result.data == 8 or result.outcome == "invalid_arguments"


def core_export(registry, fmt):
    import ctypes

    from capstan import _lib

    library = _lib.lib()
    out, size = ctypes.c_void_p(), ctypes.c_size_t()
    assert library.registry_tools_json(registry._ptr, fmt, None, ctypes.byref(out), ctypes.byref(size), None, None) == 0
    return json.loads(library.take_text(out, size))


@pytest.mark.parametrize(
    "style, fmt",
    [("openai", 1), ("openai_chat", 1), ("openai_responses", 2), ("anthropic", 3), ("mcp", 5), ("describe", 0)],
)
def test_schemas_are_the_cores_export(style, fmt):
    with ToolRegistry([echo, double]) as registry:
        assert registry.schemas(style) == core_export(registry, fmt)


def test_gemini_schemas_are_one_declaration_per_tool():
    # capstan exports Gemini's `tools` value: one Tool holding every function.
    # schemas() is one definition per tool (the seeds' contract), so "gemini"
    # gives the function declarations.
    with ToolRegistry([echo, double]) as registry:
        (gemini_tool,) = core_export(registry, 4)
        declarations = registry.schemas("gemini")
    assert declarations == gemini_tool["functionDeclarations"]
    assert [d["name"] for d in declarations] == ["double", "echo"]
    assert declarations[0] == {
        "name": "double",
        "description": "Double a number.",
        "parametersJsonSchema": SCHEMA,
    }
    assert double.schema("gemini") == declarations[0]


def test_schema_shapes_of_every_provider():
    with ToolRegistry([double]) as registry:
        (responses,) = registry.schemas("openai_responses")
        (mcp,) = registry.schemas("mcp")
    assert responses["type"] == "function" and responses["name"] == "double"
    assert responses["parameters"] == SCHEMA
    assert mcp == {"name": "double", "description": "Double a number.", "inputSchema": SCHEMA}


def test_schemas_of_a_closed_registry_raise():
    registry = ToolRegistry([double])
    registry.close()
    with pytest.raises(RegistryClosedError):
        registry.schemas("openai")


def test_needs_approval_is_the_cores_and_honours_every_call():
    calls = [ToolCall("delete_everything", {"confirm": True}, id=f"d{i}") for i in range(3)]
    with ToolRegistry([delete_everything]) as registry:
        assert registry.needs_approval(calls) == calls
        results = registry.execute_many(calls, approved={"d1"})
    assert [r.outcome for r in results] == ["denied", "ok", "denied"]

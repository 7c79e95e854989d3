"""This binding against tests/fixtures/binding_behaviour.json, the table every
binding's suite checks (issue #49.6), and duplicate registration (#49.5)."""

import json
from pathlib import Path

import pytest

from capstan import CapstanError, FunctionTool, ToolCall, ToolRegistry, ValidationError, parse_calls

TABLE = json.loads((Path(__file__).resolve().parents[3] / "tests/fixtures/binding_behaviour.json").read_text())


def errors(mistake):
    return next(row for row in TABLE["errors"] if row["mistake"] == mistake)


def old():
    return "old"


@pytest.fixture
def registry():
    with ToolRegistry([FunctionTool(old, name="f", parameters={"type": "object"})]) as reg:
        yield reg


@pytest.mark.parametrize("row", TABLE["formats"], ids=lambda row: row["name"] or "empty")
def test_format_names(registry, row):
    if row["accepted"]:
        assert isinstance(registry.schemas(row["name"]), list)
    else:
        with pytest.raises(ValidationError) as info:
            registry.schemas(row["name"])
        wanted = errors("unknown_format")
        assert wanted["fragment"] in str(info.value) and info.value.status == wanted["status"]


@pytest.mark.parametrize("row", TABLE["ids"], ids=lambda row: row["id"])
def test_a_call_without_an_id(row):
    # Calls read from JSON (the core's rule); a ToolCall made in Python without an
    # id instead gets a process-wide "call_<n>" (unique across batches).
    calls = parse_calls("describe", [{"name": "f"}] * (row["index"] + 1))
    assert calls[row["index"]].id == row["id"]


def test_a_second_registration_is_refused_then_replace_runs_the_new_handler(registry):
    row = errors("duplicate_registration")
    new = FunctionTool(lambda: "new", name="f", parameters={"type": "object"})
    with pytest.raises(ValidationError) as info:
        registry.add(new)
    assert row["fragment"] in str(info.value) and "'f'" in str(info.value)
    assert info.value.status == row["status"]
    assert registry.execute(ToolCall("f", {})).content == "old"
    registry.add(new, replace=True)
    assert registry.execute(ToolCall("f", {})).content == "new"


@pytest.mark.parametrize("mistake", ["unknown_tool", "arguments_not_json", "arguments_not_object"])
def test_call_mistakes_end_with_the_same_outcome(registry, mistake):
    row = errors(mistake)
    call = ToolCall("nope", {}) if mistake == "unknown_tool" else ToolCall("f", row["arguments"])
    result = registry.execute(call)
    assert result.outcome == row["outcome"] and row["fragment"] in result.content
    if row.get("names_tool"):
        assert "nope" in result.content


def test_a_provider_shaped_call_points_at_run_turn():
    row = errors("provider_shaped_call")
    with pytest.raises(CapstanError) as info:
        parse_calls("describe", [row["call"]])
    assert info.value.status == row["status"] and row["fragment"] in str(info.value)

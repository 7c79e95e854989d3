"""Conversation integrity from Python: check_history finds and repairs a
broken history (issue #31)."""

import pytest

import capstan

BROKEN = [
    {"role": "user", "content": "hi"},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}},
            {"type": "tool_use", "id": "toolu_3", "name": "add", "input": {}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1"},
            {"type": "tool_result", "tool_use_id": "toolu_9", "content": "ghost"},
        ],
    },
]


def test_a_broken_history_is_reported_without_repair():
    found = capstan.check_history("anthropic", BROKEN)
    assert not found.ok
    assert found.repaired is None
    kinds = sorted(f["kind"] for f in found.findings)
    assert kinds == ["duplicate_call_id", "missing_result", "missing_result", "orphan_result"]
    assert all("repair" not in f for f in found.findings)


def test_the_repair_checks_clean_and_lists_each_change():
    found = capstan.check_history("anthropic", BROKEN, repair=True)
    assert all(f["repair"] for f in found.findings)
    results = found.repaired[2]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_1", "toolu_1_2", "toolu_3"]
    assert results[1]["is_error"] is True and "never finished" in results[1]["content"]
    assert found.repaired[1]["content"][1]["id"] == "toolu_1_2"
    assert capstan.check_history("anthropic", found.repaired).ok


def test_gemini_signatures_only_with_the_option():
    history = {
        "contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "add", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "add", "response": {"output": 1}}}]},
        ]
    }
    assert capstan.check_history("gemini", history).ok
    found = capstan.check_history("gemini", history, repair=True, gemini_signatures=True)
    assert [f["kind"] for f in found.findings] == ["missing_signature"]
    part = found.repaired["contents"][0]["parts"][0]
    assert part["thoughtSignature"] == "skip_thought_signature_validator"


def test_bad_styles_and_shapes_raise():
    with pytest.raises(ValueError):
        capstan.check_history("nope", [])
    with pytest.raises(capstan.CapstanError, match="no conversation history"):
        capstan.check_history("mcp", [])
    with pytest.raises(capstan.CapstanError, match=r"history\[0\]"):
        capstan.check_history("openai", [1])

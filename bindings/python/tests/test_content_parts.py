"""Images and files from Python tools (capstan.Image / capstan.File / PIL),
through run_turn in every format, checked against each provider's own SDK
types (openai, anthropic, google-genai, mcp: pinned in
tests/python-requirements.txt)."""

from __future__ import annotations

import base64
import sys
import types
import typing

import pytest

import capstan
from capstan import File, Image, ToolRegistry

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"


def screenshot() -> list:
    """Take a screenshot."""
    return ["the screen, 640x480", Image(PNG, "image/png")]


def report() -> File:
    """The report."""
    return File(PDF, "application/pdf", "report.pdf")


def broken() -> Image:
    """An image with no real MIME type."""
    return Image(PNG, "png")


CALLS = {
    "openai": {"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "report", "arguments": "{}"}}]}}]},
    "openai_responses": {"output": [
        {"type": "function_call", "call_id": "c1", "name": "screenshot", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "report", "arguments": "{}"}]},
    "anthropic": {"content": [
        {"type": "tool_use", "id": "c1", "name": "screenshot", "input": {}},
        {"type": "tool_use", "id": "c2", "name": "report", "input": {}}]},
    "gemini": {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"id": "c1", "name": "screenshot", "args": {}}},
        {"functionCall": {"id": "c2", "name": "report", "args": {}}}]}}]},
    "mcp": [{"id": "c1", "name": "screenshot", "arguments": {}}, {"id": "c2", "name": "report", "arguments": {}}],
}


@pytest.fixture
def reg():
    with ToolRegistry([screenshot, report, broken]) as r:
        yield r


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# --- a strict check against TypedDict request types ------------------------------


def strict(value, tp, path="$"):
    """Raises AssertionError unless ``value`` is of the TypedDict-based type
    ``tp`` with no key the type does not declare (pydantic ignores extra keys
    of a TypedDict; a misspelled field would pass it)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Required, typing.NotRequired, typing.Annotated):
        return strict(value, args[0], path)
    if origin is typing.Union or isinstance(tp, types.UnionType):
        errors = []
        for member in args:
            try:
                return strict(value, member, path)
            except AssertionError as e:
                errors.append(str(e))
        raise AssertionError(f"{path}: fits no member of {tp}: {errors}")
    if origin is typing.Literal:
        assert value in args, f"{path}: {value!r} not in {args}"
        return
    if tp is type(None):
        assert value is None, f"{path}: not None"
        return
    if isinstance(tp, type) and typing.is_typeddict(tp):
        assert isinstance(value, dict), f"{path}: not an object"
        hints = typing.get_type_hints(tp, include_extras=True)
        extra = set(value) - set(hints)
        assert not extra, f"{path}: keys {extra} not in {tp.__name__}"
        missing = set(tp.__required_keys__) - set(value)
        assert not missing, f"{path}: {tp.__name__} lacks {missing}"
        for key, item in value.items():
            strict(item, hints[key], f"{path}.{key}")
        return
    if origin in (list, typing.List) or (origin is not None and getattr(origin, "__name__", "") in ("Iterable", "Sequence")):
        assert isinstance(value, list), f"{path}: not a list"
        for i, item in enumerate(value):
            strict(item, args[0], f"{path}[{i}]")
        return
    if tp in (str, int, float, bool):
        assert isinstance(value, tp), f"{path}: not a {tp.__name__}"
        return
    # object, Dict[str, object], Any...: the SDK takes any JSON there.


def test_openai_responses_output_parts_fit_the_sdk_types(reg):
    from openai.types.responses.response_input_param import FunctionCallOutput

    items = reg.run_turn("openai_responses", CALLS["openai_responses"])
    for item in items:
        strict(item, FunctionCallOutput)
    assert items[0]["output"] == [
        {"type": "input_text", "text": "the screen, 640x480"},
        {"type": "input_image", "image_url": "data:image/png;base64," + b64(PNG), "detail": "auto"},
    ]
    assert items[1]["output"] == [
        {"type": "input_file", "filename": "report.pdf", "file_data": "data:application/pdf;base64," + b64(PDF)}
    ]


def test_openai_chat_tool_messages_then_one_user_message_fit_the_sdk_types(reg):
    from openai.types.chat import ChatCompletionToolMessageParam, ChatCompletionUserMessageParam

    messages = reg.run_turn("openai", CALLS["openai"])
    assert [m["role"] for m in messages] == ["tool", "tool", "user"]
    for m in messages[:2]:
        strict(m, ChatCompletionToolMessageParam)
    strict(messages[2], ChatCompletionUserMessageParam)
    kinds = [p["type"] for p in messages[2]["content"]]
    assert kinds == ["text", "image_url", "text", "file"]
    assert messages[2]["content"][0]["text"] == "Content returned by tool call c1 (screenshot):"


def test_anthropic_tool_results_fit_the_sdk_types(reg):
    from anthropic.types import MessageParam, ToolResultBlockParam

    message = reg.run_turn("anthropic", CALLS["anthropic"])
    strict(message, MessageParam)
    for block in message["content"]:
        strict(block, ToolResultBlockParam)
    shot, doc = (b["content"] for b in message["content"])
    assert shot[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}}
    assert doc == [{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)}}]


def test_gemini_function_responses_fit_the_sdk_types(reg):
    from google.genai import types as gt

    content = reg.run_turn("gemini", CALLS["gemini"])
    parsed = gt.Content.model_validate(content)  # its models forbid unknown keys
    shot = parsed.parts[0].function_response
    assert shot.parts[0].inline_data.mime_type == "image/png"
    assert shot.parts[0].inline_data.data == PNG
    assert shot.response == {"output": "the screen, 640x480\n[image/png attached as part 0]"}


def test_mcp_call_tool_results_fit_the_sdk_types(reg):
    import mcp.types as mt

    results = reg.run_turn("mcp", CALLS["mcp"])
    for item in results:
        parsed = mt.CallToolResult.model_validate(item)
        assert not parsed.model_extra or set(parsed.model_extra) <= {"resultType"}
    assert results[0]["content"][1] == {"type": "image", "data": b64(PNG), "mimeType": "image/png"}
    assert results[1]["content"][0]["resource"]["blob"] == b64(PDF)


def test_a_bad_image_is_a_tool_error_for_its_call_only(reg):
    body = {"content": [
        {"type": "tool_use", "id": "a", "name": "broken", "input": {}},
        {"type": "tool_use", "id": "b", "name": "screenshot", "input": {}}]}
    bad, good = reg.run_turn("anthropic", body)["content"]
    assert bad["is_error"] is True
    assert "\"mimeType\" \"png\" is not a known MIME type" in bad["content"]
    assert good["content"][1]["type"] == "image"


def test_execute_gives_the_parts_text_as_content(reg):
    result = reg.execute(capstan.ToolCall("screenshot", {}))
    assert result.content == f"the screen, 640x480\n[image: image/png, {len(PNG)} bytes]"
    assert result.data[1] == Image(PNG, "image/png")


def test_max_result_bytes_bounds_a_result():
    with ToolRegistry([screenshot], max_result_bytes=8) as small:
        result = small.execute(capstan.ToolCall("screenshot", {}))
    assert result.is_error and "past the size limit" in result.content


def test_a_pil_image_is_sent_as_png(monkeypatch):
    # A stand-in for PIL.Image.Image (PIL is not a dependency): what capstan
    # relies on is the module name and save(buf, format=...).
    module = types.ModuleType("PIL.Image")

    class FakePil:
        mode = "RGB"

        def save(self, buf, format):
            assert format == "PNG"
            buf.write(PNG)

    FakePil.__module__ = "PIL.Image"
    module.Image = FakePil
    monkeypatch.setitem(sys.modules, "PIL.Image", module)

    def pil_tool() -> object:
        """A PIL image."""
        return FakePil()

    with ToolRegistry([pil_tool]) as r:
        out = r.run_turn("mcp", [{"id": "p", "name": "pil_tool", "arguments": {}}])
    assert out[0]["content"] == [{"type": "image", "data": b64(PNG), "mimeType": "image/png"}]


def test_audio_files_are_audio_parts():
    assert File(b"RIFF", "audio/wav").part() == {"type": "audio", "data": b64(b"RIFF"), "mimeType": "audio/wav"}
    with pytest.raises(TypeError):
        Image("not bytes").part()  # type: ignore[arg-type]

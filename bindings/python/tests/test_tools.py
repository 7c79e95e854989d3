import asyncio

import pytest

import capstan
from capstan import FunctionTool, Tool, ToolCall, ToolRegistry, ValidationError, tool


def test_bare_decorator_returns_a_function_tool():
    @tool
    def search(query: str, limit: int = 5) -> list[str]:
        """Search the docs.

        Args:
            query: What to search for.
            limit: How many results.
        """
        return [query] * limit

    assert isinstance(search, FunctionTool)
    assert search.name == "search"
    assert search.description == "Search the docs."
    assert search.parameters["properties"]["query"]["description"] == "What to search for."
    assert search.parameters["required"] == ["query"]
    assert search.is_async is False
    assert search.fn.__name__ == "search"
    assert search("x", limit=2) == ["x", "x"]  # still callable directly
    assert search.__name__ == "search"
    assert "Search the docs." in search.__doc__


def test_configured_decorator():
    @tool(name="charge_card", description="Charge a card.", timeout=30, requires_approval=True,
          parallel_safe=False, max_output_chars=100)
    async def charge(amount_cents: int, customer_id: str) -> dict:
        return {"ok": True}

    assert charge.name == "charge_card"
    assert charge.description == "Charge a card."
    assert charge.timeout == 30
    assert charge.requires_approval is True
    assert charge.parallel_safe is False
    assert charge.max_output_chars == 100
    assert charge.is_async is True


def test_parameters_override():
    schema = {"type": "object", "properties": {"q": {"type": "string", "minLength": 3}}}

    @tool(parameters=schema)
    def find(**kwargs):
        return kwargs

    assert find.parameters == schema
    assert find.run(q="abcd").data == {"q": "abcd"}
    assert find.run(q="ab").outcome == "invalid_arguments"


def test_description_falls_back_to_call_name():
    @tool
    def quiet(x: int) -> int:
        return x

    assert quiet.description == "Call quiet."


@pytest.mark.parametrize("name", ["has space", "a/b", "x" * 65, "dots.not.ok", "é"])
def test_provider_illegal_names_raise_validation_error(name):
    def f() -> None:
        pass

    with pytest.raises(ValidationError, match="tool name"):
        tool(name=name)(f)


def test_lambda_name_is_rejected():
    with pytest.raises(ValidationError):
        FunctionTool(lambda x: x)


def test_var_args_are_rejected_at_registration():
    with pytest.raises(TypeError, match=r"\*args"):
        @tool
        def f(*args: int) -> None:
            pass


def test_var_kwargs_are_rejected_at_registration():
    with pytest.raises(TypeError, match=r"\*\*kwargs"):
        @tool
        def f(a: int, **kwargs: int) -> None:
            pass


def test_positional_only_parameters_are_rejected():
    with pytest.raises(TypeError, match="positional-only"):
        @tool
        def f(a: int, /, b: int) -> None:
            pass


def test_not_callable_is_a_type_error():
    with pytest.raises(TypeError):
        FunctionTool(42)


def test_run_returns_a_result_with_data():
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    result = add.run(a=2, b=3)
    assert result.data == 5
    assert result.content == "5"
    assert result.is_error is False
    bad = add.run(a="x", b=3)
    assert bad.is_error and bad.outcome == "invalid_arguments"
    assert "/a" in bad.content


def test_arun_runs_async_tools_on_the_running_loop():
    @tool
    async def where() -> int:
        return id(asyncio.get_running_loop())

    async def main():
        result = await where.arun()
        return result.data == id(asyncio.get_running_loop())

    assert asyncio.run(main())


def test_register_adds_to_the_global_registry():
    @tool(name="globally_known", register=True)
    def g() -> str:
        return "hi"

    registry = capstan.default_registry()
    assert registry.get("globally_known") is g
    assert registry.execute(ToolCall("globally_known")).content == "hi"
    registry.remove("globally_known")


def test_stateful_tool_subclass():
    class Counter(Tool):
        description = "Count calls."

        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def call(self, step: int = 1) -> int:
            """Add step to the counter.

            Args:
                step: How much to add.
            """
            self.count += step
            return self.count

    counter = Counter()
    assert counter.name == "counter"
    assert counter.description == "Count calls."
    assert counter.parameters["properties"]["step"] == {
        "type": "integer",
        "description": "How much to add.",
        "default": 1,
    }
    with ToolRegistry([counter]) as registry:
        assert registry.execute(ToolCall("counter", {"step": 2})).data == 2
        assert registry.execute(ToolCall("counter")).data == 3
    assert counter.run(step=10).data == 13


def test_dataclass_and_enum_arguments_arrive_as_their_types():
    import dataclasses
    import enum

    class Unit(enum.Enum):
        C = "c"
        F = "f"

    @dataclasses.dataclass
    class Point:
        x: int
        y: int

    @dataclasses.dataclass
    class Segment:
        a: Point
        b: Point

    seen = {}

    @tool
    def measure(seg: Segment, unit: Unit, extra: list[Point] | None = None) -> int:
        seen.update(seg=seg, unit=unit, extra=extra)
        return abs(seg.b.x - seg.a.x)

    result = measure.run(seg={"a": {"x": 1, "y": 0}, "b": {"x": 4, "y": 0}}, unit="c", extra=[{"x": 0, "y": 0}])
    assert result.data == 3, result
    assert seen["seg"] == Segment(Point(1, 0), Point(4, 0))
    assert seen["unit"] is Unit.C
    assert seen["extra"] == [Point(0, 0)]


def test_optional_parameter_without_default_may_be_omitted():
    @tool
    def greet(name: str | None) -> str:
        return f"hi {name}"

    assert "required" not in greet.parameters
    assert greet.run().content == "hi None"


def test_schema_and_describe_of_one_tool():
    @tool(timeout=1.5, max_output_chars=10)
    def t1(x: int) -> int:
        """T1."""
        return x

    assert t1.schema("anthropic")["input_schema"] == t1.parameters
    described = t1.describe()
    assert described["name"] == "t1"
    assert described["timeout"] == 1.5
    assert described["max_output_chars"] == 10


def test_bad_options_are_validation_errors():
    def f() -> None:
        pass

    with pytest.raises(ValidationError):
        tool(timeout=-1)(f)
    with pytest.raises(ValidationError):
        tool(max_output_chars=-5)(f)


def test_positional_only_is_rejected_even_with_an_explicit_schema():
    with pytest.raises(TypeError, match="positional-only"):
        tool(name="pos", parameters={"type": "object"})(lambda a, /: a)


def test_names_are_checked_by_the_core(monkeypatch):
    from capstan import _lib

    library = _lib.lib()
    asked = []
    check = library.name_check

    def spy(name, size):
        asked.append(name)
        return check(name, size)

    monkeypatch.setattr(library, "name_check", spy)

    def f() -> None:
        pass

    assert tool(name="ok_name-1")(f).name == "ok_name-1"
    with pytest.raises(ValidationError) as info:
        tool(name="not ok")(f)
    assert asked == [b"ok_name-1", b"not ok"]
    assert info.value.status == "CAPSTAN_ERR_INVALID_NAME"
    assert "tool name" in str(info.value)


@pytest.mark.parametrize("name", ["<lambda>", "x" * 65, "tab\there", "\ud800", "名前"])
def test_names_capstan_refuses_are_validation_errors(name):
    def f() -> None:
        pass

    with pytest.raises(ValidationError) as info:
        FunctionTool(f, name=name)
    # "\ud800" (a lone surrogate) is not even UTF-8.
    assert info.value.status in ("CAPSTAN_ERR_INVALID_NAME", "CAPSTAN_ERR_INVALID_UTF8")


def test_a_name_that_is_not_a_string_is_a_validation_error():
    with pytest.raises(ValidationError, match="tool name"):
        FunctionTool(lambda: None, name=42)  # type: ignore[arg-type]


def test_the_longest_legal_name_is_accepted():
    assert FunctionTool(lambda: None, name="a" * 64).name == "a" * 64


def test_a_schema_error_names_the_json_pointer_of_the_bad_place():
    with ToolRegistry() as registry:
        bad = tool(name="bad_schema", parameters={"type": "object", "properties": {"n": {"type": "intgr"}}})(
            lambda n: n
        )
        with pytest.raises(ValidationError) as info:
            registry.add(bad)
    err = info.value
    assert err.status == "CAPSTAN_ERR_INVALID_SCHEMA"
    assert err.status_code == 5
    assert err.provider is None
    assert err.pointer is not None and err.pointer.startswith("/properties/n")

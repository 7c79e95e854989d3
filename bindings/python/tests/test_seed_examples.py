"""The docstring examples of the seeds (shared/seeds), as written, run under
the package name capstan."""

import doctest

import pytest

import capstan

EXAMPLES = {
    "FunctionTool": '''
>>> def add(a: int, b: int) -> int:
...     \'\'\'Add two integers.\'\'\'
...     return a + b
>>> t = FunctionTool(add)
>>> t.run(a=2, b=3).data
5
''',
    "ToolRegistry": '''
>>> @tool
... def double(x: int) -> int:
...     \'\'\'Double a number.\'\'\'
...     return x * 2
>>> registry = ToolRegistry([double])
>>> registry.execute(ToolCall(name="double", arguments={"x": 4})).data
8
''',
    "ToolRegistry.aexecute_many": '''
>>> import asyncio
>>> @tool
... def echo(text: str) -> str:
...     \'\'\'Echo text.\'\'\'
...     return text
>>> registry = ToolRegistry([echo])
>>> calls = [ToolCall(name="echo", arguments={"text": t}) for t in "ab"]
>>> [r.content for r in asyncio.run(registry.aexecute_many(calls))]
['a', 'b']
''',
    # The seed's example reads '{"a": 1}'; issue #34 makes Python's rendering
    # the core's, byte for byte (compact), as every other binding's is.
    "render_result": '''
>>> render_result({"a": 1})
'{"a":1}'
>>> render_result("plain")
'plain'
''',
    "function_schema": '''
>>> def greet(name: str, excited: bool = False) -> str:
...     \'\'\'Greet someone.
...
...     Args:
...         name: Who to greet.
...         excited: Add an exclamation mark.
...     \'\'\'
...     return name
>>> schema = function_schema(greet)
>>> schema["properties"]["name"]["description"]
'Who to greet.'
>>> schema["required"]
['name']
''',
    "parse_docstring": r'''
>>> summary, args = parse_docstring(
...     "Add numbers.\n\nArgs:\n    a: First.\n    b: Second.\n"
... )
>>> summary, args["a"]
('Add numbers.', 'First.')
''',
    "python_type_to_schema": '''
>>> python_type_to_schema(list[str])
{'type': 'array', 'items': {'type': 'string'}}
>>> python_type_to_schema(int | None)
{'type': 'integer'}
''',
    "schema module": '''
>>> from typing import Literal
>>> def convert(amount: float, to: Literal["usd", "eur"] = "usd") -> float:
...     \'\'\'Convert an amount.
...
...     Args:
...         amount: The amount to convert.
...         to: Target currency.
...     \'\'\'
...     return amount
>>> schema = function_schema(convert)
>>> schema["properties"]["to"]["enum"]
['usd', 'eur']
>>> schema["required"]
['amount']
''',
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_seed_docstring_example(name):
    parser = doctest.DocTestParser()
    globs = {n: getattr(capstan, n) for n in capstan.__all__}
    test = parser.get_doctest(EXAMPLES[name], globs, name, f"<seed {name}>", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0


def test_agentsilex_usage_example():
    """Seed 004: the decorator returns the tool, which stays callable."""

    @capstan.tool
    def get_weather(city: str, units: str = "celsius") -> str:
        """
        Get current weather for a city.

        Args:
            city: The city name to get weather for
            units: Temperature units (celsius or fahrenheit)
        """
        return f"Weather in {city}: 22°{units[0].upper()}"

    assert get_weather.name == "get_weather"
    assert get_weather.description == "Get current weather for a city."
    params = get_weather.parameters
    assert params["required"] == ["city"]
    assert params["properties"]["city"] == {
        "type": "string",
        "description": "The city name to get weather for",
    }
    assert params["properties"]["units"]["default"] == "celsius"
    assert get_weather(city="Tokyo") == "Weather in Tokyo: 22°C"
    assert get_weather.function(city="Oslo") == "Weather in Oslo: 22°C"
    assert get_weather.parameters_specification == params
    with capstan.ToolRegistry([get_weather]) as registry:
        (openai,) = registry.schemas("openai")
    assert openai["type"] == "function"
    assert openai["function"]["name"] == "get_weather"
    assert openai["function"]["description"] == "Get current weather for a city."
    assert openai["function"]["parameters"]["required"] == ["city"]


def test_package_docstrings_pass_as_doctests():
    from capstan import _registry, _schema, _tools

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    globs = {n: getattr(capstan, n) for n in capstan.__all__}
    attempted = 0
    for module in (_schema, _tools, _registry):
        for test in finder.find(module, globs=dict(globs)):
            runner.run(test)
    result = runner.summarize(verbose=False)
    attempted = result.attempted
    assert attempted >= 8
    assert result.failed == 0


# Seed 000, FunctionTool.acall(**kwargs): async; returns the function's return
# value; raises ValidationError when a required argument is missing, and
# anything the function raises; sync functions run on a worker thread.


def test_acall_returns_the_raw_return_value_of_sync_and_async_tools():
    import asyncio

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    async def aadd(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    async def main():
        return await capstan.FunctionTool(add).acall(a=2, b=3), await capstan.FunctionTool(aadd).acall(a=2, b=3)

    assert asyncio.run(main()) == (5, 5)


def test_acall_returns_objects_as_they_are_not_rendered():
    import asyncio

    @capstan.tool
    def pair(x: int) -> dict:
        """Make a pair."""
        return {"x": x, "y": [x]}

    value = asyncio.run(pair.acall(x=1))
    assert value == {"x": 1, "y": [1]} and isinstance(value, dict)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_acall_raises_validation_error_when_a_required_argument_is_missing(kind):
    import asyncio

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    async def aadd(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    t = capstan.FunctionTool(add if kind == "sync" else aadd)
    with pytest.raises(capstan.ValidationError, match="b"):
        asyncio.run(t.acall(a=1))
    with pytest.raises(capstan.ValidationError):
        asyncio.run(t.acall(a=1, b="two"))


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_acall_raises_what_the_function_raises(kind):
    import asyncio

    class Boom(Exception):
        pass

    def fail(x: int) -> int:
        """Fail."""
        raise Boom(f"no {x}")

    async def afail(x: int) -> int:
        """Fail."""
        raise Boom(f"no {x}")

    t = capstan.FunctionTool(fail if kind == "sync" else afail)
    with pytest.raises(Boom, match="no 3"):
        asyncio.run(t.acall(x=3))


def test_acall_runs_a_sync_function_off_the_event_loops_thread():
    import asyncio
    import threading

    def where() -> int:
        """Report the thread."""
        return threading.get_ident()

    async def main():
        return await capstan.FunctionTool(where).acall(), threading.get_ident()

    ran_on, loop_thread = asyncio.run(main())
    assert ran_on != loop_thread


def test_acall_raises_timeout_error_past_the_tools_timeout():
    import asyncio

    async def slow() -> int:
        """Sleep."""
        await asyncio.sleep(5)
        return 1

    with pytest.raises(TimeoutError):
        asyncio.run(capstan.FunctionTool(slow, timeout=0.05).acall())

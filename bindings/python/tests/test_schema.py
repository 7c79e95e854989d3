import dataclasses
import enum
import inspect
import typing
from typing import Annotated, Any, Literal, Optional, TypedDict, Union

import pytest

import warnings

from capstan import SchemaWarning, function_schema, parse_docstring, python_type_to_schema

S = python_type_to_schema


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mixed(enum.Enum):
    A = "a"
    ONE = 1


def test_scalars():
    assert S(str) == {"type": "string"}
    assert S(int) == {"type": "integer"}
    assert S(float) == {"type": "number"}
    assert S(bool) == {"type": "boolean"}


def test_unknown_and_any_annotations_are_permissive():
    class Thing:
        pass

    assert S(Any) == {}
    assert S(inspect.Parameter.empty) == {}
    assert S(Thing) == {}
    assert S(bytes) == {}


def test_lists_and_sets():
    assert S(list[int]) == {"type": "array", "items": {"type": "integer"}}
    assert S(list) == {"type": "array"}
    assert S(typing.List[str]) == {"type": "array", "items": {"type": "string"}}
    assert S(set[str]) == {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    assert S(frozenset[int]) == {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    assert S(list[Any]) == {"type": "array"}


def test_tuples():
    assert S(tuple[int, ...]) == {"type": "array", "items": {"type": "integer"}}
    assert S(tuple[int, str]) == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }
    assert S(typing.Tuple[float, float, float])["minItems"] == 3
    assert S(tuple) == {"type": "array"}


def test_dicts():
    assert S(dict[str, int]) == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert S(dict) == {"type": "object"}
    assert S(dict[str, Any]) == {"type": "object"}


def test_literal_has_type_only_when_homogeneous():
    assert S(Literal["a", "b"]) == {"enum": ["a", "b"], "type": "string"}
    assert S(Literal[1, 2]) == {"enum": [1, 2], "type": "integer"}
    assert S(Literal[True]) == {"enum": [True], "type": "boolean"}
    assert S(Literal["a", 1]) == {"enum": ["a", 1]}


def test_enums():
    assert S(Color) == {"enum": ["red", "green"], "type": "string"}
    assert S(Level) == {"enum": [1, 2], "type": "integer"}
    assert S(Mixed) == {"enum": ["a", 1]}


def test_optional_unwraps_and_other_unions_are_any_of():
    assert S(Optional[int]) == {"type": "integer"}
    assert S(int | None) == {"type": "integer"}
    assert S(Union[int, str]) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert S(int | str | None) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    # A member that accepts anything makes the union accept anything.
    assert S(Union[int, Any]) == {}


def test_annotated_description_and_fragment():
    assert S(Annotated[str, "A city name"]) == {"type": "string", "description": "A city name"}
    assert S(Annotated[int, {"minimum": 0, "maximum": 10}]) == {
        "type": "integer",
        "minimum": 0,
        "maximum": 10,
    }
    assert S(Annotated[str, "first", "second"])["description"] == "first"


@dataclasses.dataclass
class Address:
    """A postal address.

    Attributes:
        street: Street and number.
    """

    street: str
    city: str = "Oslo"


@dataclasses.dataclass
class Person:
    name: str
    address: Address
    tags: list[str] = dataclasses.field(default_factory=list)
    nickname: Optional[str] = None


def test_nested_dataclasses():
    schema = S(Person)
    assert schema["type"] == "object"
    assert schema["required"] == ["name", "address"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["tags"] == {"type": "array", "items": {"type": "string"}, "default": []}
    assert schema["properties"]["nickname"] == {"type": "string", "default": None}
    address = schema["properties"]["address"]
    assert address == {
        "type": "object",
        "properties": {
            "street": {"type": "string", "description": "Street and number."},
            "city": {"type": "string", "default": "Oslo"},
        },
        "required": ["street"],
        "additionalProperties": False,
        "description": "A postal address.",
    }


class Movie(TypedDict):
    title: str
    year: int


def test_typeddict():
    schema = S(Movie)
    assert schema["properties"] == {"title": {"type": "string"}, "year": {"type": "integer"}}
    assert schema["required"] == ["title", "year"]


def test_pydantic_models_are_duck_typed_nested_objects():
    pydantic = pytest.importorskip("pydantic")

    class Inner(pydantic.BaseModel):
        value: int = pydantic.Field(description="The value.")

    class Outer(pydantic.BaseModel):
        title: str
        inner: Inner
        items: list[Inner] = []

    def use(outer: Outer) -> str:
        return outer.title

    schema = function_schema(use)
    outer = schema["properties"]["outer"]
    assert "title" not in outer  # pydantic's titles are dropped, properties named title stay
    assert outer["properties"]["title"] == {"type": "string"}
    assert outer["required"] == ["title", "inner"]
    # The model's $defs move to the root, where its $refs resolve.
    assert outer["properties"]["inner"] == {"$ref": "#/$defs/Inner"}
    assert schema["$defs"]["Inner"]["properties"]["value"] == {
        "type": "integer",
        "description": "The value.",
    }


def test_function_schema_shape_defaults_and_required():
    def f(a: int, b: str = "x", c: Color = Color.RED, d: object = object(), e: tuple[int, int] = (1, 2)):
        pass

    schema = function_schema(f)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["a"]
    assert schema["properties"]["b"] == {"type": "string", "default": "x"}
    assert schema["properties"]["c"]["default"] == "red"
    assert "default" not in schema["properties"]["d"]  # not JSON-able: left out
    assert schema["properties"]["e"]["default"] == [1, 2]


def test_optional_parameters_are_not_required():
    def f(a: int, b: Optional[int], c: int | None) -> None:
        pass

    assert function_schema(f)["required"] == ["a"]


def test_no_required_key_when_everything_has_a_default():
    def f(a: int = 1):
        pass

    assert "required" not in function_schema(f)


def test_skips_self_cls_args_kwargs():
    class K:
        def m(self, x: int, *args, **kwargs):
            pass

    assert list(function_schema(K.m)["properties"]) == ["x"]
    assert list(function_schema(K().m)["properties"]) == ["x"]


def test_function_schema_rejects_non_callables():
    with pytest.raises(TypeError):
        function_schema(42)


def test_annotated_description_wins_over_docstring():
    def f(a: Annotated[int, "From Annotated."], b: int) -> None:
        """Do it.

        Args:
            a: From the docstring.
            b: Only the docstring.
        """

    props = function_schema(f)["properties"]
    assert props["a"]["description"] == "From Annotated."
    assert props["b"]["description"] == "Only the docstring."


def test_docstring_continuation_lines_are_joined():
    doc = """Search the catalogue.

    A longer explanation that is not part of the summary.

    Args:
        query (str): What to search for,
            in plain words
            or keywords.
        limit: How many.
        *rest: Ignored.

    Returns:
        Matches.
    """
    summary, args = parse_docstring(doc)
    assert summary == "Search the catalogue."
    assert args == {
        "query": "What to search for, in plain words or keywords.",
        "limit": "How many.",
        "rest": "Ignored.",
    }


def test_docstring_summary_joins_its_first_paragraph():
    summary, args = parse_docstring("Fetch a page\nover HTTP.\n\nMore.")
    assert summary == "Fetch a page over HTTP."
    assert args == {}
    assert parse_docstring(None) == ("", {})
    assert parse_docstring("") == ("", {})


def test_docstring_summary_stops_at_a_section():
    summary, args = parse_docstring("Args:\n    x: The x.")
    assert summary == ""
    assert args == {"x": "The x."}


def test_future_annotations_resolve():
    from future_tools import make_local_tool, place

    schema = place.parameters
    assert schema["properties"]["point"]["type"] == "object"
    assert schema["properties"]["point"]["required"] == ["x"]
    assert schema["properties"]["label"] == {"type": "string", "description": "What to write"}
    assert schema["properties"]["mode"] == {"enum": ["a", "b"], "type": "string", "default": "a"}
    assert schema["properties"]["note"] == {"type": "string", "default": None}
    assert schema["properties"]["tags"] == {"type": "array", "items": {"type": "string"}, "default": None}
    assert schema["required"] == ["point", "label"]
    local = make_local_tool()
    assert local.parameters["properties"]["item"]["properties"] == {"n": {"type": "integer"}}


def test_a_parameter_without_a_usable_type_warns_naming_it():
    class Thing:
        pass

    def untyped(city, when: Thing, note: "Undefined", n: int, anything: Any):  # noqa: F821
        pass

    with pytest.warns(SchemaWarning) as caught:
        schema = function_schema(untyped)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 3, messages
    assert "parameter 'city' of " in messages[0] and "has no type annotation" in messages[0]
    assert "parameter 'when'" in messages[1] and "Thing, which has no JSON Schema form" in messages[1]
    assert "parameter 'note'" in messages[2] and "does not resolve to a type" in messages[2]
    # The schema is still permissive for them, as before: the warning says so.
    assert schema["properties"]["city"] == {}


def test_typed_and_any_parameters_do_not_warn():
    def typed(city: str, n: int = 1, anything: Any = None) -> str:
        return city

    with warnings.catch_warnings():
        warnings.simplefilter("error", SchemaWarning)
        function_schema(typed)

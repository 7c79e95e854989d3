"""JSON Schema from Python functions: type hints and Google-style docstrings.

The model chooses and calls tools from their schema, so the schema is prompt
text: it is derived from what the function already says (its hints and its
docstring), leaving no second source of truth to drift. Validating arguments
against it is capstan's job, in the native core.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import inspect
import json
import re
import sys
import types
import typing
import warnings
from typing import Any, Callable, Literal, Union, get_args, get_origin

from ._context import Context
from ._errors import SchemaWarning

__all__ = ["function_schema", "parse_docstring", "python_type_to_schema"]

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_NONE = type(None)

_ARRAYS = {
    list,
    set,
    frozenset,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
    collections.abc.Set,
    collections.abc.MutableSet,
    collections.abc.Iterable,
    collections.abc.Collection,
}
_UNIQUE = {set, frozenset, collections.abc.Set, collections.abc.MutableSet}
_MAPPINGS = {dict, collections.abc.Mapping, collections.abc.MutableMapping}

# --- docstrings --------------------------------------------------------------

_SECTION_RE = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Attributes"
    r"|Other Parameters|Returns?|Yields?|Raises|Examples?|Notes?|Warnings?|Warns"
    r"|See Also|Todo|References|Methods)\s*:\s*$"
)
_ARG_SECTIONS = {
    "args",
    "arguments",
    "parameters",
    "params",
    "keyword args",
    "keyword arguments",
    "attributes",
    "other parameters",
}
_ARG_RE = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    r"""Split a Google-style docstring into a summary and per-argument descriptions.

    The summary is the first paragraph before any section header, on one line.
    An argument's description runs on over its more-indented continuation
    lines, joined with single spaces.

    Args:
        doc: The raw docstring, or ``None``.

    Returns:
        A ``(summary, {arg_name: description})`` pair.

    Example:
        >>> summary, args = parse_docstring(
        ...     "Add numbers.\n\nArgs:\n    a: First.\n    b: Second.\n"
        ... )
        >>> summary, args["a"]
        ('Add numbers.', 'First.')
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()

    first_section = next((i for i, line in enumerate(lines) if _SECTION_RE.match(line)), len(lines))
    paragraph: list[str] = []
    for line in lines[:first_section]:
        if not line.strip():
            if paragraph:
                break
            continue
        paragraph.append(line.strip())
    summary = " ".join(" ".join(paragraph).split())

    descriptions: dict[str, str] = {}
    i = first_section
    while i < len(lines):
        header = _SECTION_RE.match(lines[i])
        i += 1
        if not header or header.group(1).lower() not in _ARG_SECTIONS:
            continue
        # cleandoc leaves a first line unindented whatever follows it: a section
        # header there has its entries at any indent.
        section_indent = _indent(lines[i - 1]) if i > 1 else -1
        arg_indent: int | None = None
        current: str | None = None
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            indent = _indent(line)
            if indent <= section_indent:
                break  # the next section, or text after this one
            if arg_indent is None:
                arg_indent = indent
            if indent <= arg_indent:
                arg = _ARG_RE.match(line.strip())
                if arg is None:
                    break
                current = arg.group(1).lstrip("*")
                descriptions[current] = arg.group(2).strip()
            elif current is not None:
                descriptions[current] = f"{descriptions[current]} {line.strip()}".strip()
            i += 1
    return summary, descriptions


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


# --- types -------------------------------------------------------------------


def python_type_to_schema(annotation: Any) -> dict[str, Any]:
    """Convert a Python type annotation into a JSON Schema fragment.

    Unknown annotations, ``Any`` and ``inspect.Parameter.empty`` give ``{}``:
    a permissive schema rather than a wrong one.

    Example:
        >>> python_type_to_schema(list[str])
        {'type': 'array', 'items': {'type': 'string'}}
        >>> python_type_to_schema(int | None)
        {'type': 'integer'}
    """
    return _to_schema(annotation, {})


def _to_schema(annotation: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """``defs`` collects the ``$defs`` of pydantic models, to be hoisted to the root."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    if annotation is None or annotation is _NONE:
        return {"type": "null"}

    origin = get_origin(annotation)

    if origin is typing.Annotated:
        base, *metadata = get_args(annotation)
        schema: dict[str, Any] = _to_schema(base, defs)
        for item in metadata:
            if isinstance(item, str):
                schema.setdefault("description", item)
            elif isinstance(item, dict):
                schema.update(item)
        return schema

    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}

    if origin is Literal:
        return _enum_schema(list(get_args(annotation)))

    if origin is Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        members = [a for a in get_args(annotation) if a is not _NONE]
        if len(members) == 1:
            return _to_schema(members[0], defs)
        variants = [_to_schema(m, defs) for m in members]
        if any(not v for v in variants):
            return {}  # one member accepts anything, so the union does too
        return {"anyOf": variants}

    if origin in _ARRAYS or annotation in _ARRAYS:
        args = get_args(annotation)
        schema = {"type": "array"}
        items = _to_schema(args[0], defs) if args else {}
        if items:
            schema["items"] = items
        if (origin or annotation) in _UNIQUE:
            schema["uniqueItems"] = True
        return schema

    if origin is tuple or annotation is tuple:
        args = get_args(annotation)
        if not args and annotation is tuple:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            schema = {"type": "array"}
            items = _to_schema(args[0], defs)
            if items:
                schema["items"] = items
            return schema
        if args == ((),):  # typing.Tuple[()]
            args = ()
        return {
            "type": "array",
            "prefixItems": [_to_schema(a, defs) for a in args],
            "minItems": len(args),
            "maxItems": len(args),
        }

    if origin in _MAPPINGS or annotation in _MAPPINGS:
        args = get_args(annotation)
        schema = {"type": "object"}
        if len(args) == 2:
            values = _to_schema(args[1], defs)
            if values:
                schema["additionalProperties"] = values
        return schema

    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return _enum_schema([member.value for member in annotation])
        if _is_pydantic_model(annotation):
            return _model_schema(annotation, defs)
        if dataclasses.is_dataclass(annotation):
            return _dataclass_schema(annotation, defs)
        if _is_typeddict(annotation):
            return _typeddict_schema(annotation, defs)

    return {}


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    values = [v.value if isinstance(v, enum.Enum) else v for v in values]
    schema: dict[str, Any] = {"enum": values}
    kinds = {type(v) for v in values}
    if len(kinds) == 1:
        only = kinds.pop()
        if only in _SCALARS:
            schema["type"] = _SCALARS[only]
        elif only is _NONE:
            schema["type"] = "null"
    return schema


def _is_pydantic_model(cls: type) -> bool:
    # Duck-typed: pydantic is not a dependency of capstan.
    return callable(getattr(cls, "model_json_schema", None)) and hasattr(cls, "model_fields")


def _is_typeddict(cls: type) -> bool:
    return issubclass(cls, dict) and hasattr(cls, "__required_keys__") and hasattr(cls, "__annotations__")


def _class_docs(cls: type) -> tuple[str, dict[str, str]]:
    doc = cls.__doc__
    if not doc or doc.startswith(f"{cls.__name__}("):  # the dataclass-generated signature
        return "", {}
    return parse_docstring(doc)


def _object_schema(
    cls: type,
    fields: list[tuple[str, Any, Any]],
    defs: dict[str, Any],
) -> dict[str, Any]:
    """``fields``: (name, annotation, default or inspect.Parameter.empty)."""
    summary, docs = _class_docs(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, annotation, default in fields:
        prop = _to_schema(annotation, defs)
        if name in docs and docs[name]:
            prop.setdefault("description", docs[name])
        if default is inspect.Parameter.empty:
            required.append(name)
        else:
            _set_default(prop, default)
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    if summary:
        schema["description"] = summary
    return schema


def _dataclass_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = _hints(cls)
    fields = []
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = inspect.Parameter.empty
        fields.append((field.name, hints.get(field.name, field.type), default))
    return _object_schema(cls, fields, defs)


def _typeddict_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = _hints(cls)
    required = cls.__required_keys__  # type: ignore[attr-defined]
    fields = [
        (name, hint, inspect.Parameter.empty if name in required else None)
        for name, hint in hints.items()
    ]
    schema = _object_schema(cls, fields, defs)
    for name, _, _ in fields:  # an optional TypedDict key has no default value
        if name not in required:
            schema["properties"][name].pop("default", None)
    return schema


def _model_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    schema = _strip_titles(cls.model_json_schema())  # type: ignore[attr-defined]
    defs.update(schema.pop("$defs", {}))
    return schema


# Keywords whose value is a map of name -> schema; `title` under them is a
# property name, not pydantic's title annotation.
_SCHEMA_MAPS = {"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"}


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_strip_titles(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
        elif key in ("default", "examples", "enum", "const"):
            out[key] = value
        else:
            out[key] = _strip_titles(value)
    return out


def _set_default(schema: dict[str, Any], default: Any) -> None:
    if isinstance(default, enum.Enum):
        default = default.value
    try:
        json.dumps(default, allow_nan=False)
    except (TypeError, ValueError):
        return  # not JSON: the function's own default still applies
    if isinstance(default, (tuple, set, frozenset)):
        default = list(default)
    schema["default"] = default


# --- functions ---------------------------------------------------------------


def _hints(obj: Any, localns: dict[str, Any] | None = None) -> dict[str, Any]:
    """Resolved type hints, ``Annotated`` kept. Falls back per name when some
    forward reference cannot be resolved: those stay unknown (``{}``)."""
    try:
        return typing.get_type_hints(obj, localns=localns, include_extras=True)
    except Exception:
        pass
    raw = getattr(obj, "__annotations__", {}) or {}
    if isinstance(obj, type):
        module = sys.modules.get(obj.__module__)
        globalns = dict(vars(module)) if module else {}
    else:
        globalns = dict(getattr(obj, "__globals__", {}))
    if localns:
        globalns.update(localns)
    resolved: dict[str, Any] = {}
    for name, hint in raw.items():
        if isinstance(hint, str):
            try:
                hint = eval(hint, globalns)  # noqa: S307 - the function's own annotation
            except Exception:
                hint = inspect.Parameter.empty
        resolved[name] = hint
    return resolved


def _closure_names(fn: Callable[..., Any]) -> dict[str, Any]:
    """Names a nested function can see from its enclosing scopes."""
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None)
    if code is None or not cells:
        return {}
    names = {}
    for name, cell in zip(code.co_freevars, cells):
        try:
            names[name] = cell.cell_contents
        except ValueError:
            pass
    return names


def function_schema(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    skip: tuple[str, ...] = ("self", "cls"),
    localns: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the JSON Schema ``parameters`` object of a function.

    Properties come from the parameters (type hints, with ``from __future__
    import annotations`` resolved against the function's module and enclosing
    scope); descriptions from ``Annotated`` metadata, then the docstring's
    ``Args:`` section; defaults are emitted when JSON-able. ``required`` lists
    the parameters without a default that are not ``Optional``;
    ``additionalProperties`` is false. ``*args`` and ``**kwargs`` are skipped
    (a tool is always called with one JSON object of named arguments).

    ``name`` and ``description`` are accepted for symmetry with :func:`tool`
    and do not change the parameters schema.

    Example:
        >>> def greet(name: str, excited: bool = False) -> str:
        ...     '''Greet someone.
        ...
        ...     Args:
        ...         name: Who to greet.
        ...         excited: Add an exclamation mark.
        ...     '''
        ...     return name
        >>> schema = function_schema(greet)
        >>> schema["properties"]["name"]["description"]
        'Who to greet.'
        >>> schema["required"]
        ['name']
    """
    del name, description
    if not callable(fn):
        raise TypeError(f"Expected a callable, got {type(fn).__name__}.")
    signature = inspect.signature(fn)
    hints = resolved_hints(fn, localns)
    _, arg_docs = parse_docstring(inspect.getdoc(fn))

    defs: dict[str, Any] = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in signature.parameters.values():
        if parameter.name in skip:
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = hints.get(parameter.name, parameter.annotation)
        if annotation is Context:
            continue  # given by capstan, not by the model
        written = parameter.annotation if isinstance(parameter.annotation, str) else annotation
        if isinstance(annotation, str):
            annotation = inspect.Parameter.empty  # unresolvable forward reference
        schema = _to_schema(annotation, defs)
        if not schema and annotation is not Any and annotation is not object:
            _warn_untyped(fn, parameter.name, written)
        doc = arg_docs.get(parameter.name)
        if doc:
            schema.setdefault("description", doc)
        if parameter.default is not inspect.Parameter.empty:
            _set_default(schema, parameter.default)
        elif not is_optional(annotation):
            required.append(parameter.name)
        properties[parameter.name] = schema

    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    if defs:
        out["$defs"] = defs
    return out


def _warn_untyped(fn: Any, name: str, annotation: Any) -> None:
    """A parameter whose schema came out ``{}`` without the host saying ``Any``:
    the model is told nothing about it, so say so (issue 49)."""
    where = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    if annotation is inspect.Parameter.empty:
        why = "has no type annotation"
    elif isinstance(annotation, str):
        why = f"has the annotation {annotation!r}, which does not resolve to a type"
    else:
        shown = getattr(annotation, "__qualname__", None) or repr(annotation)
        why = (
            f"has the type {shown}, which has no JSON Schema form "
            "(use a scalar, list, dict, Literal, Enum, dataclass, TypedDict or pydantic model)"
        )
    warnings.warn(
        f"capstan: parameter {name!r} of {where} {why}: its schema is {{}}, so the model "
        "may send any JSON value for it; annotate it (typing.Any or object to mean any value)",
        SchemaWarning,
        stacklevel=4,
    )


def resolved_hints(fn: Any, localns: dict[str, Any] | None = None) -> dict[str, Any]:
    """The type hints of a callable's parameters, forward references resolved
    against its module, its enclosing scope and ``localns``."""
    func = _underlying(fn)
    scope = _closure_names(func)
    if localns:
        scope = {**localns, **scope}
    return _hints(func, scope or None)


def _underlying(fn: Any) -> Any:
    """The plain function whose annotations describe ``fn``'s parameters."""
    while True:
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif inspect.ismethod(fn):
            fn = fn.__func__
        elif hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        else:
            break
    if not inspect.isroutine(fn) and not isinstance(fn, type):
        fn = getattr(type(fn), "__call__", fn)  # a callable object
    return fn


def is_optional(annotation: Any) -> bool:
    """True for ``T | None`` and ``Optional[T]`` (also inside ``Annotated``)."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return is_optional(get_args(annotation)[0])
    if origin is Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return _NONE in get_args(annotation)
    return False

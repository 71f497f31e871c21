"""JSON Schemas derived from Python type hints and docstrings.

Schemas are kept minimal (no ``title`` keys, no ``$defs``) so a tool written
in Python lists exactly like the same tool written in Rust, Node or C.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Union

from ._docstring import parse_docstring
from ._native import WRAPPED_RESULT_KEY

__all__ = ["ToolSignature", "output_schema", "tool_signature", "type_schema"]

JsonSchema = dict[str, Any]

_SEQUENCES = (
    list,
    set,
    frozenset,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
    collections.abc.Set,
    collections.abc.MutableSet,
    collections.abc.Iterable,
    collections.abc.Collection,
)
_MAPPINGS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)
_UNION_TYPES: tuple[Any, ...] = (Union, types.UnionType)


def _json_type(value: Any) -> str | None:
    """The JSON Schema type name of a literal value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _is_jsonable(value: Any) -> bool:
    if _json_type(value) is not None:
        return not (isinstance(value, float) and value != value)  # NaN
    if isinstance(value, (list, tuple)):
        return all(_is_jsonable(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_jsonable(v) for k, v in value.items())
    return False


def _enum_schema(values: list[Any]) -> JsonSchema:
    kinds = {_json_type(v) for v in values}
    schema: JsonSchema = {}
    if len(kinds) == 1 and None not in kinds:
        schema["type"] = kinds.pop()
    schema["enum"] = values
    return schema


def _nullable(schema: JsonSchema) -> JsonSchema:
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "null":
        out = {**schema, "type": [kind, "null"]}
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    if isinstance(kind, list):
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    if schema == {}:
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def _class_schema(tp: type, seen: tuple[Any, ...]) -> JsonSchema:
    """Object schema for a TypedDict or dataclass."""
    hints = typing.get_type_hints(tp, include_extras=True)
    properties: dict[str, JsonSchema] = {}
    required: list[str] = []
    if _is_typeddict(tp):
        required_keys: frozenset[str] = getattr(tp, "__required_keys__", frozenset())
        for name, hint in hints.items():
            properties[name] = type_schema(hint, seen)
            if name in required_keys:
                required.append(name)
    else:
        for f in dataclasses.fields(tp):
            schema = type_schema(hints.get(f.name, Any), seen)
            if f.default is not dataclasses.MISSING:
                if _is_jsonable(f.default):
                    schema = {**schema, "default": f.default}
            elif f.default_factory is dataclasses.MISSING:
                required.append(f.name)
            properties[f.name] = schema
    out: JsonSchema = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def is_object_type(tp: Any) -> bool:
    """Whether values of ``tp`` are JSON objects (and so can be a tool's
    ``structuredContent`` as they are).

    >>> is_object_type(dict[str, int]), is_object_type(int)
    (True, False)
    """
    tp = _strip_annotated(tp)
    origin = typing.get_origin(tp) or tp
    if origin in _MAPPINGS or _is_typeddict(tp):
        return True
    return isinstance(tp, type) and (dataclasses.is_dataclass(tp) or hasattr(tp, "model_json_schema"))


def _strip_annotated(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def type_schema(tp: Any, _seen: tuple[Any, ...] = ()) -> JsonSchema:
    """The JSON Schema of a type annotation.

    >>> type_schema(int)
    {'type': 'integer'}
    >>> type_schema(list[str])
    {'type': 'array', 'items': {'type': 'string'}}
    >>> type_schema(int | None)
    {'type': ['integer', 'null']}
    >>> type_schema(Literal["a", "b"])
    {'type': 'string', 'enum': ['a', 'b']}

    Raises ``TypeError`` for a type with no JSON equivalent.
    """
    if tp is inspect.Parameter.empty or tp is Any or tp is object:
        return {}
    if tp is None or tp is type(None):
        return {"type": "null"}
    if isinstance(tp, typing.TypeVar):
        return {}
    if isinstance(tp, typing.NewType):
        return type_schema(tp.__supertype__, _seen)

    origin = typing.get_origin(tp)
    args = typing.get_args(tp)

    if origin is typing.Annotated:
        schema = dict(type_schema(args[0], _seen))
        for extra in args[1:]:
            if isinstance(extra, str):
                schema["description"] = extra
            elif isinstance(extra, dict):
                schema.update(extra)
        return schema
    if origin in _UNION_TYPES:
        members = [a for a in args if a is not type(None)]
        nullable = len(members) < len(args)
        if len(members) == 1:
            schema = type_schema(members[0], _seen)
            return _nullable(schema) if nullable else schema
        any_of = [type_schema(m, _seen) for m in members]
        if nullable:
            any_of.append({"type": "null"})
        return {"anyOf": any_of}
    if origin is Literal:
        return _enum_schema(list(args))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": type_schema(args[0], _seen)}
        if not args or args == ((),):  # tuple[()]: the empty tuple
            return {"type": "array", "maxItems": 0}
        return {
            "type": "array",
            "prefixItems": [type_schema(a, _seen) for a in args],
            "minItems": len(args),
            "maxItems": len(args),
        }
    if origin in _SEQUENCES:
        schema = {"type": "array"}
        if args and args[0] is not Any:
            schema["items"] = type_schema(args[0], _seen)
        if origin in (set, frozenset, collections.abc.Set, collections.abc.MutableSet):
            schema["uniqueItems"] = True
        return schema
    if origin in _MAPPINGS:
        schema = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            schema["additionalProperties"] = type_schema(args[1], _seen)
        return schema

    if not isinstance(tp, type):
        raise TypeError(f"cannot derive a JSON Schema for {tp!r}")
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if issubclass(tp, enum.Enum):
        return _enum_schema([member.value for member in tp])
    if tp in (list, tuple, set, frozenset):
        return {"type": "array"}
    if tp is dict:
        return {"type": "object"}
    if _is_typeddict(tp) or dataclasses.is_dataclass(tp):
        if tp in _seen:
            return {"type": "object"}  # recursive type: stop describing here
        return _class_schema(tp, (*_seen, tp))
    model_schema = getattr(tp, "model_json_schema", None)
    if callable(model_schema):  # a pydantic model describes itself
        return _pydantic_schema(model_schema())
    raise TypeError(
        f"cannot derive a JSON Schema for {tp.__qualname__}: use a JSON type "
        "(str, int, float, bool, list, dict, a TypedDict or a dataclass) or pass input_schema="
    )


def _pydantic_schema(schema: JsonSchema) -> JsonSchema:
    """A pydantic model's schema, made self-contained so it can sit inside a
    tool's input schema: ``$ref``s into its ``$defs`` are inlined (a
    recursive reference stops at ``{"type": "object"}``) and the titles
    pydantic generates from field names are dropped, like every other
    derived schema here.

    >>> _pydantic_schema({"title": "P", "type": "object", "properties": {
    ...     "a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"title": "A", "type": "string"}}})
    {'type': 'object', 'properties': {'a': {'type': 'string'}}}
    """
    defs: dict[str, Any] = schema.get("$defs", {})

    def inline(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen or name not in defs:
                return {"type": "object"}
            target = inline(defs[name], (*seen, name))
            extra = {k: inline(v, seen) for k, v in node.items() if k != "$ref"}
            return {**target, **extra}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("$defs", "title"):
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: inline(sub, seen) for name, sub in value.items()}
            else:
                out[key] = inline(value, seen)
        return out

    result: JsonSchema = inline(schema, ())
    return result


def output_schema(return_hint: Any) -> JsonSchema | None:
    """The ``outputSchema`` a return annotation stands for, or ``None``.

    Object-like types (TypedDict, dataclass, dict) describe the structured
    content directly; other JSON types are wrapped as ``{"result": value}``,
    the rule core applies to non-object return values. ``str`` (plain text),
    ``None``, ``Any`` and optional types declare no output schema.

    >>> output_schema(int)
    {'type': 'object', 'properties': {'result': {'type': 'integer'}}, 'required': ['result']}
    >>> output_schema(str) is None
    True
    """
    from ._native import ToolResult

    hint = _strip_annotated(return_hint)
    if hint in (inspect.Signature.empty, None, type(None), Any, str, ToolResult):
        return None
    origin = typing.get_origin(hint)
    if origin in _UNION_TYPES and type(None) in typing.get_args(hint):
        return None
    if origin in (collections.abc.Awaitable, collections.abc.Coroutine):
        return None
    if is_object_type(hint):
        schema = type_schema(return_hint)
        return schema if schema.get("type") == "object" else None
    return {
        "type": "object",
        "properties": {WRAPPED_RESULT_KEY: type_schema(return_hint)},
        "required": [WRAPPED_RESULT_KEY],
    }


@dataclass
class Parameter:
    """One tool argument and how to hand it to the function."""

    name: str
    convert: Callable[[Any], Any] | None = None
    """Turns the JSON value into the annotated type (dataclass, Enum)."""


@dataclass
class ToolSignature:
    """Everything derived from a tool function's signature and docstring."""

    description: str | None
    input_schema: JsonSchema
    output_schema: JsonSchema | None
    parameters: list[Parameter]
    context_parameter: str | None
    """The parameter annotated ``ferromcp.Context``, if any."""
    accepts_extra: bool
    """True when the function takes ``**kwargs`` (extra arguments pass through)."""


def _converter(hint: Any) -> Callable[[Any], Any] | None:
    """How an argument's JSON value becomes the annotated type (dataclass,
    Enum, pydantic model), or ``None`` when it is used as is."""
    hint = _strip_annotated(hint)
    if isinstance(hint, type) and (
        dataclasses.is_dataclass(hint) or issubclass(hint, enum.Enum) or callable(getattr(hint, "model_validate", None))
    ):
        target = hint
        return lambda value: from_json(target, value)
    return None


def tool_signature(fn: Callable[..., Any], context_type: type, *, derive_input: bool = True) -> ToolSignature:
    """Derives the schemas and calling plan of a tool function.

    With ``derive_input=False`` (an explicit input schema replaces the
    derived one) parameter types without a JSON Schema are accepted.

    >>> def add(a: int, b: int = 2) -> int:
    ...     '''Adds two integers.'''
    ...     return a + b
    >>> sig = tool_signature(add, type(None))
    >>> sig.description, sig.input_schema["required"]
    ('Adds two integers.', ['a'])
    """
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except TypeError:  # a callable object or partial without __annotations__
        hints = {}
    except NameError as e:
        raise TypeError(
            f"cannot resolve the type hints of {getattr(fn, '__qualname__', fn)!r}: {e} "
            "(types named in string annotations must be importable from the function's module)"
        ) from None
    doc = parse_docstring(inspect.getdoc(fn))
    properties: dict[str, JsonSchema] = {}
    required: list[str] = []
    parameters: list[Parameter] = []
    context_parameter: str | None = None
    accepts_extra = False
    for name, param in signature.parameters.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_extra = True
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"tool parameter {name!r} is positional-only; tools take keyword arguments")
        hint = hints.get(name, param.annotation)
        if _strip_annotated(hint) is context_type:
            context_parameter = name
            continue
        try:
            schema = type_schema(hint)
        except TypeError as e:
            if derive_input:
                raise TypeError(f"parameter {name!r} of {getattr(fn, '__qualname__', fn)!r}: {e}") from None
            schema = {}
        if name in doc.params:
            schema = {**schema, "description": doc.params[name]}
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif _is_jsonable(param.default):
            schema = {**schema, "default": param.default}
        properties[name] = schema
        parameters.append(Parameter(name, _converter(hint)))
    input_schema: JsonSchema = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    return_hint = hints.get("return", signature.return_annotation)
    return ToolSignature(
        description=doc.description,
        input_schema=input_schema,
        output_schema=output_schema(return_hint),
        parameters=parameters,
        context_parameter=context_parameter,
        accepts_extra=accepts_extra,
    )


def _is_schema_dict(value: Any) -> bool:
    """A JSON Schema dict (as opposed to a ``{"field": type}`` shorthand)."""
    return isinstance(value, dict) and not any(
        isinstance(v, type) or typing.get_origin(v) is not None or v is Any for v in value.values()
    )


def elicitation_schema(schema: Any) -> tuple[JsonSchema, Any]:
    """The ``requestedSchema`` of a form elicitation, and the type an accepted
    answer converts to (``None``: answers stay dicts).

    ``schema`` is a JSON Schema dict (sent as is), a ``{"field": type}``
    dict (every field required unless ``Optional``), a TypedDict, a
    dataclass or a pydantic model.

    >>> schema, target = elicitation_schema({"name": str, "age": int | None})
    >>> schema["properties"], schema["required"], target
    ({'name': {'type': 'string'}, 'age': {'type': ['integer', 'null']}}, ['name'], None)
    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Contact:
    ...     email: str
    >>> schema, target = elicitation_schema(Contact)
    >>> schema["required"], target is Contact
    (['email'], True)
    """
    if schema is None:
        return {"type": "object", "properties": {}}, None
    if _is_schema_dict(schema):
        return dict(schema), None
    if isinstance(schema, dict):
        properties: dict[str, JsonSchema] = {}
        required: list[str] = []
        for name, hint in schema.items():
            properties[name] = type_schema(hint)
            origin = typing.get_origin(_strip_annotated(hint))
            optional = origin in _UNION_TYPES and type(None) in typing.get_args(_strip_annotated(hint))
            if not optional:
                required.append(name)
        out: JsonSchema = {"type": "object", "properties": properties}
        if required:
            out["required"] = required
        return out, None
    derived = type_schema(schema)
    if derived.get("type") != "object":
        raise TypeError(f"an elicitation schema must describe an object, not {schema!r}")
    return derived, schema


def from_json(target: Any, value: Any) -> Any:
    """Builds an instance of ``target`` (dataclass, Enum, pydantic model;
    TypedDicts and other types stay as they are) from a JSON value.

    >>> import enum
    >>> class Color(enum.Enum):
    ...     RED = "red"
    >>> from_json(Color, "red")
    <Color.RED: 'red'>
    """
    target = _strip_annotated(target)
    validate = getattr(target, "model_validate", None)
    if isinstance(target, type) and callable(validate):  # pydantic
        return validate(value)
    if isinstance(target, type) and dataclasses.is_dataclass(target) and isinstance(value, dict):
        hints = typing.get_type_hints(target)
        names = {f.name for f in dataclasses.fields(target)}
        return target(**{k: from_json(hints.get(k, Any), v) for k, v in value.items() if k in names})
    if isinstance(target, type) and issubclass(target, enum.Enum):
        return target(value)
    return value


def from_text(hint: Any, text: str) -> Any:
    """Converts a string (a URI template variable, a prompt argument) to the
    annotated type: ``str`` as is, numbers and booleans parsed, an ``Enum``
    by value, and anything else (lists, dicts, dataclasses) from JSON text.

    >>> from_text(int, "42"), from_text(bool, "true"), from_text(list[int], "[1, 2]")
    (42, True, [1, 2])

    Raises ``ValueError`` when the text does not fit.
    """
    hint = _strip_annotated(hint)
    origin = typing.get_origin(hint)
    if origin in _UNION_TYPES:
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        for member in members:
            try:
                return from_text(member, text)
            except (ValueError, TypeError):
                continue
        raise ValueError(f"{text!r} fits none of {hint!r}")
    if hint in (inspect.Parameter.empty, Any, str, object) or isinstance(hint, typing.TypeVar):
        return text
    if origin is Literal:
        for choice in typing.get_args(hint):
            if str(choice) == text or (isinstance(choice, bool) and text.lower() == str(choice).lower()):
                return choice
        raise ValueError(f"{text!r} is not one of {list(typing.get_args(hint))}")
    if hint is bool:
        lowered = text.strip().lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"{text!r} is not a boolean")
    if hint is int:
        return int(text)
    if hint is float:
        return float(text)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        for member in hint:
            if str(member.value) == text:
                return member
        raise ValueError(f"{text!r} is not one of {[str(m.value) for m in hint]}")
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(f"{text!r} is not JSON for {getattr(hint, '__name__', hint)}") from None
    return from_json(hint, value)

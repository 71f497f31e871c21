"""Tool definitions derived from type hints and docstrings."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, Optional, TypedDict

import ferromcp
import pytest
from ferromcp._docstring import parse_docstring
from ferromcp._schema import output_schema, tool_signature, type_schema


def signature(fn: Any) -> Any:
    return tool_signature(fn, ferromcp.Context)


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Movie(TypedDict):
    title: str
    year: int


class PartialMovie(TypedDict, total=False):
    title: str


@dataclasses.dataclass
class Box:
    width: float
    label: str = "box"
    tags: list[str] = dataclasses.field(default_factory=list)


@pytest.mark.parametrize(
    ("hint", "schema"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (Any, {}),
        (list, {"type": "array"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (list[list[str]], {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
            },
        ),
        (dict, {"type": "object"}),
        (dict[str, Any], {"type": "object"}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (Optional[int], {"type": ["integer", "null"]}),  # noqa: UP045 (the old spelling must map too)
        (int | None, {"type": ["integer", "null"]}),
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1, "x"], {"enum": [1, "x"]}),
        (Color, {"type": "string", "enum": ["red", "green"]}),
        (Annotated[str, "A name."], {"type": "string", "description": "A name."}),
        (Annotated[int, {"minimum": 0}], {"type": "integer", "minimum": 0}),
        (
            Movie,
            {
                "type": "object",
                "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                "required": ["title", "year"],
            },
        ),
        (PartialMovie, {"type": "object", "properties": {"title": {"type": "string"}}}),
        (
            Box,
            {
                "type": "object",
                "properties": {
                    "width": {"type": "number"},
                    "label": {"type": "string", "default": "box"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["width"],
            },
        ),
    ],
)
def test_type_schema(hint: Any, schema: dict[str, Any]) -> None:
    assert type_schema(hint) == schema


class Opaque:
    pass


def test_unsupported_type_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match=r"cannot derive a JSON Schema for .*Opaque"):
        type_schema(Opaque)

    def tool(thing: Opaque) -> str:
        return ""

    with pytest.raises(TypeError, match="parameter 'thing'"):
        signature(tool)


def test_echo_and_add_match_the_walking_skeleton_exactly() -> None:
    def echo(text: str) -> str:
        """Returns the text unchanged."""
        return text

    def add(a: int, b: int) -> int:
        """Adds two integers."""
        return a + b

    e, a = signature(echo), signature(add)
    assert e.description == "Returns the text unchanged."
    assert e.input_schema == {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    assert e.output_schema is None
    assert a.description == "Adds two integers."
    assert a.input_schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    assert a.output_schema == {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}


def test_no_title_keys_anywhere() -> None:
    def tool(movie: Movie, box: Box, color: Color = Color.RED) -> Movie:
        return movie

    sig = signature(tool)
    assert "title" not in repr({k: v for k, v in sig.input_schema["properties"].items() if k != "movie"})
    assert "'title': {'type'" in repr(sig.input_schema)  # only the TypedDict field named title


def test_defaults_make_parameters_optional() -> None:
    def search(query: str, limit: int = 10, exact: bool = False, tag: str | None = None) -> list[str]:
        return []

    sig = signature(search)
    assert sig.input_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "default": 10},
            "exact": {"type": "boolean", "default": False},
            "tag": {"type": ["string", "null"], "default": None},
        },
        "required": ["query"],
    }
    assert sig.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "string"}}},
        "required": ["result"],
    }


def test_docstring_gives_description_and_argument_descriptions() -> None:
    def weather(city: str, days: int = 1) -> str:
        """Forecasts the weather
        for a city.

        Uses a made-up model.

        Args:
            city: The city's name.
            days (int): How many days
                to forecast.

        Returns:
            The forecast.
        """
        return ""

    sig = signature(weather)
    assert sig.description == "Forecasts the weather for a city."
    assert sig.input_schema["properties"] == {
        "city": {"type": "string", "description": "The city's name."},
        "days": {"type": "integer", "description": "How many days to forecast.", "default": 1},
    }


def test_no_docstring_no_description() -> None:
    def bare(x: int) -> None:
        pass

    sig = signature(bare)
    assert sig.description is None
    assert sig.output_schema is None


def test_docstring_sections_other_than_args_are_ignored() -> None:
    doc = parse_docstring(
        """Summary.

        Raises:
            ValueError: when it fails.
        """
    )
    assert doc.description == "Summary."
    assert doc.params == {}


@pytest.mark.parametrize(
    ("hint", "schema"),
    [
        (None, None),
        (str, None),
        (Any, None),
        (int | None, None),
        (ferromcp.ToolResult, None),
        (int, {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}),
        (bool, {"type": "object", "properties": {"result": {"type": "boolean"}}, "required": ["result"]}),
        (dict, {"type": "object"}),
        (
            Movie,
            {
                "type": "object",
                "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                "required": ["title", "year"],
            },
        ),
    ],
)
def test_output_schema(hint: Any, schema: dict[str, Any] | None) -> None:
    assert output_schema(hint) == schema


def test_context_parameter_is_not_in_the_schema() -> None:
    def tool(text: str, ctx: ferromcp.Context) -> str:
        return text

    sig = signature(tool)
    assert sig.context_parameter == "ctx"
    assert list(sig.input_schema["properties"]) == ["text"]


def test_async_return_annotation_is_the_awaited_type() -> None:
    async def tool(a: int) -> int:
        return a

    assert signature(tool).output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }


def test_decorator_forms_and_overrides() -> None:
    server = ferromcp.Server("schema-test")

    @server.tool
    def plain(x: int) -> int:
        """Plain."""
        return x

    @server.tool(name="renamed", description="Explicit.")
    async def original(x: int) -> int:
        return x

    @server.tool(input_schema={"type": "object", "properties": {"raw": {}}})
    def raw(**kwargs: Any) -> dict[str, Any]:
        return kwargs

    assert plain(3) == 3  # the decorator returns the function unchanged
    assert server.tool_names() == ["plain", "renamed", "raw"]
    assert server.remove_tool("renamed") is True
    assert server.tool_names() == ["plain", "raw"]


def test_invalid_tool_name_is_refused_by_core() -> None:
    server = ferromcp.Server("schema-test")
    with pytest.raises(ferromcp.InvalidDefinitionError) as info:
        server.add_tool(lambda: None, name="bad name with spaces")
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, ferromcp.McpError)


def test_unresolvable_hint_is_a_clear_error() -> None:
    class Local:
        pass

    def tool(thing: Local) -> str:  # a string annotation naming a local class
        return ""

    with pytest.raises(TypeError, match="cannot resolve the type hints"):
        signature(tool)


def test_positional_only_parameters_are_refused() -> None:
    def tool(x: int, /) -> int:
        return x

    with pytest.raises(TypeError, match="positional-only"):
        signature(tool)

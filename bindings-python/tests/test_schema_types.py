"""Schemas and conversions beyond the basics: pydantic models (an optional
dependency), nested dataclasses and enums as arguments, elicitation schemas
from types, and strings from the wire (template variables, prompt
arguments) converted to annotations."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator
from typing import Annotated, Any, Literal, TypedDict

import ferromcp
import pytest
from ferromcp._schema import elicitation_schema, from_json, from_text, output_schema, type_schema

pydantic = pytest.importorskip("pydantic")


class Address(pydantic.BaseModel):  # type: ignore[misc,name-defined]
    street: str
    city: str = "Paris"


class Person(pydantic.BaseModel):  # type: ignore[misc,name-defined]
    name: str
    age: int
    address: Address | None = None


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    x: int
    y: int


@dataclasses.dataclass
class Segment:
    start: Point
    end: Point
    level: Level = Level.LOW


class Contact(TypedDict):
    email: str


@pytest.fixture
def served() -> Iterator[ferromcp.SyncClient]:
    server = ferromcp.Server("types")

    @server.tool
    def greet(person: Person) -> Person:
        """Returns the person one year older."""
        assert isinstance(person, Person)
        return Person(name=person.name, age=person.age + 1, address=person.address)

    @server.tool
    def length(segment: Segment) -> float:
        assert isinstance(segment.start, Point) and isinstance(segment.level, Level)
        return float(abs(segment.end.x - segment.start.x) + abs(segment.end.y - segment.start.y))

    @server.tool
    def shout(text: Annotated[str, "What to shout"], mode: Literal["loud", "louder"] = "loud") -> str:
        return text.upper() + ("!" if mode == "loud" else "!!!")

    # In memory: what is tested is the schemas and conversions, not a transport.
    with ferromcp.SyncClient.in_memory(server) as client:
        yield client


def call(client: ferromcp.SyncClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The result as the wire has it."""
    return client.call_tool(name, arguments).raw


def tools(client: ferromcp.SyncClient) -> dict[str, dict[str, Any]]:
    """Each tool as the wire has it, by name."""
    return {t.name: t.raw for t in client.list_tools()}


def test_pydantic_models_give_input_and_output_schemas(served: ferromcp.SyncClient) -> None:
    greet = tools(served)["greet"]
    person = greet["inputSchema"]["properties"]["person"]
    assert person["required"] == ["name", "age"]
    assert greet["outputSchema"]["required"] == ["name", "age"]
    result = call(served, "greet", {"person": {"name": "Ada", "age": 36, "address": {"street": "Rue"}}})
    assert result["structuredContent"] == {
        "name": "Ada",
        "age": 37,
        "address": {"street": "Rue", "city": "Paris"},
    }


def test_invalid_pydantic_arguments_are_refused(served: ferromcp.SyncClient) -> None:
    result = call(served, "greet", {"person": {"name": "Ada"}})
    assert result.get("isError") is True  # core's schema check (age is required)


def test_nested_dataclasses_and_enums_are_built_from_arguments(served: ferromcp.SyncClient) -> None:
    result = call(served, "length", {"segment": {"start": {"x": 0, "y": 0}, "end": {"x": 3, "y": 4}, "level": 2}})
    assert result["structuredContent"] == {"result": 7.0}


def test_annotated_descriptions_and_literals(served: ferromcp.SyncClient) -> None:
    shout = tools(served)["shout"]["inputSchema"]["properties"]
    assert shout["text"] == {"type": "string", "description": "What to shout"}
    assert shout["mode"] == {"type": "string", "enum": ["loud", "louder"], "default": "loud"}
    assert call(served, "shout", {"text": "hi", "mode": "louder"})["content"][0]["text"] == "HI!!!"


def test_output_schema_of_a_pydantic_model() -> None:
    schema = output_schema(Person)
    assert schema is not None and schema["type"] == "object"
    assert type_schema(Person)["properties"]["age"]["type"] == "integer"


@pytest.mark.parametrize(
    ("schema", "expected_required", "target"),
    [
        ({"email": str, "age": int | None}, ["email"], None),
        (Contact, ["email"], Contact),
        (Point, ["x", "y"], Point),
        (Person, ["name", "age"], Person),
        ({"type": "object", "properties": {"ok": {"type": "boolean"}}}, None, None),
    ],
)
def test_elicitation_schemas(schema: Any, expected_required: list[str] | None, target: Any) -> None:
    requested, found = elicitation_schema(schema)
    assert requested["type"] == "object"
    assert requested.get("required") == expected_required
    assert found is target


def test_an_elicitation_schema_must_be_an_object() -> None:
    with pytest.raises(TypeError, match="must describe an object"):
        elicitation_schema(int)


def test_answers_convert_to_the_schema_type() -> None:
    assert from_json(Point, {"x": 1, "y": 2}) == Point(1, 2)
    assert from_json(Segment, {"start": {"x": 0, "y": 0}, "end": {"x": 1, "y": 1}, "level": 2}).level is Level.HIGH
    person = from_json(Person, {"name": "Ada", "age": 36})
    assert isinstance(person, Person) and person.age == 36
    assert from_json(Contact, {"email": "a@b"}) == {"email": "a@b"}


@pytest.mark.parametrize(
    ("hint", "text", "value"),
    [
        (str, "x", "x"),
        (int, "42", 42),
        (float, "2.5", 2.5),
        (bool, "false", False),
        (Level, "2", Level.HIGH),
        (Literal["a", "b"], "b", "b"),
        (int | None, "3", 3),
        (list[int], "[1, 2]", [1, 2]),
        (Point, '{"x": 1, "y": 2}', Point(1, 2)),
        (Annotated[int, "n"], "7", 7),
    ],
)
def test_strings_from_the_wire_convert_to_annotations(hint: Any, text: str, value: Any) -> None:
    assert from_text(hint, text) == value


@pytest.mark.parametrize(
    ("hint", "text"), [(int, "x"), (bool, "maybe"), (Level, "9"), (Literal["a"], "b"), (list[int], "[")]
)
def test_strings_that_do_not_fit_raise_value_error(hint: Any, text: str) -> None:
    with pytest.raises(ValueError):
        from_text(hint, text)

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
from conftest import http_post, params
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
def served() -> Iterator[int]:
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

    serving = server.start("http", port=0)
    assert serving.port is not None
    yield serving.port
    serving.stop()
    serving.wait(10)


def call(port: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params(name=name, arguments=arguments)}
    response = http_post(port, message)
    assert "result" in response, response
    result: dict[str, Any] = response["result"]
    return result


def tools(port: int) -> dict[str, dict[str, Any]]:
    response = http_post(port, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params()})
    return {t["name"]: t for t in response["result"]["tools"]}


def test_pydantic_models_give_input_and_output_schemas(served: int) -> None:
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


def test_invalid_pydantic_arguments_are_refused(served: int) -> None:
    result = call(served, "greet", {"person": {"name": "Ada"}})
    assert result.get("isError") is True  # core's schema check (age is required)


def test_nested_dataclasses_and_enums_are_built_from_arguments(served: int) -> None:
    result = call(served, "length", {"segment": {"start": {"x": 0, "y": 0}, "end": {"x": 3, "y": 4}, "level": 2}})
    assert result["structuredContent"] == {"result": 7.0}


def test_annotated_descriptions_and_literals(served: int) -> None:
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

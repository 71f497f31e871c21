"""The Python examples (examples/python), tested as the README says a server
is tested: imported, and driven by `SyncClient.in_memory(server)` (no
subprocess, no socket). The conformance suite drives the same files as
processes (examples/manifest.json)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import ferromcp
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


def load(name: str) -> ModuleType:
    """Imports examples/python/NAME.py as a module of its own (not run)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_echo_example_echoes_and_adds() -> None:
    server = load("echo_server").server
    with ferromcp.SyncClient.in_memory(server) as client:
        assert sorted(tool.name for tool in client.list_tools()) == ["add", "echo"]
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        assert client.call_tool("add", {"a": 2, "b": 3}).text == "5"
        # Arguments that do not match the schema are a tool error, not a crash.
        assert client.call_tool("add", {"a": "two", "b": 3}).is_error


def accept(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}


def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "a poem"},
        "model": "test-model",
    }


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_everything_example_in_both_eras(era: str) -> None:
    server = load("everything_server").server
    with ferromcp.SyncClient.in_memory(
        server, era=era, on_elicitation=accept, on_sampling=sample
    ) as client:
        assert (
            client.call_tool("test_simple_text").text
            == "This is a simple text response for testing."
        )
        failed = client.call_tool("test_error_handling")
        assert failed.is_error and "intentionally" in failed.text
        steps: list[float] = []
        done = client.call_tool(
            "test_tool_with_progress", progress=lambda progress, total, message: steps.append(progress)
        )
        assert done.text == "Progress test completed" and steps == [0, 50, 100]
        assert "ada" in client.call_tool("test_elicitation", {"message": "who?"}).text
        assert client.call_tool("test_sampling", {"prompt": "write"}).text == "LLM response: a poem"

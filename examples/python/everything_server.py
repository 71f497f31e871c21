"""The conformance fixture server in Python: every tool, resource, prompt and
completion the official MCP conformance suite calls, written with the
``ferromcp`` decorators (the Rust twin is examples/rust/src/bin/everything-server.rs).

Plain ``def`` and ``async def`` handlers are mixed on purpose: asks for
input block in the first and are awaited in the second, and both serve
2026-07-28 requests (input_required rounds) and 2025-11-25 sessions (live
requests) with the same code.

Run from the repository root after `make build`:

    .venv/bin/python examples/python/everything_server.py 3001     # http://127.0.0.1:3001/mcp
    .venv/bin/python examples/python/everything_server.py --stdio
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import ferromcp
from ferromcp import Context, ToolResult

# A 1x1 transparent PNG, and a silent, empty 44.1 kHz mono WAV.
PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
WAV_BASE64 = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA="

server = ferromcp.Server("ferromcp-everything-server", version="0.1.0")


def text_of(answer: dict[str, Any]) -> str:
    """The text of a sampling answer's content (one block or a list)."""
    content = answer.get("content")
    blocks = content if isinstance(content, list) else [content]
    return " ".join(b.get("text", "") for b in blocks if isinstance(b, dict))


# -- content ---------------------------------------------------------------


@server.tool
def test_simple_text() -> str:
    """Returns a simple text response"""
    return "This is a simple text response for testing."


@server.tool
def test_image_content() -> ToolResult:
    """Returns an image"""
    return ToolResult([{"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}])


@server.tool
def test_audio_content() -> ToolResult:
    """Returns audio"""
    return ToolResult([{"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"}])


@server.tool
def test_embedded_resource() -> ToolResult:
    """Returns an embedded resource"""
    resource = {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }
    return ToolResult([{"type": "resource", "resource": resource}])


@server.tool
async def test_multiple_content_types() -> ToolResult:
    """Returns text, an image and an embedded resource"""
    resource = {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": json.dumps({"test": "data", "value": 123}),
    }
    return ToolResult(
        [
            "Multiple content types test:",
            {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"},
            {"type": "resource", "resource": resource},
        ]
    )


@server.tool
def test_error_handling() -> str:
    """Always fails as a tool error"""
    raise RuntimeError("This tool intentionally returns an error for testing")


@server.tool
def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress"""
    for i, step in enumerate((0, 50, 100)):
        if i:
            time.sleep(0.05)
        ctx.progress(step, total=100, message=f"step {i + 1}")
    return "Progress test completed"


@server.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Logs while it runs"""
    for i, message in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if i:
            await asyncio.sleep(0.05)
        ctx.log("info", message, logger="everything-server")
    return "Logging test completed"


@server.tool
def test_logging_tool(ctx: Context) -> str:
    """Logs only when the request asks for a log level"""
    return "logged" if ctx.log("info", "test_logging_tool ran") else "no log level requested"


JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(input_schema=JSON_SCHEMA_2020_12, description="Carries a JSON Schema 2020-12 inputSchema")
def json_schema_2020_12_tool(**arguments: Any) -> str:
    return "ok"


@server.tool(
    input_schema={
        "type": "object",
        "properties": {"value": {"type": "string", "x-mcp-header": "Value"}},
        "required": ["value"],
    },
    description="Mirrors its argument into the Mcp-Param-Value header",
)
def test_custom_header(value: str) -> str:
    return f"value: {value}"


# -- asking the client -----------------------------------------------------


@server.tool
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model"""
    answer = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {text_of(answer)}"


@server.tool
def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user"""
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    answer = ctx.elicit(message, schema)
    return f"User response: action={answer.action}, content={json.dumps(answer.content or {})}"


@server.tool
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks the user with a schema whose fields have defaults"""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": True},
        },
    }
    answer = await ctx.elicit("Please review your profile", schema)
    return f"Elicitation result: action={answer.action}, content={json.dumps(answer.content)}"


@server.tool
def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks the user with every enum shape"""
    options = ["option1", "option2", "option3"]
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": options},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    }
    answer = ctx.elicit("Choose your options", schema)
    return f"Elicitation result: action={answer.action}, content={json.dumps(answer.content)}"


@server.tool
async def test_reconnection(ctx: Context) -> str:
    """Closes its SSE connection mid-call; the result arrives on the resumed stream"""
    # Only the legacy HTTP wire has resumable streams; elsewhere this is a
    # no-op and the call simply completes.
    ctx.close_sse_stream()
    await asyncio.sleep(0.1)
    return "Reconnection test completed"


@server.tool
def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability"""
    # Without `sampling` the ask raises -32021 naming it, and so does the call.
    answer = ctx.sample("Say hello", max_tokens=100)
    return f"Sampled: {text_of(answer)}"


@server.tool
async def test_streaming_elicitation(ctx: Context) -> str:
    """Streams a log line, then asks the user through an input request"""
    ctx.log("info", "about to ask for confirmation")
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    answer = await ctx.elicit("Continue?", schema, key="confirmation")
    return f"answer: {answer.action} {json.dumps(answer.content)}"


# -- input_required rounds (2026-07-28) ------------------------------------


@server.tool
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks for the user's name through an input request"""
    answer = await ctx.elicit("What is your name?", {"name": str}, key="user_name")
    name = answer.content["name"] if answer.accepted and answer.content else "stranger"
    return f"Hello, {name}!"


@server.tool
def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model through an input request"""
    answer = ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"The model answered: {text_of(answer)}"


@server.tool
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks for the client's roots through an input request"""
    roots = await ctx.list_roots(key="client_roots")
    return f"Client roots: {', '.join(root.uri for root in roots)}"


@server.tool
def test_input_required_result_request_state(ctx: Context) -> str:
    """Carries sealed request state across rounds"""
    answer = ctx.elicit("Confirm?", {"ok": bool}, key="confirm")
    # Reaching here means the requestState verified (integrity, method,
    # params digest and expiry are checked by the core).
    return f"state-ok: confirmed={json.dumps((answer.content or {}).get('ok'))}"


@server.tool
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks for three inputs in one round"""
    name, greeting, roots = await asyncio.gather(
        ctx.elicit("What is your name?", {"name": str}, key="user_name"),
        ctx.sample("Write a short greeting.", max_tokens=100, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    return f"name={(name.content or {}).get('name', '')}, greeting={text_of(greeting)}, roots={len(roots)}"


@server.tool
def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks for input over two rounds"""
    schema = {"type": "object", "properties": {"value": {"type": "string"}}}
    first = ctx.elicit("Step 1: enter a value", schema, key="step1")
    second = ctx.elicit("Step 2: enter another value", schema, key="step2")
    return f"step1={json.dumps(first.content)}, step2={json.dumps(second.content)}"


@server.tool
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Rejects tampered request state"""
    await ctx.elicit("Confirm?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="confirm")
    return "state verified"


@server.tool
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only for input the client declared it can give"""
    if "elicitation" in ctx.client_capabilities:
        answer: Any = await ctx.elicit("What is your name?", {"name": str}, key="user_name")
        return f"answer: {answer.action} {json.dumps(answer.content)}"
    sampled = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"answer: {text_of(sampled)}"


# -- list changes ----------------------------------------------------------


def test_dynamic_tool() -> str:
    """Added at run time"""
    return "dynamic"


def test_dynamic_prompt() -> str:
    """Added at run time"""
    return "dynamic"


@server.tool
def test_trigger_tool_change() -> str:
    """Adds or removes a tool"""
    if server.remove_tool("test_dynamic_tool"):
        return "removed test_dynamic_tool"
    server.add_tool(test_dynamic_tool)
    return "added test_dynamic_tool"


@server.tool
def test_trigger_prompt_change() -> str:
    """Adds or removes a prompt"""
    if server.remove_prompt("test_dynamic_prompt"):
        return "removed test_dynamic_prompt"
    server.add_prompt(test_dynamic_prompt)
    return "added test_dynamic_prompt"


# -- resources -------------------------------------------------------------


@server.resource("test://static-text", name="Static text resource", mime_type="text/plain")
def static_text() -> str:
    """A static text resource for testing"""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="Static binary resource", mime_type="image/png")
async def static_binary() -> bytes:
    """A static binary resource (a PNG image)"""
    import base64

    return base64.b64decode(PNG_BASE64)


@server.resource("test://watched-resource", name="Watched resource", mime_type="text/plain")
def watched() -> str:
    """A resource that can be subscribed to"""
    return "Watched resource content"


@server.resource(
    "test://template/{id}/data",
    name="Template resource",
    mime_type="application/json",
    completions={"id": ["123", "456", "789"]},
)
def template_data(id: str) -> str:
    """A resource template with an id parameter"""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# -- prompts and completion ------------------------------------------------


@server.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments"""
    return "This is a simple prompt for testing."


WORDS = ("paris", "park", "party", "pasta", "hello", "world")


def complete_word(value: str) -> dict[str, Any]:
    values = [w for w in WORDS if w.startswith(value)]
    return {"values": values, "total": len(values), "hasMore": False}


@server.prompt(completions={"arg1": complete_word, "arg2": complete_word})
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with required arguments

    Args:
        arg1: First test argument
        arg2: Second test argument
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[dict[str, Any]]:
    """A prompt that embeds a resource

    Args:
        resourceUri: URI of the resource to embed
    """
    resource = {"uri": resourceUri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}
    return [
        {"role": "user", "content": {"type": "resource", "resource": resource}},
        {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}},
    ]


@server.prompt
async def test_prompt_with_image() -> list[dict[str, Any]]:
    """A prompt that includes an image"""
    return [
        {"role": "user", "content": {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}},
        {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}},
    ]


@server.prompt
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that asks for context first"""
    answer = await ctx.elicit("What context should the prompt use?", {"context": str}, key="user_context")
    return f"Prompt with context: {(answer.content or {}).get('context', '')}"


# -- the tasks extension's fixtures (SEP-2663; the suite's tasks-* scenarios) --


@server.tool
def greet(name: str) -> str:
    """Says hello (never a task)"""
    return f"Hello, {name}!"


@server.tool(task=True)
async def slow_compute(seconds: float = 1.0, label: str = "job") -> str:
    """Sleeps `seconds` seconds, then answers (a task when the client can take one)"""
    await asyncio.sleep(max(0.0, min(seconds, 3600.0)))
    return f"Computed {label} after {seconds} s"


@server.tool(task="required")
def failing_job() -> str:
    """Fails as a tool after about a second (only as a task)"""
    time.sleep(1)
    raise RuntimeError("The job failed: the input could not be processed")


@server.tool(task=True)
async def protocol_error_job() -> str:
    """Ends with a JSON-RPC error (a failed task)"""
    await asyncio.sleep(0.1)
    raise ferromcp.McpError("The job hit an internal error")


@server.tool(task=True)
def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks the user to confirm, then deletes (pretend)"""
    answer = ctx.elicit(f"Delete {filename}?", {"confirm": bool})
    return f"Deleted {filename}" if answer.accepted else f"Kept {filename}"


@server.tool(task=True)
async def multi_input(ctx: Context) -> str:
    """Asks two questions at once, then answers with both"""
    # A JSON Schema with nothing required: the suite answers with fields of its own.
    schema = {"type": "object", "properties": {"value": {"type": "string"}}}
    first, second = await asyncio.gather(ctx.elicit("First value?", schema), ctx.elicit("Second value?", schema))
    return f"Got {first.content} and {second.content}"


@server.tool(task="required", task_start="handler")
async def test_tool_with_task(ctx: Context) -> str:
    """Asks for a name (multi round-trip), then finishes as a task"""
    answer = await ctx.elicit("What is your name?", {"name": str})
    name = (answer.content or {}).get("name", "stranger")
    await ctx.start_task()
    await asyncio.sleep(0.2)
    return f"Hello, {name}! (finished as a task)"


# The skills extension's fixture (SEP-2640): examples/skills.
server.add_skills(Path(__file__).resolve().parent.parent / "skills")


def main(argv: list[str]) -> int:
    if argv == ["--stdio"]:
        server.run()
    elif len(argv) == 1 and argv[0].isdigit():
        server.run("http", port=int(argv[0]))
    else:
        print("usage: everything_server.py PORT | everything_server.py --stdio", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

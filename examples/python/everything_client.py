"""The conformance fixture client, in Python: ``everything_client.py URL``.

The official suite names the scenario in ``MCP_CONFORMANCE_SCENARIO``, the
wire revision in ``MCP_CONFORMANCE_PROTOCOL_VERSION`` and scenario data in
``MCP_CONFORMANCE_CONTEXT`` (JSON); the URL is the last argument. The same
contract as ``examples/rust/src/bin/everything-client.rs``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import ferromcp
from ferromcp.client import LEGACY_PROTOCOL_VERSIONS
from ferromcp.client_types import Tool
from ferromcp.oauth import headless_authorize


def placeholder(prop: dict[str, Any]) -> Any:
    """A plausible value of a property's type (its first enum value if any)."""
    options = prop.get("enum")
    if isinstance(options, list) and options:
        return options[0]
    return {"integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}.get(
        str(prop.get("type")), "test"
    )


def fill_from_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Fills a form: each field's default, else a placeholder (the suite
    checks that defaults are applied)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {name: prop.get("default", placeholder(prop)) for name, prop in properties.items()}


def arguments_for(tool: Tool) -> dict[str, Any]:
    """Every required argument of a tool, from its default or a placeholder."""
    required = tool.input_schema.get("required") or []
    return {k: v for k, v in fill_from_schema(tool.input_schema).items() if k in required}


async def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": fill_from_schema(params.get("requestedSchema") or {})}


def on_sampling(params: dict[str, Any]) -> dict[str, Any]:
    asked = params["messages"][0]["content"].get("text", "")
    return {
        "role": "assistant",
        "content": {"type": "text", "text": f"Answer to: {asked}"},
        "model": "ferromcp-conformance-model",
        "stopReason": "endTurn",
    }


def on_roots(_params: dict[str, Any]) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}


async def call_each_listed_tool(client: ferromcp.Client) -> None:
    async for tool in client.list_tools():
        result = await client.call_tool(tool.name, arguments_for(tool))
        print(f"called {tool.name}: isError={result.is_error}", file=sys.stderr)


# The client ID metadata document URL the suite's authorization server
# accepts as a `client_id` (it never fetches it).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def need(context: dict[str, Any], key: str) -> str:
    value = context.get(key)
    if not isinstance(value, str):
        raise RuntimeError(f"no {key} in the context")
    return value


def oauth_for(scenario: str, context: dict[str, Any]) -> ferromcp.OAuth | None:
    """OAuth for the ``auth/*`` scenarios, as the Rust fixture does. The
    suite's mock authorization server approves at once, so the "user
    interaction" requests the authorization URL without following the
    redirect and hands back its ``Location``; pre-registered credentials
    and the extension scenarios' keys come from the scenario's context."""
    if scenario == "auth/client-credentials-basic":
        return ferromcp.OAuth.client_credentials(need(context, "client_id"), context.get("client_secret"))
    if scenario == "auth/client-credentials-jwt":
        return ferromcp.OAuth.client_credentials_jwt(need(context, "client_id"), need(context, "private_key_pem"))
    if scenario == "auth/wif-jwt-bearer":
        jwt = need(context, "valid_jwt")
        return ferromcp.OAuth.jwt_bearer(need(context, "client_id"), lambda _request: jwt)
    if scenario == "auth/enterprise-managed-authorization":
        return ferromcp.OAuth.enterprise_managed(
            need(context, "client_id"),
            need(context, "client_secret"),
            idp_token_endpoint=need(context, "idp_token_endpoint"),
            idp_client_id=need(context, "idp_client_id"),
            id_token=need(context, "idp_id_token"),
        )
    if scenario.startswith("auth/"):
        return ferromcp.OAuth(
            "http://localhost:3000/callback",
            headless_authorize,
            client_id=context.get("client_id"),
            client_secret=context.get("client_secret"),
            issuer=context.get("issuer"),
            client_name="ferromcp-everything-client-python",
            client_metadata_url=CLIENT_METADATA_URL,
            # The DPoP extension scenarios: ask for key-bound tokens.
            dpop=scenario.startswith("auth/dpop"),
        )
    return None


async def run(scenario: str, url: str, version: str, context: Any) -> None:
    # The suite names the wire: the initialize era, or a stateless revision.
    legacy = version in LEGACY_PROTOCOL_VERSIONS
    client = ferromcp.Client.http(
        url,
        name="ferromcp-everything-client-python",
        version=ferromcp.__version__,
        protocol_version=None if legacy else version,
        era="legacy" if legacy else "modern",
        on_elicitation=on_elicitation,
        on_sampling=on_sampling,
        on_roots=on_roots,
        oauth=oauth_for(scenario, context if isinstance(context, dict) else {}),
    )
    async with client:
        if scenario.startswith("auth/"):
            # Every authorization scenario ends the same way once logged
            # in: list the tools and call the first (`test-tool`).
            tools = await client.list_tools()
            if not tools:
                raise RuntimeError("the server lists no tools")
            await client.call_tool(tools[0].name, arguments_for(tools[0]))
        elif scenario in ("initialize", "json-schema-ref-no-deref"):
            await client.list_tools()
        elif scenario == "elicitation-sep1034-client-defaults":
            await client.list_tools()
            await client.call_tool("test_client_elicitation_defaults")
        elif scenario == "sse-retry":
            await client.list_tools()
            await client.call_tool("test_reconnection")
        elif scenario == "tools_call":
            await client.list_tools()
            await client.call_tool("add_numbers", {"a": 5, "b": 3})
        elif scenario == "request-metadata":
            await client.discover()
            await call_each_listed_tool(client)
        elif scenario == "sep-2322-client-request-state":
            await client.list_tools()
            for name in (
                "test_mrtr_echo_state",
                "test_mrtr_no_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_result_type",
            ):
                await client.call_tool(name)
        elif scenario == "http-standard-headers":
            tools = await client.list_tools()
            if tools:
                await client.call_tool(tools[0].name, arguments_for(tools[0]))
            resources = await client.list_resources()
            if resources:
                await client.read_resource(resources[0].uri)
            prompts = await client.list_prompts()
            if prompts:
                await client.get_prompt(prompts[0].name, {a.name: "test" for a in prompts[0].arguments})
        elif scenario == "http-custom-headers":
            await client.list_tools()
            for call in (context or {}).get("toolCalls") or []:
                await client.call_tool(call["name"], call.get("arguments") or {})
        elif scenario == "http-invalid-tool-headers":
            await call_each_listed_tool(client)
        elif scenario == "json-schema-2020-12-preservation":
            focal = next((t for t in await client.list_tools() if t.name == "json_schema_2020_12_tool"), None)
            if focal is None:
                raise RuntimeError("json_schema_2020_12_tool not listed")
            await client.call_tool("json_schema_echo", {"schema": focal.input_schema})
        # The skills extension (SEP-2640): listing reads no file.
        elif scenario == "sep-2640-client-no-prefetch":
            await client.list_skills()
        # Loading checks SKILL.md against the entry (digest, size,
        # frontmatter) and refuses it on a mismatch; only a verified skill's
        # other files are read, each checked too.
        elif scenario in (
            "sep-2640-client-verify-digest",
            "sep-2640-client-verify-size",
            "sep-2640-client-verify-frontmatter",
        ):
            for skill in await client.list_skills():
                loaded = await client.load_skill(skill)
                for file in skill.files or []:
                    if file.uri != skill.uri:
                        await loaded.read(file.uri)
        else:
            raise RuntimeError(f"unknown scenario {scenario!r}")


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: everything_client.py URL (scenario in MCP_CONFORMANCE_SCENARIO)", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", ferromcp.PROTOCOL_VERSION)
    try:
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "null"))
    except json.JSONDecodeError:
        context = None
    try:
        asyncio.run(run(scenario, sys.argv[-1], version, context))
    except Exception as e:  # the suite reads the exit status; stderr says why
        print(f"everything_client.py: scenario {scenario!r} failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Seal keys in Python (issue 29): replicas given the same keys accept each
other's requestState; a key rotation keeps state sealed before it valid; a
server with other keys refuses it; bad keys are refused with the reason."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ferromcp
import pytest
from conftest import TIMEOUT, http_post, params

OLD = "b2xkLXNlY3JldC0yMDI2LTEx"  # base64 of 18 bytes
NEW = "bmV3LXNlY3JldC0yMDI2LTEy"
CAPS = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


def replica(seal_keys: list[str] | None) -> ferromcp.Serving:
    server = ferromcp.Server("replica", seal_keys=seal_keys)

    @server.tool
    def greet(ctx: ferromcp.Context) -> str:
        answer = ctx.elicit("Name?", {"name": str}, key="name")
        return f"Hello, {answer.content['name']}!"

    return server.start("http", port=0)


@pytest.fixture
def replicas() -> Iterator[dict[str, int]]:
    started = {
        "before": replica([OLD]),
        "rotated": replica([NEW, OLD]),
        "after": replica([NEW]),
        "random": replica(None),
    }
    ports = {name: serving.port for name, serving in started.items() if serving.port is not None}
    yield ports
    for serving in started.values():
        serving.stop()
        serving.wait(TIMEOUT)


def first_round(port: int) -> str:
    reply = http_post(port, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params(CAPS, name="greet")})
    assert reply["result"]["resultType"] == "input_required", reply
    state: str = reply["result"]["requestState"]
    return state


def retry(port: int, state: str) -> dict[str, Any]:
    answer = {"name": {"action": "accept", "content": {"name": "Ada"}}}
    call = params(CAPS, name="greet", inputResponses=answer, requestState=state)
    return http_post(port, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})


def test_state_moves_between_replicas_sharing_keys_and_across_a_rotation(replicas: dict[str, int]) -> None:
    sealed_old = first_round(replicas["before"])
    done = retry(replicas["rotated"], sealed_old)
    assert done["result"]["content"][0]["text"] == "Hello, Ada!", done
    sealed_new = first_round(replicas["rotated"])
    done = retry(replicas["after"], sealed_new)
    assert done["result"]["content"][0]["text"] == "Hello, Ada!", done
    # Keys that never sealed it: refused as invalid params.
    assert retry(replicas["before"], sealed_new)["error"]["code"] == -32602
    assert retry(replicas["random"], sealed_old)["error"]["code"] == -32602


def test_bad_keys_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="seal key 1 is 5 bytes"):
        ferromcp.Server("x", seal_keys=["c2hvcnQ="])
    with pytest.raises(ValueError, match="seal key 2 is not base64"):
        ferromcp.Server("x", seal_keys=[NEW, "not base64!"])
    with pytest.raises(ValueError, match="no seal key given"):
        ferromcp.Server("x", seal_keys=[])

"""Behaviour tests for tasks (SEP-2663) and skills (SEP-2640) in Python
(issue 28): a Python server over HTTP, driven by the Python clients.

A task that runs about 3 s reporting progress, one that asks for input and
resumes, one cancelled, one whose result expired; a skills directory with
nested files; and bad input (an unknown task id, a tampered one, an update
of a finished task, skill paths escaping the directory) answered with the
spec's error while the server keeps serving."""

from __future__ import annotations

import asyncio
import hashlib
import os
import pathlib
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import ferromcp
import pytest
from conftest import TIMEOUT

STEPS = 30
STEP_SECONDS = 0.1
PROGRESS = re.compile(r"step \((\d+)/30\)")

# The spec's errors: an invalid or unknown taskId (SEP-2663, "Error
# Handling"), and a resource that does not exist (2026-07-28 resources,
# "Error Handling"): both -32602, Invalid Params.
INVALID_PARAMS = -32602

SECRET = "TOP-SECRET-DO-NOT-SERVE"
REFUNDS_MD = "---\nname: refunds\ndescription: How refunds are approved\n---\n# Refunds\n"
HELLO_MD = "---\nname: hello\ndescription: Greets\n---\n# Hello\n"
EVIL_MD = "---\nname: evil\ndescription: Lives outside\n---\n# Evil\n"
TABLE = b"region,limit\neu,500\nus,750\n"
SCRIPT = b'#!/bin/sh\necho approve "$1"\n'


@dataclass
class Served:
    url: str
    cancelled: threading.Event = field(default_factory=threading.Event)
    # Set once `forever` runs: a task cancelled before its handler's first
    # step never runs it (asyncio throws CancelledError in before the
    # `try`), so there would be no handler to see the cancellation.
    started: threading.Event = field(default_factory=threading.Event)
    steps_seen: list[int] = field(default_factory=list)


@contextmanager
def serving(server: ferromcp.Server) -> Iterator[str]:
    """Serves ``server`` over HTTP, its async handlers on a loop thread."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    served = server.start("http", port=0, event_loop=loop)
    try:
        yield f"http://127.0.0.1:{served.port}/mcp"
    finally:
        served.stop()
        served.wait(TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(TIMEOUT)
        loop.close()


def make_skills(tmp_path: pathlib.Path) -> pathlib.Path:
    """A skills directory: ``hello`` at the top, ``acme/billing/refunds``
    nested three levels deep with files in subfolders, a secret file
    beside the skills and one outside the directory, and symbolic links
    (a file and a whole skill) pointing outside."""
    root = tmp_path / "skills"
    refunds = root / "acme" / "billing" / "refunds"
    (refunds / "references" / "tables").mkdir(parents=True)
    (refunds / "scripts").mkdir()
    (refunds / "SKILL.md").write_text(REFUNDS_MD)
    (refunds / "references" / "tables" / "limits.csv").write_bytes(TABLE)
    (refunds / "scripts" / "approve.sh").write_bytes(SCRIPT)
    (root / "hello").mkdir()
    (root / "hello" / "SKILL.md").write_text(HELLO_MD)
    # Reachable from a skill by "..", but part of no skill.
    (root / "secret.txt").write_text(SECRET)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (outside / "evil").mkdir()
    (outside / "evil" / "SKILL.md").write_text(EVIL_MD)
    os.symlink(outside / "secret.txt", refunds / "references" / "leak.txt")
    os.symlink(outside / "evil", root / "evil")
    return root


@pytest.fixture
def served(tmp_path: pathlib.Path) -> Iterator[Served]:
    server = ferromcp.Server("behaviour", tasks={"poll_interval_ms": 50})
    served = Served("")

    @server.tool(task=True)
    async def render(ctx: ferromcp.Context) -> str:
        """Runs about 3 s, its progress the task's status message."""
        for step in range(1, STEPS + 1):
            await asyncio.sleep(STEP_SECONDS)
            served.steps_seen.append(step)
            ctx.progress(step, STEPS, "step")
        return f"rendered {STEPS} steps"

    @server.tool(task=True)
    async def deploy(env: str, ctx: ferromcp.Context) -> str:
        """Asks before going on."""
        answer = await ctx.elicit(f"Deploy to {env}?", {"ok": bool}, key="confirm")
        if answer.accepted and answer.content["ok"]:
            return f"deployed to {env}"
        return f"kept {env} ({answer.action})"

    @server.tool(task=True)
    async def forever() -> str:
        """Runs until cancelled."""
        try:
            served.started.set()
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            served.cancelled.set()
            raise
        return "never"

    @server.tool(task=True)
    async def quick(n: int) -> str:
        return f"quick {n}"

    @server.tool
    def echo(text: str) -> str:
        return text

    published = server.add_skills(make_skills(tmp_path))
    assert sorted(published) == ["skill://acme/billing/refunds/SKILL.md", "skill://hello/SKILL.md"]
    with serving(server) as url:
        served.url = url
        yield served


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def tamper(task_id: str) -> str:
    """``task_id`` with its last character changed."""
    last = task_id[-1]
    return task_id[:-1] + ("0" if last != "0" else "1")


# -- 1. a long task reporting progress ---------------------------------------


def test_a_3_second_task_reports_progress_while_it_runs(served: Served) -> None:
    started = time.monotonic()
    with ferromcp.SyncClient.http(served.url) as client:
        task = client.start_tool_task("render")
        assert task.id is not None
        assert task.state is not None and task.state.status == "working"
        shown: list[int] = []
        while True:
            state = task.refresh()
            assert state is not None and state.task_id == task.id
            if state.done:
                break
            assert state.status == "working", state
            if state.status_message is not None:
                match = PROGRESS.fullmatch(state.status_message)
                assert match is not None, state.status_message
                shown.append(int(match.group(1)))
            assert time.monotonic() - started < TIMEOUT, state
            time.sleep(0.25)
        result = task.result()
    elapsed = time.monotonic() - started
    assert result.text == f"rendered {STEPS} steps"
    assert state.status == "completed"
    assert elapsed >= STEPS * STEP_SECONDS, elapsed
    # Polled every 0.25 s over 3 s: the count shown only grows, and grows
    # several times (never past what the handler reported).
    assert shown == sorted(shown), shown
    assert len(set(shown)) >= 5, shown
    assert shown[0] >= 1 and shown[-1] <= STEPS, shown
    assert served.steps_seen == list(range(1, STEPS + 1))


# -- 2. a task that asks for input and resumes ---------------------------------


def test_a_question_is_answered_by_the_clients_handler(served: Served) -> None:
    asked: list[dict[str, Any]] = []

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"ok": True}}

    with ferromcp.SyncClient.http(served.url, on_elicitation=on_elicitation) as client:
        assert client.call_tool("deploy", {"env": "prod"}).text == "deployed to prod"
    assert [p["message"] for p in asked] == ["Deploy to prod?"]
    assert asked[0]["requestedSchema"]["properties"]["ok"]["type"] == "boolean"


def test_a_question_is_answered_through_the_task_handle(served: Served) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(served.url, capabilities={"elicitation": {}}) as client:
            task = await client.start_tool_task("deploy", {"env": "staging"})
            assert task.id is not None
            deadline = time.monotonic() + TIMEOUT
            while (state := await task.refresh()) is not None and state.status != "input_required":
                assert not state.done and time.monotonic() < deadline, state
                await asyncio.sleep(0.02)
            assert state is not None
            # The key is the one the handler gave its question.
            assert list(state.input_requests) == ["confirm"]
            request = state.input_requests["confirm"]
            assert request["method"] == "elicitation/create"
            assert request["params"]["message"] == "Deploy to staging?"
            await task.respond({"confirm": {"action": "accept", "content": {"ok": False}}})
            assert (await task.result()).text == "kept staging (accept)"

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))


def test_a_waiting_task_is_resumed_by_id_from_another_client(served: Served) -> None:
    with ferromcp.SyncClient.http(served.url, capabilities={"elicitation": {}}) as first:
        task = first.start_tool_task("deploy", {"env": "eu"})
        assert task.id is not None
        task_id = task.id
        wait_until(lambda: (s := task.refresh()) is not None and s.status == "input_required", "the question")
    with ferromcp.SyncClient.http(served.url, capabilities={"elicitation": {}}) as second:
        resumed = second.tool_task(task_id)
        state = resumed.refresh()
        assert state is not None and state.status == "input_required"
        assert list(state.input_requests) == ["confirm"]
        resumed.respond({"confirm": {"action": "accept", "content": {"ok": True}}})
        assert resumed.result().text == "deployed to eu"
        final = resumed.refresh()
        assert final is not None and final.status == "completed" and final.input_requests == {}


# -- 3. a cancelled task ---------------------------------------------------------


def test_a_cancelled_task_stops_its_handler_and_reports_cancelled(served: Served) -> None:
    with ferromcp.SyncClient.http(served.url) as client:
        task = client.start_tool_task("forever")
        assert task.id is not None
        state = task.refresh()
        assert state is not None and state.status == "working"
        assert not served.cancelled.is_set()
        assert served.started.wait(TIMEOUT), "the handler runs"
        task.cancel()
        assert served.cancelled.wait(TIMEOUT), "the handler saw CancelledError"
        wait_until(lambda: (s := task.refresh()) is not None and s.status == "cancelled", "status cancelled")
        state = task.refresh()
        assert state is not None and state.done and state.result is None
        with pytest.raises(ferromcp.ProtocolError, match="was cancelled"):
            task.result()
        # The server goes on.
        assert client.call_tool("quick", {"n": 1}).text == "quick 1"


def test_cancelling_the_awaiting_asyncio_task_cancels_the_server_task(served: Served) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(served.url) as client:
            task = await client.start_tool_task("forever")
            waiting = asyncio.ensure_future(task.result())
            await asyncio.sleep(0.2)
            assert not waiting.done()
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            deadline = time.monotonic() + TIMEOUT
            while (state := await task.refresh()) is not None and state.status != "cancelled":
                assert not state.done and time.monotonic() < deadline, state
                await asyncio.sleep(0.02)
            assert (await client.call_tool("quick", {"n": 2})).text == "quick 2"

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    assert served.cancelled.wait(TIMEOUT), "the handler saw CancelledError"


# -- 4. an expired result ------------------------------------------------------


def tasks_server(settings: ferromcp.TaskSettings) -> ferromcp.Server:
    server = ferromcp.Server("expiry", tasks=settings)

    @server.tool(task=True)
    async def quick(n: int) -> str:
        return f"quick {n}"

    @server.tool(task=True)
    async def late(ms: int) -> str:
        await asyncio.sleep(ms / 1000)
        return f"late {ms}"

    return server


def test_a_finished_result_expires_after_its_ttl() -> None:
    # Kept until max(created + ttl, finished + keep_finished): 1 s here.
    server = tasks_server({"ttl_ms": 1000, "keep_finished_ms": 0, "poll_interval_ms": 20})
    with serving(server) as url, ferromcp.SyncClient.http(url) as client:
        created = time.monotonic()
        task = client.start_tool_task("quick", {"n": 7})
        assert task.id is not None
        assert task.result().text == "quick 7"
        state = task.refresh()
        assert time.monotonic() - created < 1.0, "too slow to see the task before it expired"
        assert state is not None and state.status == "completed" and state.ttl_ms == 1000
        assert state.result is not None and state.result.text == "quick 7"
        time.sleep(max(0.0, created + 1.3 - time.monotonic()))
        with pytest.raises(ferromcp.InvalidParamsError) as expired:
            task.refresh()
        assert expired.value.code == INVALID_PARAMS
        with pytest.raises(ferromcp.InvalidParamsError):
            client.tool_task(task.id).result()
        # Expiry removes that task only: the server goes on.
        assert client.call_tool("quick", {"n": 8}).text == "quick 8"


def test_a_task_finishing_late_stays_readable_keep_finished_longer() -> None:
    # ttl 200 ms, but it finishes at about 400 ms: kept until 400 + 1000 ms.
    server = tasks_server({"ttl_ms": 200, "keep_finished_ms": 1000, "poll_interval_ms": 20})
    with serving(server) as url, ferromcp.SyncClient.http(url) as client:
        created = time.monotonic()
        task = client.start_tool_task("late", {"ms": 400})
        assert task.result().text == "late 400"
        finished = time.monotonic()
        state = task.refresh()
        assert state is not None and state.status == "completed"
        kept_ms = state.ttl_ms
        assert kept_ms is not None and kept_ms >= 1400, kept_ms
        # Past created + ttl, within finished + keep_finished: still there.
        time.sleep(0.2)
        assert time.monotonic() - created > 0.2 and time.monotonic() < finished + 0.9, "too slow to check"
        state = task.refresh()
        assert state is not None and state.status == "completed"
        assert state.result is not None and state.result.text == "late 400"
        time.sleep(max(0.0, created + kept_ms / 1000 + 0.3 - time.monotonic()))
        with pytest.raises(ferromcp.InvalidParamsError) as expired:
            task.refresh()
        assert expired.value.code == INVALID_PARAMS


# -- 5. a skills directory with nested files ------------------------------------


def test_nested_skills_are_listed_loaded_and_read(served: Served, tmp_path: pathlib.Path) -> None:
    refunds_dir = tmp_path / "skills" / "acme" / "billing" / "refunds"
    with ferromcp.SyncClient.http(served.url) as client:
        skills = {s.uri: s for s in client.list_skills()}
        # The symlinked "evil" skill outside the directory is not published.
        assert sorted(skills) == ["skill://acme/billing/refunds/SKILL.md", "skill://hello/SKILL.md"]
        refunds = skills["skill://acme/billing/refunds/SKILL.md"]
        assert (refunds.name, refunds.description) == ("refunds", "How refunds are approved")
        assert refunds.files is not None
        expected = {
            "skill://acme/billing/refunds/SKILL.md": refunds_dir / "SKILL.md",
            "skill://acme/billing/refunds/references/tables/limits.csv": refunds_dir / "references/tables/limits.csv",
            "skill://acme/billing/refunds/scripts/approve.sh": refunds_dir / "scripts/approve.sh",
        }
        # Every file, with the sha256 of its bytes and its size; the
        # symlinked leak.txt is not among them.
        assert {f.uri for f in refunds.files} == set(expected)
        for f in refunds.files:
            data = expected[f.uri].read_bytes()
            assert f.digest == "sha256:" + hashlib.sha256(data).hexdigest(), f
            assert f.size == len(data), f
        assert client.get_skill(refunds.uri) == refunds

        loaded = client.load_skill(refunds)
        assert loaded.skill_md == REFUNDS_MD
        assert loaded.read("references/tables/limits.csv") == TABLE
        assert loaded.read("skill://acme/billing/refunds/scripts/approve.sh") == SCRIPT
        hello = client.load_skill("skill://hello/SKILL.md")
        assert hello.skill_md == HELLO_MD

    async def main() -> None:
        async with ferromcp.Client.http(served.url) as client:
            loaded = await client.load_skill("skill://acme/billing/refunds/SKILL.md")
            assert await loaded.read("references/tables/limits.csv") == TABLE

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))


# -- 6. bad input: the spec's error, and the server keeps serving ----------------

ESCAPES = [
    "skill://../../etc/passwd",
    "skill://hello/../../etc/passwd",
    "skill://acme/billing/refunds/../../../../../../etc/passwd",
    "skill://acme/billing/refunds/SKILL.md/../../../../../etc/passwd",
    "skill://%2e%2e/%2e%2e/etc/passwd",
    "skill://hello/%2e%2e/secret.txt",
    "skill://hello/../secret.txt",  # a real file beside the skills
    "skill://hello/../../outside/secret.txt",  # a real file outside them
    "skill://secret.txt",
    "skill://acme/billing/refunds/references/leak.txt",  # a symlink out
    "skill://evil/SKILL.md",  # a symlinked skill
    "file:///etc/passwd",
]


def assert_not_found(error: ferromcp.McpError) -> None:
    assert error.code == INVALID_PARAMS, error
    assert SECRET not in str(error) and "root:" not in str(error), error


def check_bad_task_ids_sync(client: ferromcp.SyncClient) -> None:
    real = client.start_tool_task("quick", {"n": 1})
    assert real.id is not None
    assert real.result().text == "quick 1"
    answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
    for bad_id in ["nope", tamper(real.id), real.id[:-1], real.id + "0", ""]:
        assert bad_id != real.id
        bad = client.tool_task(bad_id)
        with pytest.raises(ferromcp.InvalidParamsError) as get:
            bad.refresh()
        assert get.value.code == INVALID_PARAMS
        with pytest.raises(ferromcp.InvalidParamsError) as update:
            bad.respond(answer)
        assert update.value.code == INVALID_PARAMS
        with pytest.raises(ferromcp.InvalidParamsError) as cancel:
            bad.cancel()
        assert cancel.value.code == INVALID_PARAMS
        assert client.call_tool("echo", {"text": "still here"}).text == "still here"
    # Answers to a finished task, and cancelling it, are acknowledged and
    # change nothing.
    before = real.refresh()
    assert before is not None and before.status == "completed"
    assert real.respond(answer) is None
    assert real.cancel() is None
    after = real.refresh()
    assert after is not None
    assert (after.status, after.result, after.input_requests) == ("completed", before.result, {})
    assert after.result is not None and after.result.text == "quick 1"
    assert client.call_tool("quick", {"n": 2}).text == "quick 2"


def check_escapes_sync(client: ferromcp.SyncClient) -> None:
    for uri in ESCAPES:
        with pytest.raises(ferromcp.InvalidParamsError) as read:
            client.read_resource(uri)
        assert_not_found(read.value)
        with pytest.raises(ferromcp.InvalidParamsError) as get:
            client.get_skill(uri)
        assert_not_found(get.value)
        with pytest.raises(ferromcp.InvalidParamsError) as load:
            client.load_skill(uri)
        assert_not_found(load.value)
        assert client.call_tool("echo", {"text": uri}).text == uri
    # A loaded skill refuses paths its entry does not list, unread.
    loaded = client.load_skill("skill://hello/SKILL.md")
    for path in ["../secret.txt", "../../outside/secret.txt", "../../../../etc/passwd"]:
        with pytest.raises(ferromcp.ProtocolError):
            loaded.read(path)
    assert client.read_resource("skill://hello/SKILL.md").text == HELLO_MD


def test_bad_input_gets_the_spec_error_sync_client(served: Served) -> None:
    with ferromcp.SyncClient.http(served.url) as client:
        check_bad_task_ids_sync(client)
        check_escapes_sync(client)
        assert client.call_tool("echo", {"text": "done"}).text == "done"


def test_bad_input_gets_the_spec_error_async_client(served: Served) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(served.url) as client:
            real = await client.start_tool_task("quick", {"n": 3})
            assert real.id is not None
            assert (await real.result()).text == "quick 3"
            answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
            for bad_id in ["nope", tamper(real.id)]:
                bad = client.tool_task(bad_id)
                for call in (bad.refresh(), bad.respond(answer), bad.cancel(), bad.result()):
                    with pytest.raises(ferromcp.InvalidParamsError) as error:
                        await call
                    assert error.value.code == INVALID_PARAMS
                assert (await client.call_tool("echo", {"text": bad_id})).text == bad_id
            before = await real.refresh()
            await real.respond(answer)
            await real.cancel()
            after = await real.refresh()
            assert before is not None and after is not None
            assert (after.status, after.result) == ("completed", before.result)
            for uri in ESCAPES:
                with pytest.raises(ferromcp.InvalidParamsError) as read:
                    await client.read_resource(uri)
                assert_not_found(read.value)
                with pytest.raises(ferromcp.InvalidParamsError) as load:
                    await client.load_skill(uri)
                assert_not_found(load.value)
            assert (await client.call_tool("quick", {"n": 4})).text == "quick 4"
            assert len(await client.list_skills()) == 2

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))

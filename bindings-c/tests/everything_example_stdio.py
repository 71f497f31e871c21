"""Drives the C conformance fixture (examples/c/everything_server.c) over
stdio, optionally under valgrind: a 2026-07-28 input_required round and its
retry, several asks in one round, completion, a template read, a missing
capability passed on as -32021, a failing tool followed by a working one,
and a clean exit at EOF. (The conformance suite covers the rest over HTTP;
this runs the example under valgrind, as every C example must.)

Usage: python3 everything_example_stdio.py path/to/everything-server-c
C_VALGRIND, if set, is the command prefix to run it under.
"""

import json
import os
import shlex
import subprocess
import sys
import threading

CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}
TIMEOUT_S = 120  # valgrind is slow


def meta(caps):
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    }


def main(binary):
    prefix = shlex.split(os.environ.get("C_VALGRIND", ""))
    proc = subprocess.Popen(
        [*prefix, binary, "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,  # inherited: valgrind reports land in the test log
    )
    next_id = [0]

    def request(method, params, caps=CAPS, **top):
        next_id[0] += 1
        message = {
            "jsonrpc": "2.0",
            "id": next_id[0],
            "method": method,
            "params": dict(params, _meta=meta(caps), **top),
        }
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        line = {}
        reader = threading.Thread(target=lambda: line.update(v=proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(TIMEOUT_S)
        if not line.get("v"):
            proc.kill()
            raise AssertionError(f"no reply to {method}")
        reply = json.loads(line["v"])  # stdout carries only JSON-RPC
        assert reply["id"] == next_id[0], reply
        return reply

    call = {"name": "test_input_required_result_elicitation", "arguments": {}}
    first = request("tools/call", call)["result"]
    assert first["resultType"] == "input_required", first
    assert first["inputRequests"]["user_name"]["method"] == "elicitation/create", first
    # The retry carries the answer and the sealed state: the same callback
    # now gets the answer instead of FERROMCP_INPUT_REQUIRED.
    answer = {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
    done = request("tools/call", call, inputResponses=answer, requestState=first["requestState"])
    assert done["result"]["content"][0]["text"] == "Hello, Alice!", done
    tampered = request("tools/call", call, inputResponses=answer, requestState=first["requestState"] + "x")
    assert "error" in tampered, tampered

    several = request("tools/call", {"name": "test_input_required_result_multiple_inputs", "arguments": {}})["result"]
    assert sorted(several["inputRequests"]) == ["client_roots", "greeting", "user_name"], several
    completion = request(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "par"},
        },
    )
    assert completion["result"]["completion"]["values"] == ["paris", "park", "party"], completion
    read = request("resources/read", {"uri": "test://template/123/data"})
    assert '"id": "123"' in read["result"]["contents"][0]["text"], read
    missing = request("tools/call", {"name": "test_missing_capability", "arguments": {}}, caps={})
    assert missing["error"]["code"] == -32021, missing
    assert missing["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}, missing
    failed = request("tools/call", {"name": "test_error_handling", "arguments": {}})
    assert failed["result"]["isError"] is True, failed
    simple = request("tools/call", {"name": "test_simple_text", "arguments": {}})
    assert simple["result"]["content"][0]["text"].startswith("This is a simple"), simple

    proc.stdin.close()
    try:
        status = proc.wait(TIMEOUT_S)
    except subprocess.TimeoutExpired as timeout:
        proc.kill()
        raise AssertionError("the server did not exit at end of input") from timeout
    assert status == 0, f"exit status {status}"
    print("everything_example_stdio: all checks passed", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])

"""Drives the C example (examples/c/echo_server.c) over stdio, optionally
under valgrind, and checks the walking-skeleton behaviour: tools/list, echo,
add, a failing call followed by a successful one, and a clean exit at EOF.

Usage: python3 echo_example_stdio.py path/to/echo-server-c
The environment variable C_VALGRIND, if set, is the command prefix to run it
under (e.g. "valgrind --leak-check=full --error-exitcode=1").
"""

import json
import os
import shlex
import subprocess
import sys
import threading

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
# valgrind makes startup and every call much slower than native.
TIMEOUT_S = 60


class Server:
    def __init__(self, command):
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # inherited: valgrind reports land in the test log
        )
        self.next_id = 0

    def request(self, method, params=None):
        self.next_id += 1
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": method,
            "params": dict(params or {}, _meta=META),
        }
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        line = self._read_line()
        reply = json.loads(line)  # stdout must carry only JSON-RPC
        assert reply.get("id") == self.next_id, reply
        return reply

    def _read_line(self):
        result = {}

        def read():
            result["line"] = self.proc.stdout.readline()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(TIMEOUT_S)
        if reader.is_alive() or not result.get("line"):
            self.proc.kill()
            raise AssertionError("no reply from the server")
        return result["line"]

    def call(self, name, arguments):
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        assert "result" in reply, reply
        return reply["result"]

    def close(self):
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        code = self.proc.wait(TIMEOUT_S)
        assert rest == b"", f"unexpected output after the last reply: {rest!r}"
        return code


def text_of(result):
    return [block["text"] for block in result["content"] if block["type"] == "text"]


def main():
    command = shlex.split(os.environ.get("C_VALGRIND", "")) + [sys.argv[1]]
    server = Server(command)

    tools = server.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["echo", "add"], tools
    assert tools[0]["description"] == "Returns the text unchanged."
    assert tools[0]["inputSchema"]["required"] == ["text"]
    assert tools[1]["description"] == "Adds two integers."
    assert tools[1]["outputSchema"]["properties"] == {"result": {"type": "integer"}}

    result = server.call("echo", {"text": "hello"})
    assert text_of(result) == ["hello"] and not result.get("isError"), result

    tricky = 'quote " backslash \\ unicode \u00e9\u4e16 newline \n tab \t'
    result = server.call("echo", {"text": tricky})
    assert text_of(result) == [tricky], result

    result = server.call("add", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"result": 5}, result
    assert text_of(result) == ["5"], result

    result = server.call("add", {"a": -7, "b": 3})
    assert result["structuredContent"] == {"result": -4}, result

    # A handler error is a result with isError, and the server keeps serving.
    result = server.call("add", {"a": 9223372036854775807, "b": 1})
    assert result.get("isError") is True, result
    assert text_of(result) == ["the sum does not fit in 64 bits"], result

    # Arguments that break the schema never reach the C code.
    reply = server.request("tools/call", {"name": "add", "arguments": {"a": "x", "b": 1}})
    assert "error" in reply or reply["result"].get("isError") is True, reply

    result = server.call("echo", {"text": "still alive"})
    assert text_of(result) == ["still alive"], result

    code = server.close()
    assert code == 0, f"exit code {code}"
    print("echo_example_stdio: all checks passed")


if __name__ == "__main__":
    main()

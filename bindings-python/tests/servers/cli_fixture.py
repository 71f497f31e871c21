"""A server file for `ferromcp run` (tests/test_cli.py): a module-level
`ferromcp.Server` named `mcp`, one of the names `run` looks for, with the
tool `greet`. test_cli.py edits a copy of it to check `run --reload`.

It prints while it is imported: under `ferromcp run` on stdio that must go
to stderr, not into the protocol on stdout.
"""

from __future__ import annotations

import ferromcp

print("cli_fixture: imported")

ANSWER = "v1"

mcp = ferromcp.Server("cli-fixture", version="1.0.0")


@mcp.tool
def greet(name: str) -> str:
    """Greets `name`, saying which version of this file answers."""
    return f"hello {name} ({ANSWER})"


if __name__ == "__main__":
    raise SystemExit("serve me with `ferromcp run`")

"""The Python client of the OpenID provider test (core/tests/oidc_provider.rs):
logs in to a protected ferromcp server with ``ferromcp.OAuth``, calls a tool
and prints its result as JSON on stdout.

Environment (set by the test): OIDC_SERVER (the MCP server URL), OIDC_CA
(the test CA, PEM file: the provider is reached over TLS), OIDC_GRANT
(``code`` or ``client-credentials``), OIDC_CLIENT_ID, OIDC_CLIENT_SECRET
(client credentials), OIDC_ISSUER and OIDC_REDIRECT (authorization code),
OIDC_TOOL (default ``whoami``). For the authorization code grant the
authorize callback hands the URL to ``tests/oidc/browser.sh``, the test's
browser, and returns the redirect it prints.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import ferromcp

BROWSER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "browser.sh")


def browse(url: str) -> str:
    # Blocks: the core calls authorize on a thread of its own.
    done = subprocess.run([BROWSER, url], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"browser.sh failed: {done.stderr.strip()}")
    return done.stdout.strip()


def oauth() -> ferromcp.OAuth:
    grant = os.environ["OIDC_GRANT"]
    if grant == "client-credentials":
        return ferromcp.OAuth.client_credentials(os.environ["OIDC_CLIENT_ID"], os.environ.get("OIDC_CLIENT_SECRET"))
    if grant == "code":
        return ferromcp.OAuth(
            os.environ["OIDC_REDIRECT"],
            browse,
            client_id=os.environ["OIDC_CLIENT_ID"],
            issuer=os.environ.get("OIDC_ISSUER"),
        )
    raise SystemExit(f"unknown OIDC_GRANT {grant!r}")


def main() -> None:
    with ferromcp.SyncClient.http(
        os.environ["OIDC_SERVER"], ca_certs=[os.environ["OIDC_CA"]], oauth=oauth(), timeout=30
    ) as client:
        result = client.call_tool(os.environ.get("OIDC_TOOL", "whoami"))
    json.dump(result.raw, sys.stdout)
    print()


if __name__ == "__main__":
    main()

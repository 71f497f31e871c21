"""The Python server serving ``https://`` itself (``tls=`` of
``Server.start``/``run``/``serve``): certificates made at test time by the
``openssl`` command (``make_pki`` of test_client_tls), the ferromcp client
trusting the test CA; bad files refuse to start, with the file named."""

from __future__ import annotations

import shutil
from pathlib import Path

import ferromcp
import pytest
from ferromcp.errors import TransportError
from test_client_tls import make_pki

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def test_the_server_serves_https_with_its_own_certificate(tmp_path: Path) -> None:
    make_pki(tmp_path)
    server = ferromcp.Server("tls-server")
    server.tool(name="hello")(lambda: "hi over tls")
    tls: ferromcp.ServerTls = {"cert_file": str(tmp_path / "server.pem"), "key_file": str(tmp_path / "server.key")}
    serving = server.start("http", port=0, tls=tls)
    try:
        url = f"https://localhost:{serving.port}/mcp"
        with ferromcp.SyncClient.http(url, ca_certs=[tmp_path / "ca.pem"], timeout=10) as client:
            assert client.call_tool("hello").text == "hi over tls"
        # Plain HTTP to the TLS port gets no MCP answer.
        with pytest.raises(ferromcp.McpError), ferromcp.SyncClient.http(url.replace("https", "http"), timeout=5) as c:
            c.call_tool("hello")
    finally:
        serving.stop()
        serving.wait(10)


def test_bad_tls_settings_and_files_are_refused(tmp_path: Path) -> None:
    make_pki(tmp_path)
    server = ferromcp.Server("tls-server")
    with pytest.raises(ValueError, match='"key_file" is required'):
        server.start("http", port=0, tls={"cert_file": str(tmp_path / "server.pem")})
    with pytest.raises(TransportError, match=r"nowhere\.pem"):
        server.start("http", port=0, tls={"cert_file": "/nowhere.pem", "key_file": str(tmp_path / "server.key")})

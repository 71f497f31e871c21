"""The Python client over ``https://``: a ferromcp server behind a TLS
terminator (Python's ``ssl``) with a CA and server certificate made at test
time by the ``openssl`` command; trusted through ``ca_certs=`` (a path or PEM
text), refused with a clear ``TransportError`` naming the host without it."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from pathlib import Path

import ferromcp
import pytest
from ferromcp.errors import TransportError

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def make_pki(dir: Path) -> None:
    """ca.pem/ca.key, and server.pem/server.key for localhost and 127.0.0.1."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=dir, check=True, capture_output=True)

    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=ferromcp python test CA",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    (dir / "ext.cnf").write_text(
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n"
    )
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")  # fmt: skip


async def tls_terminator(certs: Path, backend_port: int) -> asyncio.Server:
    """Accepts TLS on a loopback port and pipes the plaintext to the backend."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certs / "server.pem", certs / "server.key")

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while chunk := await reader.read(65536):
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", backend_port)
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    return await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)


def test_https_with_a_private_ca(tmp_path: Path) -> None:
    make_pki(tmp_path)
    server = ferromcp.Server("tls-demo")
    server.tool(name="hello")(lambda: "hi over tls")
    serving = server.start("http", port=0)

    async def main() -> None:
        terminator = await tls_terminator(tmp_path, serving.port)
        port = terminator.sockets[0].getsockname()[1]
        url = f"https://localhost:{port}/mcp"
        try:
            ca = tmp_path / "ca.pem"
            for source in (ca, str(ca), ca.read_text()):
                async with ferromcp.Client.http(url, ca_certs=[source], timeout=10) as client:
                    assert (await client.call_tool("hello")).text == "hi over tls"
            with pytest.raises(TransportError) as refused:
                async with ferromcp.Client.http(url, tls_roots="webpki", timeout=10) as client:
                    await client.call_tool("hello")
            message = str(refused.value)
            assert f"localhost:{port}" in message, message
            assert "unknown certificate authority" in message, message
            assert refused.value.kind == "http"
            with pytest.raises(ValueError):
                await ferromcp.Client.http(url, tls_roots="bogus")  # type: ignore[arg-type]
        finally:
            terminator.close()

    try:
        asyncio.run(main())
    finally:
        serving.stop()
        serving.wait(10)

"""A protected MCP endpoint and its authorization server, for test_oauth.c.

One loopback listener, routed by path, like the in-process mocks of
core/tests/client_oauth.rs and bindings-node/test/client-oauth.test.mjs:
/mcp answers 401 + resource_metadata without a token it issued; the
authorization server checks PKCE at the code exchange, the client secret of
client_credentials (Basic or post) and the assertion of jwt-bearer, so a
client that gets through did each step right. Prints its port and process
id, then serves until the test ends it (SIGTERM).
"""

import base64
import hashlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

CLIENTS = {"registered": "s3cret", "svc": "pw"}
ASSERTION = "platform.jwt.value"
state = {"challenge": None, "issued": 0, "tokens": set()}
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_json(self, status, value, headers=()):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        for name, val in headers:
            self.send_header(name, val)
        self.end_headers()
        self.wfile.write(body)

    def base(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def do_GET(self):
        url = urlparse(self.path)
        base = self.base()
        if url.path == "/.well-known/oauth-protected-resource/mcp":
            return self.send_json(200, {"resource": f"{base}/mcp", "authorization_servers": [base],
                                        "scopes_supported": ["read"]})
        if url.path == "/.well-known/oauth-authorization-server":
            return self.send_json(200, {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "registration_endpoint": f"{base}/register",
                "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials",
                                          "urn:ietf:params:oauth:grant-type:jwt-bearer"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "authorization_response_iss_parameter_supported": True,
            })
        if url.path == "/authorize":
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            with lock:
                state["challenge"] = q.get("code_challenge")
            back = q["redirect_uri"] + "?" + urlencode({"code": "the-code", "state": q["state"], "iss": base})
            self.send_response(302)
            self.send_header("location", back)
            self.send_header("content-length", "0")
            self.end_headers()
            return None
        return self.send_json(404, {})

    def do_POST(self):
        url = urlparse(self.path)
        text = self.rfile.read(int(self.headers.get("content-length") or 0)).decode()
        if url.path == "/register":
            return self.send_json(201, {"client_id": "registered", "client_secret": "s3cret"})
        if url.path == "/token":
            form = {k: v[0] for k, v in parse_qs(text).items()}
            client_id, secret = form.get("client_id"), form.get("client_secret")
            auth = self.headers.get("authorization", "")
            if auth.startswith("Basic "):
                client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
            grant = form.get("grant_type")
            refuse = lambda error: self.send_json(400, {"error": error})  # noqa: E731
            if grant == "authorization_code":
                verifier = form.get("code_verifier", "").encode()
                expected = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=").decode()
                if expected != state["challenge"]:
                    return refuse("invalid_grant")
            elif grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
                if form.get("assertion") != ASSERTION:
                    return refuse("invalid_grant")
            elif grant != "client_credentials":
                return refuse("unsupported_grant_type")
            if client_id is not None and secret is not None and CLIENTS.get(client_id) != secret:
                return self.send_json(401, {"error": "invalid_client"})
            if grant == "client_credentials" and secret is None:
                return self.send_json(401, {"error": "invalid_client"})
            with lock:
                state["issued"] += 1
                token = f"token-{state['issued']}"
                state["tokens"].add(token)
            return self.send_json(200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600,
                                        "refresh_token": f"refresh-{state['issued']}"})
        if url.path == "/mcp":
            auth = self.headers.get("authorization", "")
            token = auth[7:] if auth.startswith("Bearer ") else None
            if token not in state["tokens"]:
                prm = f"{self.base()}/.well-known/oauth-protected-resource/mcp"
                return self.send_json(401, {"error": "invalid_token"},
                                      [("www-authenticate", f'Bearer resource_metadata="{prm}"')])
            message = json.loads(text)
            if message.get("method") == "tools/list":
                result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
            else:
                result = {"content": [{"type": "text", "text": f"ok with {token}"}]}
            return self.send_json(200, {"jsonrpc": "2.0", "id": message.get("id"), "result": result})
        return self.send_json(404, {})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], os.getpid(), flush=True)
server.serve_forever()

"""A scripted remote MCP server for tests/mcp_client.rs, written with the
official MCP Python SDK (`mcp`, MIT) over Streamable HTTP.

Tools: `sub(a, b)` (a - b, as text), `echo(text)`, and `fail(reason)`, which
always answers `isError` with the reason. Listens on 127.0.0.1 on a free
port (or the one given with `--port N`) and prints one line, `URL http://127.0.0.1:PORT/mcp`, once it accepts
connections. `--json` answers every POST with one JSON body; without it the
SDK answers with an SSE stream (text/event-stream), so both response kinds
the client accepts are exercised.

`--modern-only` serves only the stateless revision 2026-07-28, as a server
written for it alone would: the SDK serves both eras and has no switch for
that, so an ASGI wrapper answers what would reach its handshake path (no
`MCP-Protocol-Version` header, or a handshake revision: `initialize`
among them) with 400 and -32022 naming 2026-07-28, and GET/DELETE with
405. `--sse-soon` makes the SDK's 2026-07-28 path commit to an SSE stream
after 50 ms (its keep-alive interval, 15 s by default) and adds `slow`, a
tool that takes 0.3 s: its answer then comes as `: ping` comments and an
event, not as one JSON body.

`--allow-host HOST:PORT` (repeatable) adds a Host header value the SDK's
DNS-rebinding guard accepts, besides its loopback defaults. The
real-firmware check needs it: the board reaches this server through a QEMU
guestfwd and names the guest-side address in its Host header (for example
`10.0.2.101:8000`), which the guard would refuse. The guard stays on.
"""

import asyncio
import json
import logging
import socket
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings

server = MCPServer("scripted-remote", version="1.0")


@server.tool()
def sub(a: float, b: float) -> str:
    """Subtract b from a."""
    result = a - b
    if result == int(result):
        result = int(result)
    return f"{a:g} - {b:g} = {result}"


@server.tool()
def echo(text: str) -> str:
    """Repeat the text."""
    return f"echo: {text}"


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the given reason."""
    # ToolError: the SDK passes its message on as the isError text.
    raise ToolError(f"refused: {reason}")


HANDSHAKE_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def modern_only(app):
    """`app` with everything that would reach the SDK's handshake path refused."""
    async def wrapped(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        version = headers.get("mcp-protocol-version")
        if scope["method"] in ("GET", "DELETE"):
            await send({"type": "http.response.start", "status": 405, "headers": [(b"allow", b"POST")]})
            return await send({"type": "http.response.body", "body": b""})
        if version is not None and version not in HANDSHAKE_REVISIONS:
            # 2026-07-28, or a revision the SDK names as unknown (-32022).
            return await app(scope, receive, send)
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            request_id = json.loads(body).get("id")
        except (ValueError, AttributeError):
            request_id = None
        error = {"jsonrpc": "2.0", "id": request_id, "error": {
            "code": -32022, "message": "Unsupported protocol version (this server speaks only 2026-07-28)",
            "data": {"supported": ["2026-07-28"], "requested": version or ""}}}
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(error).encode()})
    return wrapped


def main() -> None:
    # The SDK logs every session at INFO; the test's output needs none of it.
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("mcp").setLevel(logging.WARNING)
    args = sys.argv[1:]
    json_response = "--json" in args
    port = int(args[args.index("--port") + 1]) if "--port" in args else 0
    extra_hosts = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--allow-host"]
    security = None  # the SDK's own loopback-only guard
    if extra_hosts:
        # The SDK's loopback defaults plus the given hosts: still a guard,
        # only wider by exactly these values.
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"] + extra_hosts,
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
            + ["http://" + h for h in extra_hosts],
        )
    if "--sse-soon" in args:
        import mcp.server._streamable_http_modern as modern

        modern._SSE_PING_INTERVAL = 0.05

        @server.tool()
        async def slow(text: str) -> str:
            """Repeat the text after 0.3 s."""
            await asyncio.sleep(0.3)
            return f"slowly: {text}"

    app = server.streamable_http_app(json_response=json_response, transport_security=security)
    if "--modern-only" in args:
        app = modern_only(app)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    # lifespan "on": it must reach the Starlette app through the wrapper
    # (it starts the SDK's session manager).
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)

    # Print the URL only once uvicorn listens, so the test never races it.
    original_startup = uv.startup

    async def startup(sockets=None):
        await original_startup(sockets=sockets)
        print(f"URL http://127.0.0.1:{port}/mcp", flush=True)

    uv.startup = startup
    uv.run(sockets=[sock])


if __name__ == "__main__":
    main()

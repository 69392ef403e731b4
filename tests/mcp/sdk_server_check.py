#!/usr/bin/env python3
"""The simulator's MCP server driven by the official MCP Python SDK (`mcp`
2.3.0 from PyPI, in target/mcp-venv: tests/mcp/venv.sh) over Streamable
HTTP.

Starts `rtt-agent-sim --mcp --mcp-token TOKEN` (the agent with its built-in
tools add, mul, compare) and checks, through the SDK's own client:

- connecting in the SDK's three modes: `2026-07-28` (stateless: no
  handshake, every request carries the revision's `_meta` envelope and
  `Mcp-Method`/`Mcp-Name` headers), the default `auto` (a `server/discover`
  probe, which this server answers, so it speaks 2026-07-28 too) and
  `legacy` (the initialize handshake, 2025-11-25, with a session);
- `ping` (legacy only: 2026-07-28 removed it, and the server says so with
  404 -32601);
- `tools/list`: the names, descriptions and input schemas are those the
  tools register (src/tools/*.c), types mapped to JSON Schema;
- `tools/call add {a:2, b:3}` gives the tool's text, not an error;
- a call without `b` gives `isError` with the reason;
- an unknown tool gives the JSON-RPC error (-32602);
- without the token, and with a wrong one, the server refuses (401) and the
  SDK cannot connect;
- raw 2026-07-28 requests (httpx2) get the revision's errors: no
  `Mcp-Method` 400 -32020, no `_meta` 400 -32602, an unknown revision
  400 -32022 naming the ones spoken, `initialize` and `ping` 404 -32601, a
  notification 202; results end with `resultType`, the serverInfo stamp and
  (tools/list) `ttlMs`/`cacheScope`; no answer makes a session;
- the simulator then stops cleanly (its heap back to what it was).

    target/mcp-venv/bin/python tests/mcp/sdk_server_check.py target/debug/rtt-agent-sim

With `--url URL --token TOKEN` (a board: tests/qemu/drive.py) nothing is
started or stopped: the same checks run against the server at URL, built
with that token, and the last check (the simulator's clean stop) is left to
the caller.

    target/mcp-venv/bin/python tests/mcp/sdk_server_check.py \
        --url http://127.0.0.1:PORT/mcp --token TOKEN
"""
import argparse
import asyncio
import re
import subprocess
import sys
import threading
import warnings

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

# The simulator's token; --token replaces it.
TOKEN = "mcp-test-token-7"
NUMBER = {"type": "number"}
SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number", "description": "First number"},
                   "b": {"type": "number", "description": "Second number"}},
    "required": ["a", "b"],
}
DESCRIPTIONS = {
    "add": "Calculate the sum of two numbers a + b",
    "mul": "Calculate the product of two numbers a * b",
    "compare": "Compare two numbers: tells whether a is greater than, less than or equal to b",
}

failures = []
# The SDK warns that ping is gone from its newest revision; it is sent in
# legacy mode only, where ping is part of the protocol.
warnings.filterwarnings("ignore", message="ping is removed")
# The revision each mode ends up speaking with this server.
SPOKEN = {"2026-07-28": "2026-07-28", "auto": "2026-07-28", "legacy": "2025-11-25"}


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def transport(url, token):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))


async def with_token(url, mode, token):
    async with Client(transport(url, token), mode=mode) as client:
        # The pinned mode asks nothing before its first request, so it has
        # no server name (raw_modern checks the stamp on every result).
        name = client.server_info and client.server_info.name
        check(name == ("rtt-agent" if mode != "2026-07-28" else None)
              and client.protocol_version == SPOKEN[mode],
              f"[{mode}] connected: server {name} speaking {client.protocol_version}")
        if mode == "legacy":
            await client.send_ping()
            check(True, f"[{mode}] ping answered")
        listed = await client.list_tools()
        tools = {t.name: t for t in listed.tools}
        check(sorted(tools) == sorted(DESCRIPTIONS), f"[{mode}] tools/list names: {sorted(tools)}")
        for name, description in DESCRIPTIONS.items():
            t = tools.get(name)
            check(t is not None and t.description == description and t.input_schema == SCHEMA,
                  f"[{mode}] {name}: description and input schema as registered"
                  + ("" if t is None else f" ({t.input_schema})"))
        check(listed.next_cursor is None, f"[{mode}] one page, no nextCursor")

        result = await client.call_tool("add", {"a": 2, "b": 3})
        text = " ".join(c.text for c in result.content if c.type == "text")
        check(not result.is_error and text == "2 + 3 = 5", f"[{mode}] add(2, 3): {text!r}")

        result = await client.call_tool("add", {"a": 2})
        text = " ".join(c.text for c in result.content if c.type == "text")
        check(result.is_error and '"b" is missing' in text, f"[{mode}] add without b: isError, {text!r}")

        try:
            await client.call_tool("no_such_tool", {})
            check(False, f"[{mode}] an unknown tool is a JSON-RPC error")
        except MCPError as e:
            check(e.error.code == -32602 and "no_such_tool" in e.error.message,
                  f"[{mode}] unknown tool: JSON-RPC error {e.error.code} {e.error.message!r}")


async def refused(url, token):
    label = "no token" if token is None else "a wrong token"
    # One SDK connection per label: the server blocks an address after 5
    # wrong tokens (429), and the raw request below must still get its 401.
    for mode in (("2026-07-28",) if token is None else ("legacy",)):
        try:
            async with Client(transport(url, token), mode=mode) as client:
                await client.list_tools()
            check(False, f"[{mode}] with {label} the SDK must not connect")
        except BaseException as e:  # the SDK raises an ExceptionGroup or MCPError
            check(True, f"[{mode}] with {label} the SDK cannot connect ({type(e).__name__})")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
    check(r.status_code == 401 and r.headers.get("www-authenticate", "").startswith("Bearer"),
          f"with {label}: HTTP {r.status_code}, WWW-Authenticate {r.headers.get('www-authenticate')!r}")


MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}
STAMP = '"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"rtt-agent"'


def raw_modern(url, token):
    """2026-07-28 requests made by hand: the error paths the SDK client
    never takes, and the exact result shape."""
    def post(method, params=None, headers=None, version=MODERN, body=None):
        h = {"Authorization": f"Bearer {token}", "MCP-Protocol-Version": version,
             "Mcp-Method": method, "Accept": "application/json, text/event-stream"}
        h.update(headers or {})
        h = {k: v for k, v in h.items() if v is not None}
        if body is None:
            body = {"jsonrpc": "2.0", "id": 1, "method": method}
            if params is not None:
                body["params"] = params
        return httpx2.post(url, json=body, headers=h)

    def code(r):
        try:
            return r.json().get("error", {}).get("code")
        except ValueError:
            return None

    cases = [
        ("server/discover", post("server/discover", {"_meta": META}), 200, None),
        ("tools/list", post("tools/list", {"_meta": META}), 200, None),
        ("no Mcp-Method", post("tools/list", {"_meta": META}, {"Mcp-Method": None}), 400, -32020),
        ("another Mcp-Name", post("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": META},
                                  {"Mcp-Name": "mul"}), 400, -32020),
        ("no _meta", post("tools/list", {}), 400, -32602),
        ("an unknown revision", post("tools/list", {"_meta": {**META, "io.modelcontextprotocol/protocolVersion":
                                                             "2099-01-01"}}, version="2099-01-01"), 400, -32022),
        ("initialize", post("initialize", {"protocolVersion": MODERN, "capabilities": {}, "_meta": META}),
         404, -32601),
        ("ping", post("ping", {"_meta": META}), 404, -32601),
        ("a notification", post("notifications/cancelled",
                                body={"jsonrpc": "2.0", "method": "notifications/cancelled"}), 202, None),
    ]
    for what, r, status, want in cases:
        check(r.status_code == status and code(r) == want and "mcp-session-id" not in r.headers,
              f"[raw {MODERN}] {what}: HTTP {r.status_code}, error {code(r)}, "
              f"session header {r.headers.get('mcp-session-id')!r}")
    answers = {what: r for what, r, _, _ in cases}
    discover = answers["server/discover"].json().get("result", {})
    check(discover.get("supportedVersions") == [MODERN] and discover.get("cacheScope") == "private"
          and discover.get("ttlMs") == 0 and STAMP in answers["server/discover"].text,
          f"[raw {MODERN}] server/discover: {answers['server/discover'].text[:160]}...")
    listed = answers["tools/list"]
    check('"ttlMs":0,"cacheScope":"private",' + STAMP in listed.text,
          f"[raw {MODERN}] tools/list ends with ttlMs, cacheScope, resultType and the serverInfo stamp")
    data = answers["an unknown revision"].json().get("error", {}).get("data")
    check(data == {"supported": [MODERN, "2025-11-25", "2025-06-18"], "requested": "2099-01-01"},
          f"[raw {MODERN}] an unknown revision's data: {data}")


def checks(url, token):
    asyncio.run(with_token(url, "2026-07-28", token))
    asyncio.run(with_token(url, "auto", token))
    asyncio.run(with_token(url, "legacy", token))
    raw_modern(url, token)
    asyncio.run(refused(url, None))
    asyncio.run(refused(url, "wrong-" + token))


def against_url(url, token):
    """A server someone else runs (the board in QEMU): the checks only."""
    print(f"MCP server at {url} (not started here)")
    try:
        checks(url, token)
    except Exception as e:  # noqa: BLE001 - any failure to talk is a failed check
        check(False, f"talking to {url}: {type(e).__name__}: {e}")
    if failures:
        sys.exit(f"{len(failures)} MCP server check(s) failed")
    print("MCP server with the official SDK: all checks passed")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sim", nargs="?", help="rtt-agent-sim, started with --mcp (not with --url)")
    p.add_argument("--url", help="the endpoint of a server already running (nothing is started or stopped)")
    p.add_argument("--token", help="its bearer token (with --url)")
    a = p.parse_args()
    if a.url:
        if a.sim or not a.token:
            p.error("--url takes --token and no simulator")
        return against_url(a.url, a.token)
    if not a.sim or a.token:
        p.error("give the simulator (rtt-agent-sim), or --url URL --token TOKEN")
    sim = a.sim
    proc = subprocess.Popen([sim, "--mcp", "--mcp-token", TOKEN], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = []
    url_found = threading.Event()
    url = []

    def reader():
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            output.append(line)
            m = re.search(r"MCP server: (http://127\.0\.0\.1:\d+/mcp)", line)
            if m and not url:
                url.append(m.group(1))
                url_found.set()

    threading.Thread(target=reader, daemon=True).start()
    if not url_found.wait(30):
        print("".join(output))
        sys.exit("the simulator did not print its MCP address")
    print(f"simulator's MCP server: {url[0]}")
    try:
        checks(url[0], TOKEN)
    finally:
        # Ctrl-D leaves the chat, a second one the shell; the simulator then
        # stops the agent (and its server) and frees everything.
        try:
            proc.stdin.write(b"\x04")
            proc.stdin.flush()
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            failures.append("the simulator did not stop")
    log = "".join(output)
    started = re.search(r"agent started: used (\d+)", log)
    done = re.search(r"cleanup done: used (\d+)", log)
    check(proc.returncode == 0 and done is not None,
          f"the simulator stopped cleanly (rc {proc.returncode}; heap used {started and started.group(1)} "
          f"at start, {done and done.group(1)} after cleanup)")
    if failures:
        print("\n---- simulator output\n" + log)
        sys.exit(f"{len(failures)} MCP server check(s) failed")
    print("MCP server with the official SDK: all checks passed")


if __name__ == "__main__":
    main()

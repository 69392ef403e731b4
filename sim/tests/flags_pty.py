#!/usr/bin/env python3
"""Drives the host simulator through a pseudo-terminal with the flags that
start the agent at once: who gets what is typed on the console.

- `--mcp` (with and without a token; no `--web`): the chat opens on the
  console and gets the question; nothing typed reaches msh while it runs
  (no "command not found"); after Ctrl-D the shell answers, and
  `main_loop_entry` opens the chat again with the conversation kept (the
  built-in model tells what was asked before); after a second Ctrl-D the
  shell answers again.
- `--web` (and `--web --mcp`): the chat is on the page, the console stays
  the shell's: msh runs what is typed.
- `--mcp --abilities`: the simulator's `board_state`, registered from its
  main thread once the agent runs, is listed and called over MCP at once,
  before anyone chats.

    sim/tests/flags_pty.py path/to/rtt-agent-sim

FLAGS_PTY_SHOW=1 prints each run's whole output to stderr.
"""
import json
import re
import sys
import time
import urllib.request

import pty_sim

exe = sys.argv[1]
passed = 0


def fail(why, seen=b""):
    sys.stderr.write("FAILED: %s\noutput so far:\n%s\n" % (why, seen.decode(errors="replace")))
    print("%d passed, 1 failed" % passed)
    sys.exit(1)


class Sim(pty_sim.Sim):
    """The simulator started with `args`; each check counts as passed."""

    def __init__(self, args):
        super().__init__(exe, args, {}, fail)

    def check(self, pattern, since=0, count=1, timeout=30):
        global passed
        self.wait(pattern, since, count, timeout)
        passed += 1

    def absent(self, pattern, since=0):
        global passed
        if pattern in self.seen[since:]:
            fail("%s: %r was printed" % (" ".join(self.args), pattern), self.seen)
        passed += 1

    def settle(self):
        """The shell prints its prompt, then reads the console once before
        it sleeps (finsh_getchar); a key typed before that read is the
        shell's, as on a board. Type after it."""
        time.sleep(0.05)

    def exit(self):
        global passed
        code = super().exit("FLAGS_PTY_SHOW")
        if code != 0:
            fail("%s: exit status %d" % (" ".join(self.args), code), self.seen)
        passed += 1


def shell_answers(sim, since):
    """msh has the console: `help` lists the commands."""
    sim.settle()
    sim.send(b"help\r")
    sim.check(b"leave the simulator", since)


def chat_on_the_console(args, server_line, reopen=False):
    """The agent starts at once with the chat on the console."""
    sim = Sim(args)
    sim.check(server_line)
    sim.check(b"Agent chat: type a message")
    sim.check(b"you> ")
    sim.check(b"msh />")
    sim.settle()
    mark = sim.mark()
    sim.send(b"what is (2+3)*4?\r")
    sim.check(b'"name":"mul"', mark)
    sim.check(b"The result is 20.", mark)
    sim.check(b"you> ", mark)
    sim.absent(b"command not found", mark)
    # Ctrl-D gives the console back to the shell.
    sim.send(b"\x04")
    sim.check(b"leaving the agent chat", mark)
    mark = sim.mark()
    shell_answers(sim, mark)
    if reopen:
        # The chat opens again on the running agent, the conversation kept.
        sim.wait(b"leave the simulator", mark)
        sim.wait(b"msh />", sim.seen.index(b"leave the simulator", mark))
        sim.settle()
        mark = sim.mark()
        sim.send(b"main_loop_entry\r")
        sim.check(b"Agent chat: type a message", mark)
        sim.check(b"you> ", mark)
        sim.wait(b"msh />", mark)
        sim.settle()
        sim.absent(b"already running", mark)
        mark = sim.mark()
        sim.send(b"what did I ask before?\r")
        sim.check(b"Before this you asked: what is (2+3)*4?", mark)
        sim.check(b"you> ", mark)
        sim.absent(b"command not found", mark)
        sim.send(b"\x04")
        sim.check(b"leaving the agent chat", mark)
        shell_answers(sim, sim.mark())
    sim.exit()


def shell_on_the_console(args, lines):
    """The agent starts at once on the WebNet channel: the console stays
    the shell's."""
    sim = Sim(args)
    for line in lines:
        sim.check(line)
    sim.check(b"msh />")
    mark = sim.mark()
    shell_answers(sim, mark)
    sim.absent(b"Agent chat:", 0)
    sim.exit()


def mcp(url, body, session=None):
    """One JSON-RPC request to the simulator's MCP server: (session, reply)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
    req = urllib.request.Request(url, json.dumps(body).encode(), headers)
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.headers.get("Mcp-Session-Id"), json.loads(r.read().decode())


def tool_registered_after_the_start_reaches_mcp():
    """`board_state` is registered from the simulator's main thread after
    main_loop_entry returns (the loop owns the registry then): an MCP
    client lists and calls it within a second, with nothing typed."""
    global passed
    sim = Sim(["--mcp", "--mcp-anonymous", "--abilities"])
    sim.wait(b"msh />")
    m = re.search(rb"MCP server: (http://127\.0\.0\.1:\d+/mcp)", sim.seen)
    if not m:
        fail("no MCP server address", sim.seen)
    url = m.group(1).decode()
    session, _ = mcp(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                           "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": {"name": "flags_pty", "version": "1"}}})
    end = time.time() + 1
    while True:
        _, listed = mcp(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
        names = [t["name"] for t in listed["result"]["tools"]]
        if "board_state" in names:
            break
        if time.time() > end:
            fail("board_state not in tools/list within 1 s: %s" % names, sim.seen)
        time.sleep(0.05)
    passed += 1
    _, called = mcp(url, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                          "params": {"name": "board_state", "arguments": {}}}, session)
    text = json.dumps(called)
    if "LED on, 23.5 C" not in text:
        fail("tools/call board_state: %s" % text, sim.seen)
    passed += 1
    sim.absent(b"agent> ")
    sim.send(b"\x04")
    sim.wait(b"leaving the agent chat")
    sim.settle()
    sim.exit()


chat_on_the_console(["--mcp", "--mcp-anonymous"], b"MCP server: http://127.0.0.1:", reopen=True)
# Without a token the server does not start; the chat is there all the same.
chat_on_the_console(["--mcp"], b"MCP server: not started")
shell_on_the_console(["--web", "--web-open-chat"], [b"WebNet channel: http://127.0.0.1:"])
shell_on_the_console(["--web", "--web-open-chat", "--mcp", "--mcp-anonymous"],
                     [b"WebNet channel: http://127.0.0.1:", b"MCP server: http://127.0.0.1:"])
tool_registered_after_the_start_reaches_mcp()
print("%d passed, 0 failed" % passed)

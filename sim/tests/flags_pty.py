#!/usr/bin/env python3
"""Drives the host simulator through a pseudo-terminal with the flags that
start the agent at once: who gets what is typed on the console.

- `--mcp` (with and without a token; no `--web`): the chat opens on the
  console and gets the question; nothing typed reaches msh while it runs
  (no "command not found"); after Ctrl-D the shell answers.
- `--web` (and `--web --mcp`): the chat is on the page, the console stays
  the shell's: msh runs what is typed.

    sim/tests/flags_pty.py path/to/rtt-agent-sim

FLAGS_PTY_SHOW=1 prints each run's whole output to stderr.
"""
import os
import pty
import select
import sys
import time

exe = sys.argv[1]
passed = 0


def fail(why, seen=b""):
    sys.stderr.write("FAILED: %s\noutput so far:\n%s\n" % (why, seen.decode(errors="replace")))
    print("%d passed, 1 failed" % passed)
    sys.exit(1)


class Sim:
    """One simulator process on a pseudo-terminal."""

    def __init__(self, args):
        self.args = args
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            env = dict(os.environ)
            env.pop("AGENT_API_URL", None)  # always the built-in scripted model
            env.pop("AGENT_BUILTIN_FORMAT", None)
            os.execve(exe, [exe] + args, env)
        self.seen = b""

    def pump(self, timeout):
        r, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if r:
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:
                chunk = b""
            self.seen += chunk

    def mark(self):
        return len(self.seen)

    def wait(self, pattern, since=0, count=1, timeout=30):
        """Until `pattern` has appeared `count` times after `since`."""
        end = time.time() + timeout
        while self.seen[since:].count(pattern) < count:
            left = end - time.time()
            if left <= 0:
                os.kill(self.pid, 9)
                fail("%s: timed out waiting for %r (x%d)" % (" ".join(self.args), pattern, count),
                     self.seen)
            self.pump(left)

    def check(self, pattern, since=0, count=1, timeout=30):
        global passed
        self.wait(pattern, since, count, timeout)
        passed += 1

    def absent(self, pattern, since=0):
        global passed
        if pattern in self.seen[since:]:
            fail("%s: %r was printed" % (" ".join(self.args), pattern), self.seen)
        passed += 1

    def send(self, data):
        for b in data:  # one key at a time, as typed
            os.write(self.fd, bytes([b]))
            time.sleep(0.002)

    def settle(self):
        """The shell prints its prompt, then reads the console once before
        it sleeps (finsh_getchar); a key typed before that read is the
        shell's, as on a board. Type after it."""
        time.sleep(0.05)

    def exit(self):
        global passed
        self.send(b"exit\r")
        self.wait(b"bye")
        _, status = os.waitpid(self.pid, 0)
        if os.environ.get("FLAGS_PTY_SHOW"):
            sys.stderr.write("--- %s ---\n%s\n" % (" ".join(self.args), self.seen.decode(errors="replace")))
        if os.waitstatus_to_exitcode(status) != 0:
            fail("%s: exit status %d" % (" ".join(self.args), os.waitstatus_to_exitcode(status)),
                 self.seen)
        passed += 1


def shell_answers(sim, since):
    """msh has the console: `help` lists the commands."""
    sim.settle()
    sim.send(b"help\r")
    sim.check(b"leave the simulator", since)


def chat_on_the_console(args, server_line):
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


chat_on_the_console(["--mcp", "--mcp-anonymous"], b"MCP server: http://127.0.0.1:")
# Without a token the server does not start; the chat is there all the same.
chat_on_the_console(["--mcp"], b"MCP server: not started")
shell_on_the_console(["--web", "--web-open-chat"], [b"WebNet channel: http://127.0.0.1:"])
shell_on_the_console(["--web", "--web-open-chat", "--mcp", "--mcp-anonymous"],
                     [b"WebNet channel: http://127.0.0.1:", b"MCP server: http://127.0.0.1:"])
print("%d passed, 0 failed" % passed)

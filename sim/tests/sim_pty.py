#!/usr/bin/env python3
"""Drives the host simulator through a pseudo-terminal, as a person would:
the msh prompt, main_loop_entry, a question answered with tool calls, line
editing (backspace) and history (Up), Ctrl-D, cleanup_agent_entry, exit.

    sim/tests/sim_pty.py path/to/rtt-agent-sim
"""
import os
import pty
import select
import sys
import time

exe = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    env = dict(os.environ)
    env.pop("AGENT_API_URL", None)  # always the built-in scripted model
    os.execve(exe, [exe], env)

seen = b""
passed = 0


def read_until(pattern, timeout=30, count=1):
    """Read until `pattern` has appeared `count` times in the whole output."""
    global seen
    end = time.time() + timeout
    while seen.count(pattern) < count:
        left = end - time.time()
        if left <= 0:
            sys.stderr.write("timed out waiting for %r; output so far:\n%s\n" % (pattern, seen.decode(errors="replace")))
            os.kill(pid, 9)
            print("%d passed, 1 failed" % passed)
            sys.exit(1)
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                continue
            seen += chunk


def check(pattern, timeout=30, count=1):
    global passed
    read_until(pattern, timeout, count)
    passed += 1


def send(data):
    for b in data:  # one key at a time, as typed
        os.write(fd, bytes([b]))
        time.sleep(0.002)


# The endpoint's path picks the wire format (AGENT_BUILTIN_FORMAT: the
# built-in model's Anthropic or Ollama path).
path = {"anthropic": b"/v1/messages", "ollama": b"/api/chat"}.get(
    os.environ.get("AGENT_BUILTIN_FORMAT", ""), b"/v1/chat/completions")
check(b"endpoint: built-in scripted model at http://127.0.0.1:")
check(path + b" (set AGENT_API_URL")
check(b"msh />")
send(b"main_loop_entry\r")
check(b"[mem] agent started")
check(b"you> ")
# The shell thread prints its prompt once main_loop_entry returns, then reads
# the console once before it sleeps (finsh_getchar); a key typed before that
# read is the shell's, as on a board. Type after it.
check(b"msh />", count=2)
time.sleep(0.05)
send(b"what is (2+3)*4?\r")
check(b'"name":"add"')
check(b'"name":"mul"')
check(b"The result is 20.")
check(b"you> ", count=2)
# Backspace: the X is erased before Enter.
send(b"compare 17 and 2X\x7f1\r")
check(b"17 is less than 21.")
check(b"you> ", count=3)
# History: Up brings back the last line.
send(b"\x1b[A\r")
check(b"17 is less than 21.", count=2)
check(b"you> ", count=4)
# Ctrl-D leaves the chat and the shell is back: it echoes what is typed
# (on a board it stayed asleep here) and runs it.
send(b"\x04")
check(b"leaving the agent chat")
mark = len(seen)
send(b"cleanup_agent_entry\r")
check(b"[mem] cleanup done")
if b"cleanup_agent_entry" not in seen[mark:]:
    sys.stderr.write("the shell did not echo the command after the chat\n")
    print("%d passed, 1 failed" % passed)
    sys.exit(1)
passed += 1
check(b"msh />", count=3)
send(b"exit\r")
check(b"bye")
_, status = os.waitpid(pid, 0)
if os.waitstatus_to_exitcode(status) != 0:
    print("%d passed, 1 failed" % passed)
    sys.exit(1)
passed += 1
print("%d passed, 0 failed" % passed)

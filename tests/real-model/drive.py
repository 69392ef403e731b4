#!/usr/bin/env python3
"""Drives the simulator through a pseudo-terminal against a real model
server, as a person would, and reports whether the model called `add` and
answered 5555.

    drive.py SIM_EXE URL MODE QUESTION [TRANSCRIPT]

MODE is `text` (agent_config tools text: tools described in the system
prompt) or `native` (function calling). Prints one line:
    called=<0|1> answered=<0|1> reply=<the reply's last line>
and exits 0 (a run that could not complete prints called=0 answered=0).
"""
import os
import pty
import re
import select
import sys
import time

exe, url, mode, question = sys.argv[1:5]
transcript = sys.argv[5] if len(sys.argv) > 5 else None

pid, fd = pty.fork()
if pid == 0:
    env = dict(os.environ)
    env["AGENT_API_URL"] = url
    env.setdefault("AGENT_API_KEY", "no-key")
    env.setdefault("AGENT_MODEL", "local")
    os.execve(exe, [exe], env)

seen = b""


def read_until(pattern, timeout, count=1):
    global seen
    end = time.time() + timeout
    while seen.count(pattern) < count:
        left = end - time.time()
        if left <= 0:
            return False
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            seen += chunk
    return True


def send(data):
    for b in data:
        os.write(fd, bytes([b]))
        time.sleep(0.002)


def finish(called, answered, reply):
    if transcript:
        with open(transcript, "wb") as f:
            f.write(seen)
    try:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    except OSError:
        pass
    reply = reply.replace("\r", "").strip().splitlines()
    last = reply[-1] if reply else ""
    print("called=%d answered=%d reply=%s" % (called, answered, last[:200]))
    sys.exit(0)


ok = read_until(b"msh />", 30)
send(b"agent_config tools %s\r" % mode.encode())
ok = ok and read_until(b"msh />", 10, count=2)
send(b"main_loop_entry\r")
ok = ok and read_until(b"you> ", 30)
ok = ok and read_until(b"msh />", 10, count=3)
time.sleep(0.1)
mark = len(seen)
send(question.encode() + b"\r")
# A 1.5B model on one thread: each round takes some seconds.
ok = ok and read_until(b"you> ", 300, count=2)
turn = seen[mark:].decode(errors="replace")
turn = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", turn)
called = 1 if re.search(r'\[tool_call\][^\n]*"name":\s*"add"', turn) else 0
# The reply: what follows the last tool result / call line.
tail = turn.rsplit("you> ", 1)[0]
after = re.split(r"\[tool_(?:call|result)\][^\n]*\n", tail)[-1]
answered = 1 if ok and "5555" in after.replace(",", "") else 0
send(b"\x04")
read_until(b"msh />", 10, count=4)
send(b"cleanup_agent_entry\r")
read_until(b"[mem] cleanup done", 15)
send(b"exit\r")
finish(called, answered, after if ok else "(no reply: timed out)")

#!/usr/bin/env python3
"""Drives the host simulator with --abilities through a pseudo-terminal:
scheduled prompts (replies, no pile-up while the loop is busy, del stops
them), notes kept across a restart of the simulator (a new process, the
same notes file), a direct-output tool's result as the reply, and a remote
MCP tool that times out (an error result, and the turn goes on).

    sim/tests/abilities_pty.py path/to/rtt-agent-sim

The notes and schedule files are in a temporary folder of its own. Every
check reads the output; waits are generous, and the checks are by content.
ABILITIES_PTY_SHOW=1 prints each run's whole output to stderr.
"""
import os
import re
import shutil
import sys
import tempfile
import time

import pty_sim

exe = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="rtt-agent-abilities-")
notes_file = os.path.join(tmp, "agent_notes.txt")
sched_file = os.path.join(tmp, "agent_sched.txt")
passed = 0


def fail(why, seen=b""):
    sys.stderr.write("FAILED: %s\noutput so far:\n%s\n" % (why, seen.decode(errors="replace")))
    print("%d passed, 1 failed" % passed)
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1)


class Sim(pty_sim.Sim):
    """The simulator with --abilities, on the notes and schedule files of
    this run."""

    def __init__(self):
        super().__init__(exe, ["--abilities"], {"RTT_AGENT_NOTES_FILE": notes_file,
                                                "RTT_AGENT_SCHEDULE_FILE": sched_file}, fail)

    def start_agent(self):
        return self.enter_chat(started=True)

    def ask(self, line, expect, timeout=30):
        """A line in the chat: `expect` in what follows, then the prompt."""
        m = self.mark()
        self.send(line + b"\r")
        for e in expect:
            self.wait(e, since=m, timeout=timeout)
        self.wait(b"you> ", since=m, timeout=timeout)
        return m

    def finish(self):
        self.shell(b"cleanup_agent_entry", b"[mem] cleanup done")
        code = self.exit("ABILITIES_PTY_SHOW")
        if code != 0:
            fail("the simulator exited with %d" % code, self.seen)


def ok(what):
    global passed
    passed += 1
    print("ok %d - %s" % (passed, what))
    sys.stdout.flush()


REPLY = b"schedule #1: "


def replies(sim, since=0):
    return sim.seen[since:].count(REPLY)


def listed(sim):
    out = sim.shell(b"agent_schedule list", b"\n#1 every 2s")
    m = re.search(rb"#1 every 2s: what is 2\+3\? \(runs (\d+), missed (\d+)\)", out)
    if not m:
        fail("agent_schedule list: %r" % out, sim.seen)
    return int(m.group(1)), int(m.group(2))


# ---- the first run
sim = Sim()
sim.wait(b"abilities: board_state (direct output); remote MCP server http://127.0.0.1:")
sim.wait(b"sub-agent mathematician (add, mul)")
sim.wait(b"msh />")
sim.shell(b"agent_schedule list", b"no scheduled prompts")
sim.shell(b'agent_schedule add every 2s "what is 2+3?"', b"scheduled #1")
out = sim.shell(b"agent_schedule list", b"#1 every 2s: what is 2+3?")
ok("agent_schedule add and list before the start")

started_at = time.time()
m = sim.start_agent()
sim.wait(b"schedule: 1 scheduled prompt(s)", since=m)

# 1. The scheduled prompt's replies: in the log, and shown by the chat.
sim.wait(REPLY + b"The result is 5.", since=m, count=2, timeout=20)
# The chat took each of them as an unasked reply: its prompt is back after it.
first = sim.seen.index(REPLY, m)
sim.wait(b"you> ", since=first)
ok("scheduled replies in the log: %d after %.1f s" % (replies(sim, m), time.time() - started_at))

# 3. A direct-output tool: its text is the reply; the model is not asked
# again (it would have answered "Result: ...").
at = sim.ask(b"show me the board state", [b"LED on, 23.5 C, fan off (simulated board)"])
if b"Result: LED on" in sim.seen[at:]:
    fail("the model was asked again after the direct-output tool", sim.seen)
if b'"name":"board_state"' not in sim.seen[at:]:
    fail("board_state was not called", sim.seen)
ok("board_state's result is the reply")

# 5. A sub-agent answers through its own profile: the main model calls it,
# it works with add and mul, and the main model gets only its answer.
at = sim.ask(b"ask the mathematician what is (2+3)*4?", [b"Result: The result is 20."])
for want in (b'"name":"mathematician"', b"sub-agent mathematician: started", b"sub-agent mathematician: answered"):
    if want not in sim.seen[at:]:
        fail("%r not seen for the sub-agent" % want, sim.seen)
ok("the sub-agent answered through its own profile")

# 2 (first half). remember, written to the notes file.
sim.ask(b"remember wifi lab-ssid", [b'Result: remembered "wifi"'])
with open(notes_file) as f:
    if "n\twifi\tlab-ssid\n" not in f.read():
        fail("the note is not in %s" % notes_file, sim.seen)
ok("remember: the note is in the notes file")

# 4. A remote tool past its timeout: an error result, and the turn goes on.
t0 = time.time()
at = sim.ask(b"please call m1_slow", [
    b'Result: error: the remote tool "m1_slow" could not be called (',
    b"no answer within the tool's timeout of 1000 ms"])
took = time.time() - t0
if took > 4.5:
    fail("the timed-out remote call took %.1f s (the server answers after 5 s)" % took, sim.seen)
sim.ask(b"what is 12*7+5?", [b"The result is 89."])
ok("m1_slow timed out after %.1f s with an error result; the next question is answered" % took)

# 1 (no pile-up). The loop is busy for 5 s with a slow question while the
# prompt is due every 2 s: at most one run waits, the rest are missed.
before = replies(sim)
t0 = time.time()
at = sim.ask(b"slowly: what is 4+4?", [b"The result is 8."], timeout=40)
busy = time.time() - t0
if busy < 4.5:
    fail("the slow question took only %.1f s" % busy, sim.seen)
sim.leave_chat()
runs, missed = listed(sim)
seen_replies = replies(sim)
elapsed = time.time() - started_at
if missed < 1:
    fail("no run was missed while the loop was busy for %.1f s (runs %d)" % (busy, runs), sim.seen)
if not (runs - 1 <= seen_replies <= runs):
    fail("%d replies for %d runs" % (seen_replies, runs), sim.seen)
if seen_replies > elapsed / 2 + 1:
    fail("%d replies in %.1f s at one every 2 s" % (seen_replies, elapsed), sim.seen)
ok("busy %.1f s: runs %d, missed %d, %d replies in %.1f s" % (busy, runs, missed, seen_replies, elapsed))

# 1 (del). No reply after the entry is deleted (one already on its way
# may still come).
sim.shell(b"agent_schedule del 1", b"deleted #1")
sim.idle(2.5)
after_del = replies(sim)
sim.idle(5)
if replies(sim) != after_del:
    fail("a deleted entry ran", sim.seen)
sim.shell(b"agent_schedule list", b"no scheduled prompts")
ok("del stops the replies (%d before, none in 5 s after)" % after_del)
sim.finish()
ok("the first run ends")

# ---- the second run: a new process, the same notes file.
sim = Sim()
sim.wait(b"msh />")
m = sim.start_agent()
sim.wait(b"schedule: 0 scheduled prompt(s)", since=m)
sim.ask(b"recall wifi", [b"Result: wifi: lab-ssid"])
ok("recall after the restart: the note is back")
sim.idle(2.5)
if REPLY in sim.seen:
    fail("the deleted entry ran after the restart", sim.seen)
sim.leave_chat()
sim.finish()
ok("the second run ends")

shutil.rmtree(tmp, ignore_errors=True)
print("%d passed, 0 failed" % passed)

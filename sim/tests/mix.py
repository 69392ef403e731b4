#!/usr/bin/env python3
"""The host version of the real firmware's load run: the simulator with
every channel at once, for a bounded time, while its built-in model fails
on purpose at random. It asserts only on counts:

- lost 0: every request of every kind got an answer (a failure answered
  with an error counts as answered);
- misdelivered 0: no answer carries another request's number (each
  question asks for a sum in a range of its own kind);
- the heap back: `used` after the load's cleanup equals `used` after the
  idle start/stop cycles before it (WebNet's thread, which cannot stop, is
  started by then), each read once it has settled.

    sim/tests/mix.py path/to/rtt-agent-sim

At the same time: the console chat through a pseudo-terminal (a question
every 5 s), the WebNet page as an extra channel (a chat every 3 s,
streamed every other time), the MCP server (a tools/call every second,
and a client guessing tokens from another address, 127.0.0.2, which
gets 401 and then 429 with Retry-After while the others go on), and a scheduled prompt every 4 s. The model
(SIM_MODEL_FAULTS) answers 5 % of requests with HTTP 500, cuts 2 % of the
streams mid-answer and stalls 1 % for 20 s.

MIX_SECONDS (default 90) sets the length, MIX_SEED (default 1) the
faults' seed; MIX_SHOW=1 prints the console's whole output to stderr.
"""
import http.client
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time

import pty_sim

exe = sys.argv[1]
seconds = float(os.environ.get("MIX_SECONDS", "90"))
seed = os.environ.get("MIX_SEED", "1")
tmp = tempfile.mkdtemp(prefix="rtt-agent-mix-")
WEB_TOKEN = "mix-web-token-0123456789"
MCP_TOKEN = "mix-mcp-token-0123456789"
passed = 0

# The number ranges of each kind's questions (the answer names the sum).
CONSOLE, WEB, MCP, SCHEDULED = 20000, 30000, 40000, 50000


def kind_of(n):
    for base in (SCHEDULED, MCP, WEB, CONSOLE):
        if n >= base:
            return base
    return None


def fail(why, seen=b""):
    sys.stderr.write("FAILED: %s\n" % why)
    if seen:
        sys.stderr.write("console output (end):\n%s\n" % seen[-6000:].decode(errors="replace"))
    print("%d passed, 1 failed" % passed)
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1)


def ok(what):
    global passed
    passed += 1
    print("ok %d - %s" % (passed, what))
    sys.stdout.flush()


class Sim(pty_sim.Sim):
    """The simulator with every channel, its model failing at random."""

    def __init__(self):
        super().__init__(exe, ["--with-web", "--web-token", WEB_TOKEN, "--mcp", "--mcp-token", MCP_TOKEN], {
            "SIM_MODEL_FAULTS": "seed=%s,http500=5,cut=2,stall=1,stall_s=20" % seed,
            "RTT_AGENT_SCHEDULE_FILE": os.path.join(tmp, "sched.txt"),
            "RTT_AGENT_NOTES_FILE": os.path.join(tmp, "notes.txt"),
            "RTT_AGENT_STATE_FILE": os.path.join(tmp, "agent.state"),
        }, fail)

    def wait(self, pattern, since=0, count=1, timeout=60):
        return super().wait(pattern, since, count, timeout)

    def shell(self, line, expect, timeout=60):
        return super().shell(line, expect, timeout)

    def leave_chat(self, pause=0.2):
        super().leave_chat(pause)

    def used(self):
        out = self.shell(b"free", b"available")
        return int(re.search(rb"used +: (\d+)", out).group(1))

    def settled_used(self):
        """`used` once two readings a second apart agree: threads of the
        host's servers that answered last may still be ending (their
        thread-local blocks count on the host)."""
        last = self.used()
        for _ in range(20):
            time.sleep(1)
            now = self.used()
            if now == last:
                return now
            last = now
        return last


class Counts:
    def __init__(self, name):
        self.name = name
        self.sent = self.answered = self.errors = self.lost = self.misdelivered = 0
        self.latencies = []
        self.notes = []
        self.lock = threading.Lock()

    def line(self):
        s = "%s: sent %d, answered %d (%d with an error), lost %d, misdelivered %d" % (
            self.name, self.sent, self.answered, self.errors, self.lost, self.misdelivered)
        if self.latencies:
            lat = sorted(self.latencies)
            s += ", latency median %.0f ms, p99 %.0f ms" % (
                1000 * lat[len(lat) // 2], 1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))])
        return s


def sums_in(text):
    return [int(n) for n in re.findall(r"(?:result is|=) \**(\d+)", text)]


def http_post(port, path, body, headers, timeout=90, source="127.0.0.1"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    try:
        # Head and body in two writes, as http.client does (issue 37's
        # defect 1: a refusal must still be read whole).
        c.request("POST", path, body=body.encode(), headers=headers)
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read().decode(errors="replace")
    finally:
        c.close()


def web_client(port, stop, counts):
    k = 0
    while not stop.is_set():
        k += 1
        want = WEB + k
        stream = k % 2 == 0
        body = json.dumps({"message": "what is %d+%d?" % (k, WEB), "token": WEB_TOKEN,
                           "stream": stream})
        with counts.lock:
            counts.sent += 1
        try:
            status, _, text = http_post(port, "/cgi-bin/chat", body,
                                        {"Content-Type": "application/json"})
        except Exception as e:  # no answer at all: lost
            with counts.lock:
                counts.lost += 1
                counts.notes.append("web %d: %r" % (k, e))
            stop.wait(3)
            continue
        if stream:
            finals = re.findall(r"event: final\ndata: (.*)", text)
            errors = re.findall(r"event: error\ndata: (.*)", text)
            answer = finals[0] if finals else (errors[0] if errors else None)
        else:
            try:
                answer = json.loads(text).get("response") or json.loads(text).get("error")
            except ValueError:
                answer = None
        with counts.lock:
            if answer is None:
                counts.lost += 1
                counts.notes.append("web %d: status %d, no answer in %r" % (k, status, text[:200]))
            else:
                counts.answered += 1
                found = sums_in(answer)
                if any(n != want for n in found):
                    counts.misdelivered += 1
                    counts.notes.append("web %d got %r" % (k, answer))
                elif not found:
                    counts.errors += 1
        stop.wait(3)


def mcp_session(port):
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "mix", "version": "1"}}})
    auth = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "Authorization": "Bearer " + MCP_TOKEN}
    status, headers, _ = http_post(port, "/mcp", init, auth)
    sid = {k.lower(): v for k, v in headers.items()}.get("mcp-session-id")
    if status != 200 or not sid:
        fail("the MCP server did not open a session (status %d)" % status)
    auth["Mcp-Session-Id"] = sid
    auth["MCP-Protocol-Version"] = "2025-06-18"
    http_post(port, "/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), auth)
    return auth


def mcp_client(port, stop, counts):
    auth = mcp_session(port)
    k = 0
    while not stop.is_set():
        k += 1
        call = json.dumps({"jsonrpc": "2.0", "id": k + 1, "method": "tools/call",
                           "params": {"name": "add", "arguments": {"a": k, "b": MCP}}})
        with counts.lock:
            counts.sent += 1
        t0 = time.time()
        try:
            status, _, text = http_post(port, "/mcp", call, auth, timeout=60)
        except Exception as e:
            with counts.lock:
                counts.lost += 1
                counts.notes.append("mcp %d: %r" % (k, e))
            stop.wait(1)
            continue
        with counts.lock:
            counts.latencies.append(time.time() - t0)
            m = re.search(r"\{.*\}", text, re.S)
            try:
                result = json.loads(m.group(0)) if m else None
            except ValueError:
                result = None
            if status != 200 or result is None:
                counts.lost += 1
                counts.notes.append("mcp %d: status %d %r" % (k, status, text[:200]))
            else:
                counts.answered += 1
                found = sums_in(json.dumps(result))
                if found and found[-1] != MCP + k:
                    counts.misdelivered += 1
                    counts.notes.append("mcp %d got %r" % (k, text[:200]))
                elif not found:
                    counts.errors += 1
        stop.wait(1)


def token_guesser(port, stop, counts):
    k = 0
    while not stop.is_set():
        k += 1
        with counts.lock:
            counts.sent += 1
        try:
            status, headers, _ = http_post(
                port, "/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
                {"Content-Type": "application/json", "Authorization": "Bearer guess-%08d" % k},
                timeout=30, source="127.0.0.2")
        except Exception as e:
            with counts.lock:
                counts.lost += 1
                counts.notes.append("guess %d: %r" % (k, e))
            stop.wait(0.3)
            continue
        headers = {h.lower(): v for h, v in headers.items()}
        with counts.lock:
            if status == 401 or (status == 429 and "retry-after" in headers):
                counts.answered += 1
                counts.errors += status == 429
            else:
                counts.lost += 1
                counts.notes.append("guess %d: status %d %r" % (k, status, headers))
        stop.wait(0.3)


def main():
    sim = Sim()
    sim.wait(b"you> ")
    sim.wait(b"MCP server: ")
    sim.wait(b"/mcp")
    web_port = int(re.search(rb"WebNet channel: http://127\.0\.0\.1:(\d+)", sim.seen).group(1))
    mcp_port = int(re.search(rb"MCP server: http://127\.0\.0\.1:(\d+)/mcp", sim.seen).group(1))
    ok("the simulator serves the console chat, the WebNet page (port %d) and MCP (port %d)"
       % (web_port, mcp_port))
    time.sleep(0.2)
    sim.leave_chat()
    sim.shell(b"agent_schedule add every 4s what is 1+%d?" % SCHEDULED, b"#")
    sim.shell(b"cleanup_agent_entry", b"[mem] cleanup done")
    # On the host every allocation of the process counts, the simulator's
    # own and Rust's std's included: the first start/stop cycles grow their
    # tables (a few hundred bytes, then never again). Idle cycles until two
    # in a row leave the same figure: that is the baseline.
    last = None
    for _ in range(8):
        sim.enter_chat()
        sim.leave_chat()
        sim.shell(b"cleanup_agent_entry", b"[mem] cleanup done")
        now = sim.settled_used()
        if now == last:
            break
        last = now
    baseline = last
    m = len(sim.seen)
    sim.enter_chat()
    # The MCP server started again, on another free port.
    sim.wait(b"/mcp (bearer token)", since=m)
    mcp_port = int(re.findall(rb"serving MCP \(Streamable HTTP\) on http://127\.0\.0\.1:(\d+)/mcp",
                              sim.seen[m:])[-1])
    ok("heap settled over idle start/stop cycles: used %d; the agent started again (MCP port %d)"
       % (baseline, mcp_port))

    stop = threading.Event()
    web, mcp, guess, console = Counts("web"), Counts("mcp"), Counts("token guesses"), Counts("console")
    workers = [threading.Thread(target=f, args=(p, stop, c), daemon=True) for f, p, c in (
        (web_client, web_port, web), (mcp_client, mcp_port, mcp), (token_guesser, mcp_port, guess))]
    for w in workers:
        w.start()
    start = time.time()
    k = 0
    while time.time() - start < seconds:
        k += 1
        want = CONSOLE + k
        m = len(sim.seen)
        console.sent += 1
        sim.send(b"what is %d+%d?\r" % (k, CONSOLE))
        # The answer, then the prompt; scheduled replies may come between.
        end = time.time() + 90
        while time.time() < end:
            sim.pump(0.5)
            tail = sim.seen[m:]
            if b"\nyou> " in tail or tail.endswith(b"you> "):
                segment = tail.decode(errors="replace")
                answers = [n for n in sums_in(segment) if n not in (SCHEDULED + 1,)]
                if any(n != want for n in answers):
                    console.misdelivered += 1
                    console.notes.append("console %d saw %r" % (k, answers))
                console.answered += 1
                if want not in answers:
                    console.errors += 1
                break
        else:
            console.lost += 1
            console.notes.append("console %d: no prompt back" % k)
        next_at = start + 5 * k
        while time.time() < next_at and time.time() - start < seconds:
            sim.pump(min(0.5, next_at - time.time()))
    stop.set()
    for w in workers:
        while w.is_alive():
            sim.pump(0.5)
            w.join(0.1)
    sim.pump(1)
    sim.leave_chat()
    listing = sim.shell(b"agent_schedule list", b"#1").decode(errors="replace")
    scheduled = sim.seen.count(b"schedule #1: ")
    sim.shell(b"cleanup_agent_entry", b"[mem] cleanup done")
    after = sim.settled_used()
    sim.send(b"exit\r")
    sim.wait(b"bye")
    if os.environ.get("MIX_SHOW"):
        sys.stderr.write(sim.seen.decode(errors="replace"))
    _, status = os.waitpid(sim.pid, 0)

    for c in (console, web, mcp, guess):
        print("# " + c.line())
        for n in c.notes[:10]:
            print("#   " + n)
    print("# scheduled replies logged: %d (%s)" % (
        scheduled, " ".join(listing.split("#1", 1)[-1].split()[:8])))
    print("# heap: used %d before the load, %d after its cleanup" % (baseline, after))
    made = re.search(rb"built-in model: (\d+) faults made on purpose", sim.seen)
    faults = int(made.group(1)) if made else -1
    for c in (console, web, mcp, guess):
        if c.sent == 0:
            fail("%s sent nothing" % c.name, sim.seen)
        if c.lost:
            fail("%s lost %d" % (c.name, c.lost), sim.seen)
        if c.misdelivered:
            fail("%s got %d replies of others" % (c.name, c.misdelivered), sim.seen)
        ok(c.line())
    if guess.errors == 0:
        fail("the token guesser was never rate-limited (429)", sim.seen)
    ok("the token guesser was rate-limited (%d times 429 with Retry-After)" % guess.errors)
    if scheduled == 0:
        fail("no scheduled reply was logged", sim.seen)
    ok("scheduled replies logged: %d" % scheduled)
    if after != baseline:
        fail("heap not back: used %d before the load, %d after its cleanup" % (baseline, after),
             sim.seen)
    ok("heap back after the final cleanup (used %d)" % after)
    if os.waitstatus_to_exitcode(status) != 0:
        fail("the simulator exited with %d" % os.waitstatus_to_exitcode(status), sim.seen)
    ok("the simulator exited cleanly (faults the model made on purpose: %d)" % faults)
    shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, 0 failed" % passed)


main()

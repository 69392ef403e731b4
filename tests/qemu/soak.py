#!/usr/bin/env python3
"""Issue 37's load run of the real firmware (`tests/qemu/run.sh --soak
MINUTES`, A9; `--board lm3s --soak MINUTES`, the 64 KB board's small
profile). Std lib only; one process, a thread per client.

For MINUTES, at once:
- a scheduled prompt every 5 s (`agent_schedule add every 5s ...` typed at
  the shell before the chat);
- a console question every 10 s, typed in the CLI chat;
- A9: an MCP client calling the soak firmware's `board_mem` tool every
  1 s (raw HTTP JSON-RPC with the bearer token, through a hostfwd), and a
  client guessing tokens in bursts, rate-limited (429 + Retry-After);
- A9 with --web-token: a WebNet chat every 3 s (POST /cgi-bin/chat with the
  token, through a hostfwd);
- the scripted server failing at random from a seeded generator: 5 % HTTP
  500, 2 % an answer cut in the middle, 1 % a 20 s stall, which the
  board's request deadline (12 s: tests/qemu/layout.py) must answer.

Every request carries its own marker, so an answer names the question it
belongs to: the console asks "what is 7+N?" (A9) or "boardmem N" (lm3s:
the scripted model calls board_mem with tag N, whose answer repeats it),
the WebNet chat "what is 7+N?" with N of another range, the schedule
"what is 5+300000?", and the MCP client passes a tag of a fourth range.

Heap and stacks over time come from `board_mem` (A9: the MCP client's
calls, every second; lm3s: the console's questions, every 10 s):
rt_memory_info's total, used and max_used and the stack high-water of the
library's threads. After the load: Ctrl-D, `agent_schedule list`, `del`,
the last replies, `list thread`, `free`, `cleanup_agent_entry`, `free`.

The report goes to <logs>/soak.json (tools/figures renders it); the run
fails (exit status 1, the broken bounds named) when a request was lost or
answered on the wrong channel, when max_used grew after the warm-up by
more than the board's bound, when a kind of request went unanswered for
longer than its bound, or when the heap is not back after the cleanup.
"""
import argparse
import collections
import json
import os
import random
import re
import signal
import string
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # nothing written into the repo
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import drive  # noqa: E402
from board import FATAL, Timeout  # noqa: E402
from drive import Fail  # noqa: E402

# How often each kind of request is sent (seconds).
SCHEDULE_EVERY_S = 5
CONSOLE_EVERY_S = 10
MCP_EVERY_S = 1
WEB_EVERY_S = 3
# The markers: each kind its own range of N.
CONSOLE_BASE = 100000
WEB_BASE = 200000
SCHEDULE_N = 300000
MCP_BASE = 400000
ADDEND = 7
SCHEDULE_PROMPT = 'what is 5+%d?' % SCHEDULE_N
SCHEDULE_ANSWER = SCHEDULE_N + 5
# lm3s: the run starts as a board up for this long (`soak_uptime`, the
# tool file's command, moves the kernel's tick forward), past any tick a
# defect keyed on the uptime waits for: the lm3s BSP's soft-timer list,
# never made, fired the SysTick's assertion at the tick its flash held at
# 0x14 (below 256 KB: 2622 s at 100 Hz), 18 min 35 s in.
UPTIME_S = 3600
# The scripted server's faults (qemu_llm_server --faults), in percent.
FAULTS = 'seed=%d,http500=5,cut=2,stall=1,stall_s=20'
# max_used may grow by at most this much after the warm-up (bytes).
DRIFT_BOUND = {'a9': 1024, 'lm3s': 512}
# The warm-up: the first 5 minutes, or the first half of a shorter run.
WARMUP_S = 300


def warmup_s(load_s):
    return min(WARMUP_S, load_s / 2.0)

# Starvation: the longest time a kind of request may go without an answer
# (seconds). A turn is one or two model requests, each ended by the 12 s
# deadline at worst (with its retries inside it), and the loop answers one
# message at a time: three such turns of other kinds in a row, and the
# question's own interval, fit in it.
STARVE_S = 90
# The good MCP client shares its address with the token-guessing one
# (slirp's hostfwd makes every host connection 10.0.2.2's), so the board's
# limit of wrong tokens refuses it too while a guessing burst's window runs
# (60 s): its longest time without a tool result may be that long, plus
# this slack; an HTTP answer of any kind (a 429 too) may never take longer
# than MCP_ANSWER_GAP_S.
TOKEN_WINDOW_S = 60
MCP_RESULT_SLACK_S = 15
MCP_ANSWER_GAP_S = 15
# The token guesser: its first burst after this many seconds; a burst sends
# a wrong token every second until the board answers 429, then three more
# 2 s apart, then waits out Retry-After and this pause.
BAD_FIRST_S = 20
BAD_PAUSE_S = 120
BAD_AFTER_429 = 3
# After the load: how long an outstanding request may still take.
DRAIN_S = 150
# The console's chat prompt, or a NUL where a log line clobbered it
# (rt_kprintf's one buffer; tests/qemu/README.md, abilities).
PROMPT_RX = re.compile(r'you> |\x00')
AGENT_RX = re.compile(r'agent> ')
RESULT_RX = re.compile(r'The result is (-?\d+)\.')
TAG_RX = re.compile(r'"tag":(-?\d+)')
SCHED_LINE_RX = re.compile(r'schedule #1: ([^\n]*)')
ANSI_RX = re.compile(r'\x1b\[[0-9;]*m')
# A sample's threads of interest, by role (full names; the short ones where
# RT_NAME_MAX cuts them: src/runtime names them ObjectName::new(full, short)).
THREADS = (('loop', ('AgentLoop', 'AgLoop')), ('cli', ('AgentCLI', 'AgCli')),
           ('mcp', ('AgentMcp', 'AgMcp')), ('schedule', ('AgentSched', 'AgSched')))


def now():
    return time.monotonic()


def plain(text):
    return ANSI_RX.sub('', text)


def kind_of(n):
    """The kind a marker N belongs to."""
    if CONSOLE_BASE <= n < WEB_BASE:
        return 'console'
    if WEB_BASE <= n < SCHEDULE_N:
        return 'web'
    if n == SCHEDULE_N:
        return 'schedule'
    if MCP_BASE <= n < MCP_BASE + 100000:
        return 'mcp'
    return 'unknown'


def markers(text):
    """(kind, N) of every marker in an answer: "The result is V." (V = N + 7,
    the schedule's 300005) and the tag of a board_mem result."""
    out = []
    for m in RESULT_RX.finditer(text):
        v = int(m.group(1))
        out.append(('schedule', SCHEDULE_N) if v == SCHEDULE_ANSWER else (kind_of(v - ADDEND), v - ADDEND))
    for m in TAG_RX.finditer(text):
        out.append((kind_of(int(m.group(1))), int(m.group(1))))
    return out


def percentile(values, p):
    if not values:
        return None
    v = sorted(values)
    k = min(len(v) - 1, max(0, int(round(p / 100.0 * (len(v) - 1)))))
    return v[k]


def longest_gap(times, start, end):
    """The longest stretch without an answer in [start, end]."""
    pts = [start] + sorted(t for t in times if start <= t <= end) + [end]
    return max(b - a for a, b in zip(pts, pts[1:])) if len(pts) > 1 else end - start


class Soak:
    def __init__(self, a):
        self.a = a
        self.board_kind = a.board
        self.lock = threading.Lock()
        self.stop = threading.Event()
        # Every request: {kind, n, sent, answered (s from t0 or None),
        # outcome ok|error|refused|wrong|lost, detail}
        self.requests = []
        self.samples = []   # heap/stack samples: {t, used, max, total, stacks}
        self.sched_seen = []  # (t, text) of each `schedule #1:` line
        self.sched_pos = 0
        self.wrong = []     # (where, what)
        self.notes = []
        self.bad = {'sent': 0, '401': 0, '429': 0, 'other': 0, 'lost': 0, 'retry_after': [], 'bursts': 0,
                    'windows': []}
        self.t0 = None
        self.run = None

    # -- bookkeeping ----------------------------------------------------------
    def t(self):
        return now() - self.t0

    def add(self, req):
        with self.lock:
            self.requests.append(req)
        return req

    def wrong_channel(self, where, text):
        with self.lock:
            self.wrong.append((where, drive.one_line(text)[:200]))

    def sample(self, t, doc, source):
        try:
            s = {'t': round(t, 2), 'used': int(doc['used']), 'max': int(doc['max']), 'total': int(doc['total']),
                 'stacks': {k: [int(v[0]), int(v[1])] for k, v in doc.get('stacks', {}).items()}, 'via': source}
        except (KeyError, TypeError, ValueError, IndexError):
            return False
        with self.lock:
            self.samples.append(s)
        return True

    # -- the console (main thread) -------------------------------------------
    def scan_schedule(self):
        """Count the `schedule #1: <reply>` lines (the schedule's log of
        each reply) that arrived since the last look."""
        b = self.run.board
        end = b.buf.rfind('\n')
        if end <= self.sched_pos:
            return
        for m in SCHED_LINE_RX.finditer(plain(b.buf[self.sched_pos:end])):
            text = m.group(1).strip()
            self.sched_seen.append((self.t(), text))
            found = markers(text)
            if any(k != 'schedule' for k, _ in found):
                self.wrong_channel('a scheduled reply (its log line)', text)
        self.sched_pos = end

    def web_on_console(self, text):
        """A WebNet answer shown anywhere on the console (log lines left
        out: the loop logs the tool calls it makes for every channel)."""
        for line in text.splitlines():
            if drive.LOG_LINE.match(line):
                continue
            line = drive.LOG_FALLBACK.sub('', line)
            for kind, n in markers(line):
                if kind in ('web', 'mcp'):
                    self.wrong_channel('the console shows the %s answer to #%d' % (kind, n), line)

    def console_text(self, n):
        return ('boardmem %d' % n) if self.board_kind == 'lm3s' else ('what is %d+%d?' % (ADDEND, n))

    def console_reply(self, q):
        """The reply to the console question `q` once the chat showed it
        (its last `agent> ` segment before the next prompt), else None."""
        b = self.run.board
        m = AGENT_RX.search(b.buf, q['mark'])
        if not m:
            return None
        pm = PROMPT_RX.search(b.buf, m.end())
        if not pm:
            return None
        region = b.buf[m.start():pm.start()]
        q['end'] = pm.end()
        parts = region.split('agent> ')
        # Before the last: replies to scheduled prompts that came first.
        for other in parts[:-1]:
            text = drive.reply_text(other)
            if any(k not in ('schedule',) for k, _ in markers(text)):
                self.wrong_channel('the console, shown before the reply to %r' % q['text'], text)
        return parts[-1]

    def classify(self, req, text, expect_kind):
        """ok: its own marker (and no other); wrong: another request's
        marker; error: an answer without a marker (an error reply)."""
        found = markers(text)
        mine = [x for x in found if x == (expect_kind, req['n'])]
        others = [x for x in found if x != (expect_kind, req['n'])]
        if others:
            req['outcome'] = 'wrong'
            self.wrong_channel('the %s answer to #%d' % (expect_kind, req['n']), text)
        elif mine:
            req['outcome'] = 'ok'
            # The same answer shown more than once (the chat's known
            # double print: tests/qemu/README.md, abilities).
            if len(mine) > 1:
                req['shown'] = len(mine)
        else:
            req['outcome'] = 'error'
        req['detail'] = drive.one_line(text)[:160]

    def console_loop(self, end_t):
        b = self.run.board
        q = None
        i = 0
        next_due = now() + 3
        stuck = None
        while True:
            t = now()
            if q is None:
                if t >= end_t:
                    break
                if t >= next_due:
                    i += 1
                    n = CONSOLE_BASE + i
                    q = self.add({'kind': 'console', 'n': n, 'text': self.console_text(n), 'sent': self.t(),
                                  'answered': None, 'outcome': 'lost', 'mark': len(b.buf)})
                    b.send(q['text'] + '\r')
                    next_due = t + CONSOLE_EVERY_S
            else:
                seg = self.console_reply(q)
                if seg is not None:
                    q['answered'] = self.t()
                    text = drive.reply_text(seg)
                    self.classify(q, text, 'console')
                    if self.board_kind == 'lm3s':
                        m = re.search(r'Result:\s*(\{.*\})', text)
                        doc = None
                        if m:
                            try:
                                doc = json.loads(re.sub(r'\s+', '', m.group(1)))
                            except ValueError:
                                doc = None
                        if not doc or not self.sample(q['sent'], doc, 'console'):
                            self.notes.append('console #%d: no board_mem figures in the reply: %s'
                                              % (q['n'], q['detail']))
                    b.pos = q['end']
                    q = None
                elif t >= end_t + DRAIN_S:
                    stuck = q
                    break
            b.quiet(0.2)
            self.scan_schedule()
        if stuck:
            raise Fail('the console question %r typed at %.0f s has no reply %d s after the load ended: the chat '
                       'is stuck' % (stuck['text'], stuck['sent'], DRAIN_S))

    # -- MCP (A9) ------------------------------------------------------------
    def mcp_call(self, web, body, token, sid=None, timeout=30):
        headers = {'Authorization': 'Bearer ' + token}
        if sid:
            headers['Mcp-Session-Id'] = sid
        return drive.mcp_post(web, body, headers, timeout=timeout)

    def mcp_good(self):
        web = drive.Web(self.a.mcp_port)
        sid = None
        i = 0
        next_t = now()
        while not self.stop.is_set():
            i += 1
            if sid is None:
                req = self.add({'kind': 'mcp', 'n': None, 'what': 'initialize', 'sent': self.t(), 'answered': None,
                                'outcome': 'lost'})
                body = drive.INITIALIZE
            else:
                tag = MCP_BASE + i
                req = self.add({'kind': 'mcp', 'n': tag, 'what': 'tools/call', 'sent': self.t(), 'answered': None,
                                'outcome': 'lost'})
                body = json.dumps({'jsonrpc': '2.0', 'id': i, 'method': 'tools/call',
                                   'params': {'name': 'board_mem', 'arguments': {'tag': tag}}})
            t_send = now()
            try:
                r = self.mcp_call(web, body, self.a.mcp_token, sid)
            except (OSError, Fail) as e:
                req['detail'] = 'no answer: %s' % e
                r = None
            if r is not None:
                req['answered'] = self.t()
                req['latency'] = now() - t_send
                req['status'] = r.status
                if r.status == 429:
                    req['outcome'] = 'refused'
                    req['retry_after'] = r.header('retry-after')
                elif req['what'] == 'initialize':
                    if r.status == 200 and r.header('mcp-session-id'):
                        sid = r.header('mcp-session-id')
                        req['outcome'] = 'ok'
                    else:
                        req['outcome'] = 'error'
                        req['detail'] = 'initialize: HTTP %d %s' % (r.status, r.text()[:160])
                elif r.status == 404:
                    # The session is gone: a new one next time.
                    sid = None
                    req['outcome'] = 'error'
                    req['detail'] = 'HTTP 404 (session gone)'
                else:
                    msg = drive.rpc_json(r) or {}
                    content = (msg.get('result') or {}).get('content') or []
                    text = content[0].get('text', '') if content and isinstance(content[0], dict) else ''
                    if r.status == 200 and text:
                        self.classify(req, text, 'mcp')
                        if req['outcome'] == 'ok':
                            try:
                                doc = json.loads(text)
                                self.sample(req['sent'], doc, 'mcp')
                                req['busy'] = doc.get('busy')
                            except (ValueError, AttributeError):
                                req['outcome'] = 'error'
                    else:
                        req['outcome'] = 'error'
                        req['detail'] = 'HTTP %d %s' % (r.status, r.text()[:160])
            next_t += MCP_EVERY_S
            self.stop.wait(max(0.0, next_t - now()))
        if sid:
            try:
                web.raw(('DELETE %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\n\r\n'
                         % (drive.MCP_PATH, self.a.mcp_token, sid)).encode(), timeout=10)
            except (OSError, Fail):
                pass

    def mcp_bad(self):
        """Guesses tokens in bursts (see BAD_*): every answer counted."""
        web = drive.Web(self.a.mcp_port)
        rng = random.Random(self.a.seed)
        next_burst = now() + BAD_FIRST_S
        while not self.stop.wait(max(0.0, min(1.0, next_burst - now()))):
            if now() < next_burst:
                continue
            self.bad['bursts'] += 1
            first = self.t()
            refused = 0
            retry = None
            for _ in range(40):
                if self.stop.is_set():
                    break
                guess = ''.join(rng.choice(string.ascii_letters + string.digits) for _ in range(24))
                self.bad['sent'] += 1
                try:
                    r = self.mcp_call(web, drive.INITIALIZE, guess)
                except (OSError, Fail):
                    self.bad['lost'] += 1
                    r = None
                if r is not None:
                    if r.status == 401:
                        self.bad['401'] += 1
                    elif r.status == 429:
                        self.bad['429'] += 1
                        refused += 1
                        ra = r.header('retry-after')
                        self.bad['retry_after'].append(ra)
                        retry = int(ra) if ra and ra.isdigit() else None
                    else:
                        self.bad['other'] += 1
                if refused > BAD_AFTER_429:
                    break
                self.stop.wait(2.0 if refused else 1.0)
            self.bad['windows'].append((first, self.t()))
            next_burst = now() + (retry if retry is not None else TOKEN_WINDOW_S) + BAD_PAUSE_S

    # -- WebNet (A9, SOAK_WEB) -------------------------------------------------
    def web_chat(self):
        web = drive.Web(self.a.web_port)
        i = 0
        next_t = now() + 1
        while not self.stop.wait(max(0.0, next_t - now())):
            i += 1
            n = WEB_BASE + i
            req = self.add({'kind': 'web', 'n': n, 'sent': self.t(), 'answered': None, 'outcome': 'lost'})
            t_send = now()
            try:
                r = web.post('/cgi-bin/chat', json.dumps({'message': 'what is %d+%d?' % (ADDEND, n),
                                                          'token': self.a.web_token}), timeout=120)
            except (OSError, Fail) as e:
                req['detail'] = 'no answer: %s' % e
                r = None
            if r is not None:
                req['answered'] = self.t()
                req['latency'] = now() - t_send
                req['status'] = r.status
                try:
                    doc = json.loads(r.text())
                except ValueError:
                    doc = {}
                text = doc.get('response') or doc.get('error') or r.text()
                if r.status == 429:
                    # The guesser's window: one table of wrong tokens for
                    # WebNet and MCP, one address through slirp.
                    req['outcome'] = 'refused'
                    req['retry_after'] = r.header('retry-after')
                    req['detail'] = drive.one_line(str(text))[:160]
                else:
                    self.classify(req, str(text), 'web')
                    if r.status != 200 and req['outcome'] == 'ok':
                        req['outcome'] = 'error'
            next_t = max(next_t + WEB_EVERY_S, now())

    # -- the run ---------------------------------------------------------------
    def shell(self, cmd, timeout=20):
        out = self.run.board.run(cmd, timeout=timeout)
        self.scan_schedule()
        return out

    def go(self):
        a = self.a
        run = self.run
        fw = os.path.basename(a.bsp.rstrip('/'))
        lm3s = a.board == 'lm3s'
        hostfwds = []
        if not lm3s:
            a.mcp_port = drive.free_port()
            hostfwds.append((a.mcp_port, drive.MCP_PORT))
            if a.web_token:
                a.web_port = drive.free_port()
                hostfwds.append((a.web_port, 80))
        kw = dict(machine='lm3s6965evb') if lm3s else dict(sd=run.sd_image('soak'))
        heap = run.boot(a.bsp, fw, hostfwds=tuple(hostfwds), **kw)
        b = run.board
        rep = self.report
        rep['heap']['boot'] = heap['used']
        rep['heap']['total'] = heap['total']
        if lm3s:
            m = re.search(r'RAM file system of (\d+) bytes mounted at /', b.buf)
            if not m:
                raise Fail('the board did not mount its RAM file system at "/" (the schedule keeps its file there)')
            rep['ramfs_bytes'] = int(m.group(1))
            mark = len(b.buf)
            out = self.shell('soak_uptime %d' % UPTIME_S)
            if not re.search(r'soak: the tick moved forward to \d+', out):
                raise Fail('`soak_uptime %d` (the load run\'s tool file) printed %r' % (UPTIME_S, drive.one_line(out)))
            # A second of SysTicks at the new tick: no crash report, and
            # the shell still answers.
            b.quiet(1)
            crash = FATAL.search(b.buf, mark)
            if crash:
                raise Fail('`soak_uptime %d`: the firmware then reported %r' % (UPTIME_S, drive.one_line(
                    b.buf[crash.start():crash.start() + 300])))
            run.shell_alive('after `soak_uptime %d`' % UPTIME_S)
            rep['uptime_s'] = UPTIME_S
        base = heap['used']
        rep['heap']['fd_slots_boot'] = self.fd_slots()
        if a.web_token:
            # WebNet cannot be stopped: what it takes at the first start
            # stays (its thread, socket, CGI table). One start and cleanup
            # without load first: the heap after it is the baseline. Its
            # connections, at once, also grow the kernel's tables of
            # sockets (SAL) and descriptors (DFS), 4 slots at a time, kept
            # for good: `soak_grow` (the tool file's) opens as many sockets
            # at once as lwIP allows and closes them, so the load cannot
            # grow those tables any more after the baseline.
            self.chat_start()
            b.send('\x04')
            b.expect(r'leaving the agent chat', 10, 'Ctrl-D leaves the chat')
            run.shell_alive('after Ctrl-D')
            self.shell('cleanup_agent_entry', 40)
            m = re.search(r'soak: (\d+) sockets open at once \((\d+) TCP\)', self.shell('soak_grow'))
            if not m:
                raise Fail('`soak_grow` (the load run\'s tool file) printed no count of sockets')
            rep['heap']['sockets_grown'] = int(m.group(1))
            self.web_settle()
            base = b.free()['used']
            rep['heap']['base_after_webnet_start'] = base
        rep['heap']['base'] = base
        rep['heap']['fd_slots_base'] = self.fd_slots()
        out = self.shell('agent_schedule add every %ds "%s"' % (SCHEDULE_EVERY_S, SCHEDULE_PROMPT))
        if not re.search(r'scheduled #1\b', out):
            raise Fail('`agent_schedule add` printed %r' % drive.one_line(out))
        rep['heap']['after_schedule_add'] = b.free()['used']
        log = self.chat_start()
        if not re.search(r'schedule: 1 scheduled prompt\(s\)', log):
            raise Fail('the start did not log "schedule: 1 scheduled prompt(s)": %s' % drive.one_line(log))
        if not lm3s and not re.search(r'\[mcp\] serving MCP', log):
            raise Fail('the start did not log "[mcp] serving MCP": %s' % drive.one_line(log))
        m = re.search(r'agent started: used (\d+)', log)
        if m:
            rep['heap']['started_log'] = int(m.group(1))
        self.sched_pos = len(b.buf)
        b.pos = len(b.buf)
        # The load.
        load_mark = len(b.buf)
        self.t0 = now()
        end_t = self.t0 + a.minutes * 60
        threads = []
        if not lm3s:
            threads.append(threading.Thread(target=self.mcp_good, name='mcp-good', daemon=True))
            threads.append(threading.Thread(target=self.mcp_bad, name='mcp-bad', daemon=True))
            if a.web_token:
                threads.append(threading.Thread(target=self.web_chat, name='web', daemon=True))
        for th in threads:
            th.start()
        stopper = threading.Timer(max(0.0, end_t - now()), self.stop.set)
        stopper.daemon = True
        stopper.start()
        try:
            self.console_loop(end_t)
        finally:
            self.stop.set()
            for th in threads:
                th.join(DRAIN_S)
        rep['load_s'] = round(self.t(), 1)
        self.web_on_console(plain(b.buf[load_mark:]))
        # After the load: the chat left, the schedule's last replies, the
        # figures, the cleanup.
        mark = len(b.buf)
        b.send('\x04')
        b.expect(r'leaving the agent chat', 10, 'Ctrl-D leaves the chat')
        run.shell_alive('after Ctrl-D')
        cli = drive.CLI_STACK_LINE.findall(b.since(mark))
        out = plain(self.shell('agent_schedule list'))
        m = re.search(r'#1 every %ds: %s \(runs (\d+), missed (\d+)\)' % (SCHEDULE_EVERY_S, re.escape(SCHEDULE_PROMPT)),
                      out)
        if not m:
            raise Fail('`agent_schedule list` printed %r' % drive.one_line(out))
        runs, missed = int(m.group(1)), int(m.group(2))
        self.shell('agent_schedule del 1')
        # The run in flight, if any, is still answered (its reply logged).
        deadline = now() + 40
        while len(self.sched_seen) < runs and now() < deadline:
            b.quiet(1)
            self.scan_schedule()
        b.quiet(1)
        self.scan_schedule()
        rep['schedule'] = {'runs': runs, 'missed': missed}
        if cli:
            used, size = (int(x) for x in cli[-1])
            rep['stacks_end']['cli'] = {'name': 'AgentCLI', 'used': used, 'size': size, 'from': 'its [mem] line'}
        lt = self.shell('list thread')
        for line in lt.splitlines():
            f = line.split()
            pct = re.search(r'\s(\d+)%', line)
            if len(f) >= 6 and pct and re.match(r'0x[0-9a-fA-F]+$', f[4]):
                for role, names in THREADS:
                    if f[0] in names:
                        rep['stacks_end'][role] = {'name': f[0], 'percent': int(pct.group(1)),
                                                   'size': int(f[4], 16), 'from': 'list thread'}
        before = b.free()
        rep['heap']['before_cleanup'] = before
        t_clean = now()
        self.shell('cleanup_agent_entry', 40)
        rep['cleanup_s'] = round(now() - t_clean, 1)
        if a.web_token:
            self.web_settle()
        after = b.free()
        rep['heap']['after_cleanup'] = after['used']
        rep['heap']['max_after_cleanup'] = after['max']
        rep['heap']['fd_slots_end'] = self.fd_slots()

    def web_settle(self):
        """WebNet's thread holds, while it waits in select(), a block sized
        by the highest descriptor it last waited on (seen with
        RT_USING_MEMTRACE: 32 or 48 bytes, depending on the connections of
        the moment). One page request with nothing else open puts it in the
        same state before each of the two `free`s the cleanup compares."""
        try:
            r = drive.Web(self.a.web_port).get('/cgi-bin/agent', timeout=20)
            self.report['heap'].setdefault('settle_status', []).append(r.status)
        except (OSError, Fail) as e:
            self.notes.append('the page request before a `free` failed: %s' % e)
        self.run.board.quiet(1)

    def fd_slots(self):
        """The slots of DFS's descriptor table (the soak_fds command of the
        load run's tool file), or None."""
        m = re.search(r'soak: descriptor table of (-?\d+) slots', self.shell('soak_fds'))
        return int(m.group(1)) if m else None

    def chat_start(self):
        b = self.run.board
        mark = len(b.buf)
        b.send('main_loop_entry\r')
        b.expect(r'Agent chat:[^\n]*\n', 30, 'main_loop_entry opens the chat')
        b.expect(re.escape(drive.CHAT_PROMPT), 5, 'the chat prompt')
        b.quiet(1)
        return plain(b.since(mark))

    # -- the report ------------------------------------------------------------
    def summarise(self):
        a = self.a
        rep = self.report
        load = rep.get('load_s') or a.minutes * 60
        kinds = {}
        for kind in ('console', 'web', 'mcp'):
            rs = [r for r in self.requests if r['kind'] == kind]
            if not rs and kind != 'console':
                continue
            answered = [r for r in rs if r['answered'] is not None]
            k = {'sent': len(rs), 'answered': len(answered), 'lost': len(rs) - len(answered),
                 'ok': sum(r['outcome'] == 'ok' for r in rs), 'error_reply': sum(r['outcome'] == 'error' for r in rs),
                 'refused_429': sum(r['outcome'] == 'refused' for r in rs),
                 'wrong': sum(r['outcome'] == 'wrong' for r in rs),
                 'shown_twice': sum(1 for r in rs if r.get('shown', 1) > 1)}
            lat = [r['answered'] - r['sent'] for r in answered]
            k['latency_s'] = {'median': percentile(lat, 50), 'p99': percentile(lat, 99), 'max': max(lat or [0])}
            k['longest_gap_s'] = round(longest_gap([r['answered'] for r in answered], 0, load), 1)
            k['longest_gap_not_refused_s'] = round(longest_gap([r['answered'] for r in answered
                                                                if r['outcome'] != 'refused'], 0, load), 1)
            k['statuses'] = dict(collections.Counter(str(r.get('status', '-')) for r in answered))
            k['error_texts'] = collections.Counter(r.get('detail') for r in rs
                                                   if r['outcome'] in ('error', 'lost')).most_common(6)
            if kind == 'mcp':
                calls = [r for r in answered if r.get('what') == 'tools/call' and r['outcome'] == 'ok']
                lat = [r['latency'] for r in calls]
                k['tool_call_latency_s'] = {'median': percentile(lat, 50), 'p99': percentile(lat, 99),
                                            'max': max(lat or [0]), 'calls': len(lat)}
                # The board's own word (board_mem's "busy": agent_is_busy()
                # as the tool ran): the loop answering a message, or one
                # waiting.
                for flag, name in ((1, 'busy'), (0, 'idle')):
                    sel = [r['latency'] for r in calls if r.get('busy') == flag]
                    k['tool_call_latency_loop_%s_s' % name] = {
                        'median': percentile(sel, 50), 'p99': percentile(sel, 99), 'calls': len(sel)}
                k['longest_gap_between_results_s'] = round(
                    longest_gap([r['answered'] for r in calls], 0, load), 1)
                k['errors'] = [r.get('detail') for r in rs if r['outcome'] == 'error'][:10]
            kinds[kind] = k
        # The schedule: its runs, its logged replies.
        sched_answered = [t for t, _ in self.sched_seen]
        ok = sum(1 for _, text in self.sched_seen if markers(text) == [('schedule', SCHEDULE_N)])
        runs = rep.get('schedule', {}).get('runs', 0)
        kinds['schedule'] = {'sent': runs, 'answered': len(self.sched_seen),
                             'lost': max(0, runs - len(self.sched_seen)), 'ok': ok,
                             'error_reply': len(self.sched_seen) - ok,
                             'missed_while_waiting': rep.get('schedule', {}).get('missed'),
                             'longest_gap_s': round(longest_gap(sched_answered, 0, load), 1),
                             'wrong': sum(1 for w in self.wrong if w[0].startswith('a scheduled'))}
        if self.bad['sent']:
            kinds['mcp_token_guesser'] = dict(self.bad)
        rep['kinds'] = kinds
        rep['wrong_channel'] = self.wrong
        # Faults the server drew.
        faults = {}
        total = 0
        for line in self.run.server.lines():
            m = re.match(r'\[server\] answer \d+: scenario=(\S+)', line)
            if m:
                total += 1
                f = m.group(1).split(':')[0]
                if f.startswith('fault-'):
                    faults[f[len('fault-'):]] = faults.get(f[len('fault-'):], 0) + 1
        rep['model_requests'] = total
        rep['faults_drawn'] = faults
        # Heap and stacks over time.
        samples = sorted(self.samples, key=lambda s: s['t'])
        rep['samples'] = [[s['t'], s['used'], s['max']] + [self.stack_of(s, role) for role, _ in THREADS]
                          for s in samples]
        rep['sample_columns'] = ['t_s', 'used', 'max_used'] + ['stack_used_' + r for r, _ in THREADS]
        warm = warmup_s(load)
        at_warm = [s['max'] for s in samples if s['t'] <= warm]
        late = [s['max'] for s in samples if s['t'] > warm]
        end_max = max(late + [rep['heap'].get('before_cleanup', {}).get('max') or 0]) if samples else None
        h = rep['heap']
        h['warmup_s'] = round(warm, 1)
        h['max_used_at_warmup'] = max(at_warm) if at_warm else None
        h['max_used_end'] = end_max
        h['drift_after_warmup'] = (end_max - max(at_warm)) if at_warm and end_max is not None else None
        h['drift_bound'] = DRIFT_BOUND[a.board]
        h['samples'] = len(samples)
        h['used_min'] = min((s['used'] for s in samples), default=None)
        h['used_max'] = max((s['used'] for s in samples), default=None)
        stacks = {}
        for role, names in THREADS:
            seen = [(s['stacks'].get(n), n) for s in samples for n in names if s['stacks'].get(n)]
            if seen:
                stacks[role] = {'name': seen[0][1], 'size': seen[0][0][1], 'max_used': max(v[0] for v, _ in seen)}
        rep['stacks'] = stacks

    @staticmethod
    def stack_of(s, role):
        names = dict(THREADS)[role]
        for n in names:
            if n in s['stacks']:
                return s['stacks'][n][0]
        return None

    def bounds(self):
        """[(what, ok, detail)] of every bound of the run."""
        rep = self.report
        out = []
        for kind, k in rep.get('kinds', {}).items():
            if kind == 'mcp_token_guesser':
                out.append(('token guesser: every request answered (401 or 429, Retry-After on each 429)',
                            k['lost'] == 0 and k['other'] == 0 and k['429'] > 0
                            and all(r and r.isdigit() and 1 <= int(r) <= TOKEN_WINDOW_S for r in k['retry_after']),
                            '%d sent, %d x 401, %d x 429 (Retry-After %s), %d other, %d lost, %d burst(s)'
                            % (k['sent'], k['401'], k['429'], ','.join(sorted(set(map(str, k['retry_after'])))),
                               k['other'], k['lost'], k['bursts'])))
                continue
            out.append(('%s: none lost' % kind, k['lost'] == 0,
                        '%d sent, %d answered, %d lost' % (k['sent'], k['answered'], k['lost'])))
            out.append(('%s: no reply on the wrong channel' % kind, k.get('wrong', 0) == 0,
                        '%d wrong' % k.get('wrong', 0)))
            if kind == 'mcp':
                limit = TOKEN_WINDOW_S + MCP_RESULT_SLACK_S
                out.append(('mcp: longest time without a tool result at most %d s (the guesser\'s 60 s window '
                            'included: one address through slirp)' % limit,
                            k['longest_gap_between_results_s'] <= limit, '%.1f s' % k['longest_gap_between_results_s']))
                out.append(('mcp: longest time without an HTTP answer at most %d s' % MCP_ANSWER_GAP_S,
                            k['longest_gap_s'] <= MCP_ANSWER_GAP_S, '%.1f s' % k['longest_gap_s']))
            elif kind == 'web':
                # The guesser's 60 s window refuses the page too (above).
                out.append(('web: longest time without an answer other than 429 at most %d s (not starved; the '
                            'guesser\'s window refuses it too: one address, one table of wrong tokens)' % STARVE_S,
                            k['longest_gap_not_refused_s'] <= STARVE_S, '%.1f s (with the 429s: %.1f s)'
                            % (k['longest_gap_not_refused_s'], k['longest_gap_s'])))
            else:
                out.append(('%s: longest time without an answer at most %d s (not starved)' % (kind, STARVE_S),
                            k['longest_gap_s'] <= STARVE_S, '%.1f s' % k['longest_gap_s']))
        if rep.get('wrong_channel'):
            out.append(('no answer anywhere on another channel', False,
                        '; '.join('%s: %s' % w for w in rep['wrong_channel'][:5])))
        h = rep['heap']
        if h.get('drift_after_warmup') is None:
            out.append(('max_used: grows at most %d bytes after the warm-up' % h['drift_bound'], False,
                        'no heap samples (%d)' % h.get('samples', 0)))
        else:
            out.append(('max_used: grows at most %d bytes after the first %.0f s' % (h['drift_bound'], h['warmup_s']),
                        h['drift_after_warmup'] <= h['drift_bound'],
                        '%+d bytes (%d at %.0f s, %d at the end)' % (h['drift_after_warmup'], h['max_used_at_warmup'],
                                                                      h['warmup_s'], h['max_used_end'])))
        if 'after_cleanup' in h:
            ok, why = heap_back(h)
            out.append(('heap back after the final cleanup (baseline: %s)' % (
                            'after WebNet\'s first start and cleanup' if 'base_after_webnet_start' in h else 'boot'),
                        ok, why))
        return out


# The heap's block header (RT-Thread's small mem on these boards,
# RT_ALIGN_SIZE 8: at most 16 bytes).
HEAP_HEADER_MAX = 16


def heap_back(h):
    """(ok, what) of the heap after the final cleanup against the baseline.
    The only difference allowed is what DFS's descriptor table grew by
    (the kernel keeps it for good; soak_fds reads its slots): 4 bytes a
    slot when it existed, plus one block header when it did not."""
    diff = h['after_cleanup'] - h['base']
    before, after = h.get('fd_slots_base'), h.get('fd_slots_end')
    text = 'used %d, baseline %d (%+d)' % (h['after_cleanup'], h['base'], diff)
    if diff == 0:
        return True, text
    if before is None or after is None or after <= before:
        return False, text + ('; DFS\'s descriptor table %s' % ('did not grow (%d slots)' % after
                                                              if after is not None else 'not read'))
    grown = (after - before) * 4
    ok = diff == grown if before > 0 else grown <= diff <= grown + HEAP_HEADER_MAX
    return ok, text + ('; DFS\'s descriptor table grew from %d to %d slots (%s%d bytes, the kernel\'s, kept for '
                       'good)%s' % (before, after, '' if before > 0 else 'a new block: ', grown,
                                    '' if ok else ': that does not explain the difference'))


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--server', required=True)
    p.add_argument('--logs', required=True)
    p.add_argument('--board', choices=('a9', 'lm3s'), required=True)
    p.add_argument('--bsp', required=True)
    p.add_argument('--minutes', type=int, required=True)
    p.add_argument('--seed', type=int, default=37)
    p.add_argument('--mcp-token', default='')
    p.add_argument('--web-token', default='', help='the WebNet page next to the CLI channel, with this token')
    p.add_argument('--web-why', default='', help='why the WebNet chat is off (for the report)')
    p.add_argument('--sd-dir', default='')
    a = p.parse_args()
    if a.board == 'a9' and not a.mcp_token:
        p.error('--board a9 needs --mcp-token')
    a.sd_dir = a.sd_dir or os.path.join(os.path.dirname(os.path.abspath(a.logs)), 'sd')
    a.faults = FAULTS % a.seed
    a.server_args = ['--faults', a.faults]
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda n, f: sys.exit('load run: FAIL: stopped by signal %d' % n))
    for old in os.listdir(a.logs):
        if old.startswith('serial-') and old.endswith('.txt'):
            os.remove(os.path.join(a.logs, old))
    s = Soak(a)
    # What was measured: this tree as the run starts.
    measured = commit()
    s.report = {'date': time.strftime('%Y-%m-%d'), 'board': a.board,
                'machine': 'qemu-system-arm -M %s' % ('lm3s6965evb' if a.board == 'lm3s' else 'vexpress-a9'),
                'firmware': os.path.basename(a.bsp.rstrip('/')), 'minutes': a.minutes, 'seed': a.seed,
                'faults': a.faults, 'web': bool(a.web_token), 'web_why': a.web_why or None,
                'commit': measured,
                'every_s': {'schedule': SCHEDULE_EVERY_S, 'console': CONSOLE_EVERY_S,
                            'mcp': MCP_EVERY_S if a.board == 'a9' else None,
                            'web': WEB_EVERY_S if a.web_token else None},
                'heap': {}, 'stacks_end': {}}
    t_start = now()
    failure = None
    s.run = drive.Run(a)
    try:
        s.go()
    except (Fail, Timeout) as e:
        failure = str(e)
        if s.run.board:
            failure += '\n  serial console:' + s.run.excerpt(max(0, len(s.run.board.buf) - 3000), 20)
    finally:
        s.stop.set()
        s.run.close()
    s.summarise()
    bounds = s.bounds()
    if failure:
        bounds.insert(0, ('the run itself', False, failure))
    s.report['bounds'] = [{'what': w, 'ok': ok, 'value': d} for w, ok, d in bounds]
    s.report['ok'] = all(ok for _, ok, _ in bounds)
    s.report['notes'] = s.notes[:20]
    s.report['run_s'] = round(now() - t_start, 1)
    path = os.path.join(a.logs, 'soak.json')
    with open(path, 'w') as f:
        json.dump(s.report, f, indent=1)
    # What it measured, readable.
    rep = s.report
    print('\n== load run: %s, %d minute(s), %s (report: %s)' % (rep['firmware'], a.minutes, rep['machine'], path))
    print('%-26s %6s %8s %6s %6s %6s %6s %6s %9s' % ('kind', 'sent', 'answered', 'lost', 'ok', 'error', '429',
                                                   'wrong', 'max gap'))
    for kind, k in rep.get('kinds', {}).items():
        if kind == 'mcp_token_guesser':
            print('%-26s %6d %8d %6d %6s %6s %6d %6s' % (kind, k['sent'], k['401'] + k['429'] + k['other'],
                                                        k['lost'], '-', '-', k['429'], '-'))
            continue
        print('%-26s %6d %8d %6d %6d %6d %6d %6d %8.1fs' % (kind, k['sent'], k['answered'], k['lost'], k['ok'],
                                                             k['error_reply'], k.get('refused_429', 0),
                                                             k.get('wrong', 0), k['longest_gap_s']))
    mcp = rep.get('kinds', {}).get('mcp')
    if mcp:
        lt, lb, li = (mcp['tool_call_latency_s'], mcp['tool_call_latency_loop_busy_s'],
                      mcp['tool_call_latency_loop_idle_s'])
        print('MCP tool call latency: median %s s, p99 %s s (%d calls); the loop busy: median %s s, p99 %s s (%d '
              'calls); idle: median %s s, p99 %s s (%d calls)'
              % (fmt(lt['median']), fmt(lt['p99']), lt['calls'], fmt(lb['median']), fmt(lb['p99']), lb['calls'],
                 fmt(li['median']), fmt(li['p99']), li['calls']))
    print('model requests %d; faults drawn: %s' % (rep.get('model_requests', 0), rep.get('faults_drawn')))
    h = rep['heap']
    print('heap: total %s, boot %s, baseline %s, used %s..%s during the load, max_used %s at %.0f s -> %s at the '
          'end, after cleanup %s (%d samples)' % (h.get('total'), h.get('boot'), h.get('base'), h.get('used_min'),
                                                  h.get('used_max'), h.get('max_used_at_warmup'), h.get('warmup_s', 0),
                                                  h.get('max_used_end'), h.get('after_cleanup'), h.get('samples', 0)))
    for role, st in rep.get('stacks', {}).items():
        print('stack %-9s %-10s most used %d of %d bytes (%d%%)' % (role, st['name'], st['max_used'], st['size'],
                                                                    st['max_used'] * 100 // st['size']))
    for role, st in rep.get('stacks_end', {}).items():
        print('stack at the end %-9s %s' % (role, st))
    for n in rep['notes'][:5]:
        print('note: %s' % n)
    print()
    for b in rep['bounds']:
        print('%-4s %s: %s' % ('PASS' if b['ok'] else 'FAIL', b['what'], b['value']))
    if not rep['ok']:
        print('\nload run: FAIL: %d bound(s) broken' % sum(not b['ok'] for b in rep['bounds']))
        sys.exit(1)
    print('\nload run: every bound held')


def commit():
    """The commit of this tree (and whether it had changes), as
    tools/figures names what it measured."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        head = subprocess.run(['git', '-C', repo, 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(['git', '-C', repo, 'diff', '--quiet', 'HEAD'], timeout=10).returncode != 0
    except (OSError, subprocess.SubprocessError):
        return None
    return (head + (' with uncommitted changes' if dirty else '')) if head else None


def fmt(v):
    return '-' if v is None else '%.3f' % v


if __name__ == '__main__':
    main()

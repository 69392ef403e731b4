#!/usr/bin/env python3
"""Boots the firmwares built by tests/qemu/run.sh and drives their serial
consoles against the scripted server; prints a result per step and the
figures. Exit status 1 when any step failed. Std lib only."""
import argparse
import gzip
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # nothing written into the repo
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from board import GUEST_SERVER, PROMPT, PROMPT_NO_DFS, Board, Timeout  # noqa: E402
import mapsize  # noqa: E402
import sdcard  # noqa: E402
import tls_front  # noqa: E402
import upstream_tools  # noqa: E402

QUESTION = 'what is (2+3)*4?'
ANSWER = r'The result is 20\.'
CHAT_PROMPT = 'you> '
LOOP_THREAD = 'AgentLoop'
# The library's threads under their full names and the short ones a board
# with a smaller RT_NAME_MAX gets (src/runtime/agent_loop.rs: the full name
# where it is shorter than RT_NAME_MAX).
THREAD_NAMES = {'loop': ('AgentLoop', 'AgLoop'), 'cli': ('AgentCLI', 'AgCli')}
# The CLI thread's own line as it ends (debug level; `list thread` cannot
# see that thread afterwards): its stack's high-water mark.
CLI_STACK_LINE = re.compile(r'\[mem\] CLI thread stack high-water: (\d+) of (\d+) bytes')
# The note the library appends to an answer cut at PKG_AGENT_MAX_CONTENT_LEN
# (src/runtime/chat.rs, CUT_NOTE).
CUT_NOTE = r'\[answer cut: longer than PKG_AGENT_MAX_CONTENT_LEN\]'
# The MCP firmware's settings (tests/qemu/layout.py keeps the Kconfig
# defaults): port, endpoint, sessions at once.
MCP_PORT = 8000
MCP_PATH = '/mcp'
MCP_SESSIONS = 4
MCP_THREAD = 'AgentMcp'
# The MCP client's remote servers (tests/mcp/scripted_server.py, the
# official SDK), as the board sees them: the addresses PKG_AGENT_MCP_SERVERS
# names (tests/qemu/run.sh, in this order), which guestfwds relay to the
# servers on 127.0.0.1. The first answers with SSE streams, the second with
# JSON bodies (--json). Tools of each: sub, echo, fail, registered on the
# board as m<N>_<name> (N: the server's place in the list).
REMOTES = ((('10.0.2.101', 8000), [], 'SSE'), (('10.0.2.102', 8000), ['--json'], 'JSON'))
REMOTE_URLS = tuple('http://%s:%d/mcp' % g for g, _, _ in REMOTES)
REMOTE_TOOLS = tuple(tuple('m%d_%s' % (i + 1, t) for t in ('echo', 'fail', 'sub')) for i in range(len(REMOTES)))
INITIALIZE = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
              '"capabilities":{},"clientInfo":{"name":"qemu-drive","version":"1"}}}')


# The TLS firmwares (tests/qemu/layout.py: TLS_REQUEST_TIMEOUT_MS,
# TLS_HTTP_TIMEOUT_MS): the request deadline every fault must be answered
# within, and the slack the driver allows on top (console, QEMU).
TLS_DEADLINE_S = 20
TLS_SLACK_S = 10
# The lm3s firmwares' stall step: how long after the request deadline
# (PKG_AGENT_REQUEST_TIMEOUT_MS, read from the BSP's rtconfig.h) the reply
# may come (webclient's whole-second timeouts, the console).
LM3S_DEADLINE_SLACK_S = 10
TLS_PORT = 443
# PKG_AGENT_TLS_SEED_FILE of the TLS firmwares (tests/qemu/layout.py
# TLS_SEED_FILE): the entropy seed of a board without a hardware RNG.
TLS_SEED_FILE = '/.agent_seed'
# A question whose first round makes the arithmetic model call 16 tools in
# parallel (16 innermost products), then 8, 4, 2 and 1 additions: six
# requests, the first answer about 12 KB of SSE, in 12 KB TLS records from
# the front's large-records mode. 2 * (1 + ... + 16) = 272.
WIDE_QUESTION = ('what is ((((1*2+2*2)+(3*2+4*2))+((5*2+6*2)+(7*2+8*2)))+(((9*2+10*2)+(11*2+12*2))'
                 '+((13*2+14*2)+(15*2+16*2))))?')
WIDE_ANSWER = r'The result is 272\.'
# What a refused connection's reply must name (issue 25: "Error texts name
# the actual cause: CA, name, date, handshake timeout, record size").
# Matched against the reply the chat prints (log lines left out), so the
# generic "check the URL, the CA and the clock" names no cause.
TLS_CAUSES = {
    'wrong-ca': r'(?i)not trusted|untrusted|unknown (CA|issuer|root|authority)|not signed by|issuer|no trusted',
    'expired': r'(?i)expired',
    'not-yet-valid': r'(?i)not (yet )?valid|valid from|future',
    'close-mid-handshake': r'(?i)handshake[^\n]*(clos|reset|hung up|EOF|ended)|(clos|reset|hung up|EOF)[^\n]*handshake',
    'stall-handshake': r'(?i)handshake[^\n]*(tim|deadline)|(tim|deadline)[^\n]*handshake',
}


# The package settings each lm3s firmware's figures name, with where the
# value comes from (rtconfig.h, or the glue's default).
LM3S_SETTINGS = ('PKG_AGENT_LOOP_STACK_SIZE', 'PKG_AGENT_CLI_STACK_SIZE', 'PKG_AGENT_RESP_BUFSZ',
                 'PKG_AGENT_WEB_SOCKET_BUFSZ', 'PKG_AGENT_MAX_CONTENT_LEN', 'PKG_AGENT_MAX_REASONING_LEN',
                 'PKG_AGENT_MAX_TOOL_ARG_LEN', 'PKG_AGENT_MESSAGE_TRIM', 'PKG_AGENT_REQUEST_TIMEOUT_MS',
                 'PKG_AGENT_HTTP_TIMEOUT_MS')


# The 429 step's products, one per firmware of a run (the scripted server
# answers 429 once per message text).
RATE_LIMITED_PRODUCTS = ('6*7', '7*6', '3*14', '14*3', '2*21', '21*2')


class Fail(Exception):
    pass


# The board's limit of wrong tokens (src/net/token_limit.rs, issue 30): after 5
# wrong (or missing) tokens within 60 s of the first, every request that
# needs a token gets 429 with Retry-After until those 60 s have passed.
TOKEN_FAILURES = 5
TOKEN_WINDOW_S = 60
# The log line of a peer blocked (once per window; never the token).
TOKEN_BLOCKED = (r'(\d+\.\d+\.\d+\.\d+) sent %d wrong tokens: refused \(429\) for %d s'
                 % (TOKEN_FAILURES, TOKEN_WINDOW_S))


class TokenWindow:
    """The wrong tokens this driver (and the checks it runs) sent one board.
    Through slirp's hostfwd every host connection reaches the guest from
    10.0.2.2, so the board counts them all against one peer: a step that
    must start from a clean count (the 429 step, the browser test, which
    sends four wrong or missing tokens itself) first waits until 60 s (plus
    a slack for the guest's tick) have passed since the last one noted
    here. Each failure is noted when its answer has arrived, after the
    board counted it: the wait is never too short."""

    SLACK_S = 4

    def __init__(self):
        self.last = None

    def failed(self):
        self.last = time.monotonic()

    def clear(self, board=None):
        """Wait until no failure noted here can be in the board's window
        (reading the board's console meanwhile); returns the seconds
        waited."""
        if self.last is None:
            return 0.0
        left = self.last + TOKEN_WINDOW_S + self.SLACK_S - time.monotonic()
        if left > 0:
            if board:
                board.quiet(left)
            else:
                time.sleep(left)
        self.last = None
        return max(left, 0.0)


LOG_LINE = re.compile(r'^\s*(agent> )?\[\d+\] [EWIDV]/')
# The library's own console line where ulog is not running (a small BSP
# without RT_USING_COMPONENTS_INIT): "[E/agent] text", which may follow
# streamed answer text on the same line.
LOG_FALLBACK = re.compile(r'\[[EWIDV]/[^\]\s]+\] [^\n]*')


def reply_text(reply):
    """What the chat printed as the reply, without the log lines (ulog's
    `[tick] E/tag: ...`, the library's `[E/tag] ...` without ulog) printed
    meanwhile."""
    text = LOG_FALLBACK.sub('', re.sub(r'\x1b\[[0-9;]*m', '', reply))
    keep = [ln for ln in text.splitlines() if ln.strip() and not LOG_LINE.match(ln)]
    return ' '.join(' '.join(keep).replace('agent> ', ' ').split())


def hello_random_tail(r):
    """The 28 bytes of a TLS 1.2 ClientHello random after its first 4:
    mbedTLS 2.28 with MBEDTLS_HAVE_TIME (the package's tls_config.h) puts
    the time there (gmt_unix_time), which differs between boots anyway."""
    return r[8:] if r else r


class Server:
    def __init__(self, exe, log_path, args=()):
        """args: more arguments of the server (the load run's --faults)."""
        self.exe = exe
        self.log_path = log_path
        self.proc = subprocess.Popen([exe] + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(log_path, 'w'), start_new_session=True)
        line = self.proc.stdout.readline().decode()
        m = re.match(r'PORT (\d+)', line)
        if not m:
            raise SystemExit('qemu check: FAIL: the scripted server did not start (%r; log %s)' % (line, log_path))
        self.port = int(m.group(1))
        self.relay = [exe, '--connect', '127.0.0.1:%d' % self.port]

    def lines(self):
        with open(self.log_path, errors='replace') as f:
            return f.read().splitlines()

    def mark(self):
        return len(self.lines())

    def answers(self, mark):
        """(scenario, status, kind) of the answers logged since `mark`."""
        out = []
        for line in self.lines()[mark:]:
            m = re.match(r'\[server\] answer \d+: scenario=(\S+) status=(\d+) (\S+)', line)
            if m:
                out.append((m.group(1), int(m.group(2)), m.group(3)))
        return out

    def offered(self, mark):
        """The tool names each request since `mark` offered the model (the
        `tools=` of the request log lines)."""
        out = []
        for line in self.lines()[mark:]:
            m = re.match(r'\[server\] request \d+: .* tools=(\S*)$', line)
            if m:
                out.append([t for t in m.group(1).split(',') if t])
        return out

    def wait_answers(self, mark, pred, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred(self.answers(mark)):
                return True
            time.sleep(0.2)
        return False

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class RemoteMcp:
    """tests/mcp/scripted_server.py (the official MCP Python SDK) on a free
    127.0.0.1 port, its DNS-rebinding guard widened by exactly the Host the
    board sends through the guestfwd."""
    def __init__(self, cmd, guest, extra, log_path):
        self.log_path = log_path
        self.proc = subprocess.Popen(cmd.split() + extra + ['--allow-host', '%s:%d' % guest],
                                     stdout=subprocess.PIPE, stderr=open(log_path, 'w'),
                                     start_new_session=True)
        # It prints its URL once uvicorn listens; bounded.
        r, _, _ = select.select([self.proc.stdout], [], [], 30)
        line = self.proc.stdout.readline().decode() if r else ''
        m = re.match(r'URL http://127\.0\.0\.1:(\d+)/mcp', line)
        if not m:
            self.stop()
            raise Fail('the scripted MCP server did not start (%r; log %s)' % (line, log_path))
        self.port = int(m.group(1))

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


class Run:
    def __init__(self, args):
        self.args = args
        self.results = []   # (firmware, step, status, detail)
        self.figures = []   # (what, value)
        self.server = Server(args.server, os.path.join(args.logs, 'server.log'), getattr(args, 'server_args', ()))
        self.board = None
        self.boots = 0
        self.remotes = []
        # (RT_NAME_MAX, objects made after boot) of each lm3s firmware so far.
        self.lm3s_names_seen = []
        self.rate_limited = 0  # the 429 steps run so far (each asks its own question)

    # -- bookkeeping ---------------------------------------------------------
    def record(self, fw, step, status, detail=''):
        self.results.append((fw, step, status, detail))
        print('%-4s %-10s %s%s' % (status, fw, step, (': ' + detail) if detail else ''))
        sys.stdout.flush()

    def excerpt(self, mark, lines=14):
        text = self.board.since(mark) if self.board else ''
        text = re.sub(r'\x1b\[[0-9;]*m', '', text)
        tail = [ln for ln in text.splitlines() if ln.strip()][-lines:]
        return '\n        | ' + '\n        | '.join(tail) if tail else ' (no console output)'

    def attempt(self, fw, step, fn):
        """Run one step; a Fail or Timeout fails it with a transcript
        excerpt. Returns whether it passed."""
        mark = len(self.board.buf) if self.board else 0
        try:
            detail = fn()
            self.record(fw, step, 'PASS', detail or '')
            return True
        except (Fail, Timeout) as e:
            self.record(fw, step, 'FAIL', str(e) + '\n        serial console:' + self.excerpt(mark))
            return False

    # -- board ---------------------------------------------------------------
    def boot(self, bsp, name, host_port=None, guest_port=80, guestfwds=(), machine='vexpress-a9', sd=None,
             hostfwds=(), prompt=None):
        """Start QEMU and wait for the shell and a DHCP address; returns
        `free`. sd: an sdcard.SdImage as the board's SD card (the BSP must
        say it mounted it at "/"; self.sd_mount says how). The seconds from
        QEMU's start to the shell prompt are in self.boot_secs; reboot()
        boots the same again. hostfwds: more (host port, guest port)
        forwards; prompt: the shell's prompt when not the machine's usual
        one (an lm3s firmware with DFS prints "msh />")."""
        if self.board:
            self.board.close()
        self.boots += 1
        self.last_boot = (bsp, name, dict(host_port=host_port, guest_port=guest_port, guestfwds=guestfwds,
                                          machine=machine, sd=sd, hostfwds=hostfwds, prompt=prompt))
        transcript = os.path.join(self.args.logs, 'serial-%s-%d.txt' % (name, self.boots))
        t0 = time.monotonic()
        self.board = Board(bsp, self.server.relay, transcript, host_port=host_port, guest_port=guest_port,
                           guestfwds=guestfwds, machine=machine, sd=sd, hostfwds=hostfwds)
        if prompt:
            self.board.prompt = prompt
        self.transcript = transcript
        b = self.board
        if machine == 'lm3s6965evb':
            # The lm3s8962 BSP's init thread: lwIP, then the NIC
            # (tests/qemu/lm3s.py), then this line.
            b.expect(r'TCP/IP initialized!', 60, 'boot (lwIP and the NIC must come up)')
        else:
            # The BSP's main.c runs a demo at boot: wait for it to end.
            b.expect(r'==== RT-Thread Lab Done ====', 120, 'boot (the BSP demo must finish)')
        b.quiet(0.5)
        b.send('\r')
        b.expect(re.escape(b.prompt), 10, 'the shell prompt after boot')
        self.boot_secs = time.monotonic() - t0
        if sd is not None:
            self.sd_mount = self.sd_mounted(b.since(0))
        if machine == 'lm3s6965evb':
            # No command shows the address there: without netdev there is
            # no `ifconfig`, and lwIP's list_if is a finsh (C-style shell)
            # command, not an msh one. QEMU's DHCP answers within a second
            # or two; the first request shows whether the board got one.
            b.quiet(5)
            return b.free()
        deadline = time.monotonic() + 40
        while True:
            out = b.run('ifconfig')
            if re.search(r'ip address:\s*10\.0\.2\.\d+', out) and '10.0.2.0' not in out:
                break
            if time.monotonic() > deadline:
                raise Fail('no DHCP address from qemu user networking within 40 s')
            b.quiet(2)
        return b.free()

    def reboot(self):
        """Stop QEMU and boot the same firmware again with the same
        options and the same SD image (what the board wrote to its card
        is still there); returns `free`."""
        bsp, name, kw = self.last_boot
        self.stop()
        return self.boot(bsp, name, **kw)

    def stop(self):
        """Stop QEMU: its SD image may then be read and changed from the
        host (sdcard.SdImage's helpers refuse while QEMU runs)."""
        if self.board:
            self.board.close()
            self.board = None

    # -- SD card (tests/qemu/sdcard.py) -------------------------------------
    def sd_image(self, name, mib=sdcard.DEFAULT_MIB):
        """A new, empty FAT image <--sd-dir>/<name>.img, made afresh on
        each call (each run starts from an empty card)."""
        return sdcard.SdImage(os.path.join(self.args.sd_dir, name + '.img'), mib).create()

    @staticmethod
    def sd_mounted(boot_text):
        """How the BSP's applications/mnt.c left the card, from the boot
        text: ('mounted' or 'formatted', tick of its line); a Fail when it
        mounted nothing."""
        text = re.sub(r'\x1b\[[0-9;]*m', '', boot_text)
        m = re.search(r'\[(\d+)\] I/FileSystem: file system initialization done', text)
        if m:
            return 'mounted', int(m.group(1))
        m = re.search(r"\[(\d+)\] I/FileSystem: \[sd\] File System on SD \('sd'\) initialized", text)
        if m:
            return 'formatted', int(m.group(1))
        lines = [ln.strip() for ln in text.splitlines() if re.search(r'FileSystem|SDIO|DFS', ln)]
        raise Fail('the BSP did not mount the SD card at "/": %s' % (' | '.join(lines) or 'no FileSystem line'))

    def sd_cat(self, path):
        """`cat PATH` on the board: what it printed (msh's cat ends with a
        newline of its own), or None when it could not open it."""
        out = self.board.run('cat %s' % path)
        if re.search(r'Open %s failed' % re.escape(path), out):
            return None
        return out[1:-1] if out.startswith('\n') and out.endswith('\n') else out.strip('\n')

    def shell_alive(self, what):
        """Enter at the shell must give a prompt (bounded)."""
        b = self.board
        b.quiet(0.5)
        b.send('\r')
        try:
            b.expect(re.escape(b.prompt), 6, what)
        except Timeout:
            raise Fail('%s: the shell does not answer (Enter gave no `%s` within 6 s, nothing typed is '
                       'echoed): the console was not given back to the shell' % (what, b.prompt))

    def chat(self, text, expect, timeout):
        """Type a message in the CLI chat; return (reply, seconds)."""
        b = self.board
        t0 = time.monotonic()
        b.send(text + '\r')
        start = b.expect(re.escape(text), 5, 'the chat echoes the message').end()
        try:
            end = b.expect(re.escape(CHAT_PROMPT), timeout, 'the reply to %r' % text).start()
        except Timeout as e:
            raise Fail('no reply to %r (waited up to %d s): %s' % (text, timeout, e))
        reply = b.buf[start:end]
        secs = time.monotonic() - t0
        if expect and not re.search(expect, reply):
            raise Fail('reply to %r after %.1f s does not match %r: %s'
                       % (text, secs, expect, one_line(reply)))
        return reply, secs

    # -- CLI firmware --------------------------------------------------------
    def cli_cycles(self, bsp, fw, boot_kw=None, after_boot=None, turn=None, idle_free=False):
        """Three chat/cleanup cycles; returns the boot's `free` or None.
        boot_kw: more Board options (the TLS firmware's guestfwd, the lm3s
        firmware's machine);
        after_boot: called once booted (the TLS firmware sets the clock);
        turn: (begin, end) called around each two-round question, end's
        text added to the step's result (the TLS front's handshakes);
        idle_free: `free` after Ctrl-D too (the heap the idle chat keeps)."""
        try:
            boot = self.boot(bsp, fw, **(boot_kw or {}))
            if after_boot:
                after_boot()
        except (Fail, Timeout) as e:
            self.record(fw, 'boot', 'FAIL', str(e) + self.excerpt(0))
            return None
        self.figures.append(('%s: heap used at boot (free)' % fw, boot['used']))
        self.record(fw, 'boot, free', 'PASS', 'used %d' % boot['used'])
        cli_stacks = []  # (used, size) of each cycle's CLI thread, from its [mem] line
        for cycle in (1, 2, 3):
            b = self.board
            state = {}

            def start():
                mark = len(b.buf)
                b.send('main_loop_entry\r')
                b.expect(r'Agent chat:[^\n]*\n', 20, 'main_loop_entry opens the chat')
                b.expect(re.escape(CHAT_PROMPT), 5, 'the chat prompt')
                # The console is the chat's now: the library's own log line
                # gives the heap after start.
                m = re.search(r'agent started: used (\d+)', b.since(mark))
                if m and cycle == 1:
                    self.figures.append(('%s: heap used after main_loop_entry (library log)' % fw, int(m.group(1))))

            def converse():
                mark = self.server.mark()
                tmark = turn[0]() if turn else None
                reply, secs = self.chat(QUESTION, ANSWER, 90)
                answers = self.server.answers(mark)
                kinds = [k for (_, _, k) in answers]
                extra = ('; ' + turn[1](tmark, cycle)) if turn else ''
                if kinds[:2] != ['tool_calls', 'tool_calls'] or len(kinds) < 3:
                    raise Fail('expected two tool-call rounds then the answer; the server answered %s%s'
                               % (answers, extra))
                calls = re.findall(r'"name":"(\w+)"', reply)
                return 'answered in %.1f s, %d requests, tool calls in the log: %s%s' % (
                    secs, len(answers), calls or '?', extra)

            def leave():
                mark = len(b.buf)
                b.send('\x04')
                b.expect(r'leaving the agent chat', 10, 'Ctrl-D leaves the chat')
                self.shell_alive('after Ctrl-D')
                st = b.thread_stack(thread_name(bsp, 'loop'))
                if st:
                    state['stack'] = st
                # The CLI thread's line as it ended (before the prompt
                # came back, or just after it: read once `list thread` ran).
                cli = CLI_STACK_LINE.findall(b.since(mark))
                if cli:
                    cli_stacks.append(tuple(int(x) for x in cli[-1]))
                if idle_free:
                    state['idle'] = b.free()
                    return 'shell prompt back; free: used %d' % state['idle']['used']
                return 'shell prompt back'

            def cleanup():
                t0 = time.monotonic()
                b.run('cleanup_agent_entry', timeout=40)
                secs = time.monotonic() - t0
                heap = b.free()
                state['heap'] = heap
                if heap['used'] != boot['used']:
                    raise Fail('heap used after cleanup is %d, at boot %d (%+d)'
                               % (heap['used'], boot['used'], heap['used'] - boot['used']))
                return 'cleanup returned in %.1f s; free: used %d (= boot), maximum %s' % (secs, heap['used'], heap['max'])

            ok = (self.attempt(fw, 'cycle %d: main_loop_entry' % cycle, start)
                  and self.attempt(fw, 'cycle %d: two tool rounds (OpenAI fragments)' % cycle, converse)
                  and self.attempt(fw, 'cycle %d: Ctrl-D gives the shell back' % cycle, leave)
                  and self.attempt(fw, 'cycle %d: cleanup_agent_entry at the prompt, heap back' % cycle, cleanup))
            if 'stack' in state and cycle == 1:
                size, pct, line = state['stack']
                self.figures.append(('%s: %s stack high-water (list thread)' % (fw, line.split()[0]),
                                     '%s%% of %d bytes' % (pct, size)))
            if cli_stacks and cycle == 1:
                self.cli_stack_figure(fw, bsp, 'after Ctrl-D, cycle 1', cli_stacks[0])
            if len(cli_stacks) == 3 and cycle == 3:
                # A CLI thread per cycle: the deepest of the three.
                self.cli_stack_figure(fw, bsp, 'after three cycles', max(cli_stacks))
            if 'idle' in state:
                self.figures.append(('%s: heap used idle after the chat (free after Ctrl-D), cycle %d'
                                     % (fw, cycle), state['idle']['used']))
            if 'heap' in state:
                self.figures.append(('%s: heap used after cleanup, cycle %d' % (fw, cycle), state['heap']['used']))
                self.figures.append(('%s: heap maximum so far (free), cycle %d' % (fw, cycle), state['heap']['max']))
            if not ok:
                for later in range(cycle + 1, 4):
                    self.record(fw, 'cycle %d' % later, 'SKIP', 'not run: cycle %d failed (the board is rebooted '
                                'for the next steps)' % cycle)
                self.board.close()
                self.board = None
                return boot
        return boot

    def cli_faults(self, bsp, fw, boot_kw=None, keep=False):
        """The fault steps; keep: leave the board running (in the chat)."""
        if self.board is None:
            try:
                self.boot(bsp, fw + '-faults', **(boot_kw or {}))
            except (Fail, Timeout) as e:
                self.record(fw, 'boot for the fault steps', 'FAIL', str(e))
                return
        b = self.board

        def start():
            b.send('main_loop_entry\r')
            b.expect(r'Agent chat:[^\n]*\n', 20, 'main_loop_entry opens the chat')
            b.expect(re.escape(CHAT_PROMPT), 5, 'the chat prompt')

        if not self.attempt(fw, 'faults: main_loop_entry', start):
            return

        def slow():
            mark = self.server.mark()
            reply, secs = self.chat('slowstart: say something', None, 60)
            answers = [a for a in self.server.answers(mark) if a[0] == 'slowstart']
            if 'answered after ten seconds' not in reply:
                raise Fail('PKG_AGENT_HTTP_TIMEOUT_MS=15000, a model silent for 10 s before its first byte: after '
                           '%.1f s the reply is %s (server answers: %s)' % (secs, one_line(reply), answers))
            return 'answered after %.1f s (%d request(s))' % (secs, len(answers))

        def http500():
            mark = self.server.mark()
            reply, secs = self.chat('brokenserver: say something', None, 90)
            answers = [a for a in self.server.answers(mark) if a[0] == 'brokenserver']
            if '500' not in reply:
                raise Fail('the reply to an HTTP 500 does not say what failed: %s' % one_line(reply))
            return 'reply after %.1f s, %d request(s) (retries): %s' % (secs, len(answers), one_line(reply))

        def http429():
            # The server answers 429 to the first request of each message
            # it has not seen: a firmware after another one in the same run
            # asks another product.
            product = RATE_LIMITED_PRODUCTS[self.rate_limited % len(RATE_LIMITED_PRODUCTS)]
            self.rate_limited += 1
            question = 'ratelimited: what is %s?' % product
            mark = self.server.mark()
            reply, secs = self.chat(question, r'The result is 42\.', 90)
            answers = [a for a in self.server.answers(mark) if a[0].startswith('ratelimited')]
            if not answers or answers[0][1] != 429:
                raise Fail('the server did not see the 429 first: %s' % answers)
            return 'retried after Retry-After: 2 and answered in %.1f s (%s)' % (
                secs, ', '.join('%s %d' % (s, st) for s, st, _ in answers))

        self.attempt(fw, 'faults: 10 s before the first byte, HTTP timeout 15 s', slow)
        self.attempt(fw, 'faults: HTTP 500 (reply says what failed)', http500)
        self.attempt(fw, 'faults: HTTP 429 with Retry-After (retried, answered)', http429)
        if keep:
            return
        b.close()
        self.board = None

    def cli_stack_figure(self, fw, bsp, when, used_size):
        """The CLI thread's stack high-water from its own [mem] line, as a
        figure next to `list thread`'s (the same percentage: used * 100 /
        size, rounded down)."""
        used, size = used_size
        self.figures.append(('%s: %s stack high-water %s (the CLI thread\'s [mem] line)'
                             % (fw, thread_name(bsp, 'cli'), when),
                             '%d%% of %d bytes (%d used)' % (used * 100 // size if size else 0, size, used)))

    def cli_stack_since(self, fw, bsp, when, mark):
        """The last CLI thread [mem] line on the console since `mark`, as a
        figure; (used, size) or None."""
        found = CLI_STACK_LINE.findall(self.board.since(mark)) if self.board else []
        if not found:
            return None
        used_size = tuple(int(x) for x in found[-1])
        self.cli_stack_figure(fw, bsp, when, used_size)
        return used_size

    # -- lm3s firmware (issue 31) -------------------------------------------
    def thread_figures(self, fw, when):
        """Every thread's stack high-water from `list thread`."""
        out = self.board.run('list thread')
        n = 0
        for line in out.splitlines():
            f = line.split()
            pct = re.search(r'\s(\d+)%', line)
            if len(f) >= 6 and pct and re.match(r'0x[0-9a-fA-F]+$', f[4]):
                self.figures.append(('%s: %s stack high-water %s (list thread)' % (fw, f[0], when),
                                     '%s%% of %d bytes' % (pct.group(1), int(f[4], 16))))
                n += 1
        if not n:
            raise Fail('`list thread` printed no thread line this driver reads: %r' % out)
        return '%d threads' % n

    def lm3s_said_why(self, fw, step):
        """When `step` (a main_loop_entry) failed because the command went
        back to the shell: it must have said why on the console (issue 31:
        errors reach the console when ulog is not running)."""
        if not any(r[0] == fw and r[1] == step and r[2] == 'FAIL' for r in self.results):
            return
        with open(self.transcript, errors='replace') as f:  # the boot that step ran on
            text = re.sub(r'\x1b\[[0-9;]*m', '', f.read())
        prompt = PROMPT_NO_DFS
        m = None
        for m in re.finditer(r'main_loop_entry\n(.*?)%s' % re.escape(prompt), text, re.S):
            pass
        if m is None:
            return  # it did not go back to the shell: the step's own excerpt says what happened

        def said():
            words = [ln.strip() for ln in m.group(1).splitlines() if ln.strip() and 'driver types' not in ln]
            if not words:
                raise Fail('main_loop_entry went back to `%s` and printed nothing: no word of why '
                           '(the library\'s log goes to ulog, which this BSP never initialises: no '
                           'RT_USING_COMPONENTS_INIT)' % prompt)
            return 'it printed: %s' % ' | '.join(words)
        self.attempt(fw, '%s: a failed start says why on the console' % step.split(':')[0], said)

    def lm3s_console(self, fw):
        """Lines on the consoles of this firmware's boots that issue 31
        names: object names cut to RT_NAME_MAX, printf formats the board's
        rt_vsnprintf does not know."""
        text = ''
        for n in sorted(os.listdir(self.args.logs)):
            if re.match(r'serial-%s(-faults|-limits)?-\d+\.txt$' % re.escape(fw), n):
                with open(os.path.join(self.args.logs, n), errors='replace') as f:
                    text += f.read()
        text = re.sub(r'\x1b\[[0-9;]*m', '', text)
        # Every CLI thread of this firmware ended with its [mem] line: the
        # deepest of them (each start makes a new thread).
        cli = [tuple(int(x) for x in m) for m in CLI_STACK_LINE.findall(text)]
        if cli:
            self.cli_stack_figure(fw, self.lm3s_bsp, 'deepest of %d CLI threads' % len(cli), max(cli))

        def formats():
            bad = sorted(set(re.findall(r'[^\n]*%(?:ll|l|0\d+l)[udx][^\n]*', text)))
            if bad:
                raise Fail('conversion specifiers printed as text: %s' % ' | '.join(b.strip() for b in bad[:5]))
            return 'no unexpanded %%lu/%%llu on the console (%d agent replies on it)' % text.count('agent> ')
        self.attempt(fw, 'console: no format the small rt_vsnprintf leaves unexpanded', formats)

    def lm3s_objects(self):
        """(name, kind) of every kernel object the shell's `list` commands show."""
        objs = []
        for kind in ('thread', 'sem', 'mutex', 'event', 'mailbox', 'msgqueue', 'timer', 'device'):
            out = self.board.run('list %s' % kind)
            for line in out.splitlines():
                f = line.split()
                # Headers, rules, continuation lines, the echo.
                if not f or line.startswith(' ') or f[0].startswith('-') or f[0] in (
                        'list', 'thread', 'semaphore', 'mutex', 'event', 'mailbox', 'msgqueue', 'timer', 'device'):
                    continue
                objs.append((f[0], kind))
        return objs

    def lm3s_names(self, fw, bsp):
        """Kernel objects made after boot whose name was cut to RT_NAME_MAX
        - 1 characters (the kernel's "exceeds RT_NAME_MAX" warning goes
        through ulog, which does not run on this BSP). Read from the
        shell's `list` commands; what was there at boot
        (self.lm3s_boot_objects) is not the package's. A name of that
        length is judged against the objects an earlier firmware of the run
        with a larger RT_NAME_MAX listed (self.lm3s_names_seen): the same
        name there is whole (it fits exactly), a longer one starting with it
        means it was cut; with no such firmware it was most likely cut."""
        with open(os.path.join(bsp, 'rtconfig.h')) as f:
            m = re.search(r'#define\s+RT_NAME_MAX\s+(\d+)', f.read())
        name_max = int(m.group(1)) if m else 8
        objs = self.lm3s_objects()
        seen = len(objs)
        ref = [(mx, o) for mx, olist in self.lm3s_names_seen for o in olist if mx > name_max]
        cut, whole = [], []
        for o in objs:
            if len(o[0]) != name_max - 1 or o in self.lm3s_boot_objects:
                continue
            if any(r == o for _, r in ref) and not any(r[1] == o[1] and len(r[0]) > len(o[0])
                                                       and r[0].startswith(o[0]) for _, r in ref):
                whole.append('%s (%s)' % o)
            else:
                cut.append('%s (%s)' % o)
        self.lm3s_names_seen.append((name_max, [o for o in objs if o not in self.lm3s_boot_objects]))
        if cut:
            raise Fail('RT_NAME_MAX %d: %d object name(s) of %d characters, cut by the kernel%s: %s'
                       % (name_max, len(cut), name_max - 1,
                          ' (a longer one starting with it, or none of that name, on the firmware with a larger '
                          'RT_NAME_MAX)' if ref else '', ', '.join(cut)))
        return '%d objects listed, none cut (RT_NAME_MAX %d%s)' % (
            seen, name_max, '; of %d characters and whole, the same on the firmware with a larger RT_NAME_MAX: %s'
            % (name_max - 1, ', '.join(whole)) if whole else '')

    def lm3s(self, bsp):
        """The lm3s8962 BSP on -M lm3s6965evb: the CLI cycles and faults,
        every thread's stack, the heap."""
        fw = os.path.basename(bsp.rstrip('/')).replace('agent-', '')
        kw = {'machine': 'lm3s6965evb'}
        self.lm3s_bsp = bsp
        # The settings this firmware runs with, and where each comes from
        # (the small firmware leaves the profile's to the glue).
        parts = []
        for name in LM3S_SETTINGS:
            v, where = lm3s_setting(bsp, name)
            parts.append('%s %s (%s)' % (name[len('PKG_AGENT_'):], v if v is not None else '?', where))
        self.figures.append(('%s: package settings' % fw, 'PKG_AGENT_PROFILE_SMALL %s; %s'
                             % ('on' if small_profile(bsp) else 'off', '; '.join(parts))))

        self.lm3s_boot_objects = set()

        def after_boot():
            self.attempt(fw, 'list thread at boot', lambda: self.thread_figures(fw, 'at boot'))
            if not self.lm3s_boot_objects:
                self.lm3s_boot_objects = set(self.lm3s_objects())

        boot = self.cli_cycles(bsp, fw, boot_kw=kw, after_boot=after_boot, idle_free=True)
        self.lm3s_boot_used = boot['used'] if boot else None
        if boot and boot.get('total'):
            self.figures.append(('%s: heap total (free)' % fw, boot['total']))
        self.lm3s_said_why(fw, 'cycle 1: main_loop_entry')
        if boot is None and self.board is not None:
            self.board.close()  # the boot failed: the fault steps boot again
            self.board = None
        if self.board is not None:
            self.attempt(fw, 'list thread after three cycles',
                         lambda: self.thread_figures(fw, 'after three cycles'))
        self.cli_faults(bsp, fw, boot_kw=kw, keep=True)
        self.lm3s_said_why(fw, 'faults: main_loop_entry')
        try:
            self.lm3s_steps_after_faults(fw)
            self.lm3s_limits(bsp, fw)
        finally:
            if self.board:
                self.board.close()
                self.board = None
            self.lm3s_console(fw)

    def lm3s_limits(self, bsp, fw):
        """On a board of their own: the heap after start (the chat opened,
        no question yet), a stall ended by the request deadline with the
        cleanup after it within 2 s, and an answer twice the heap total:
        with a content cap (PKG_AGENT_MAX_CONTENT_LEN) that the free heap
        holds twice over (the small profile's 2048) it is cut at the cap
        with the library's note, else (the cap at or above the heap total,
        65536 on the other firmwares) the reply says out of memory; either
        way the board still answers and the heap comes back. Each step
        opens the chat and ends with Ctrl-D, `cleanup_agent_entry` and
        `free` equal to this boot's figure; a step that leaves the board in
        doubt gets the next one a new boot."""
        kw = {'machine': 'lm3s6965evb'}
        deadline_ms, deadline_from = lm3s_setting(bsp, 'PKG_AGENT_REQUEST_TIMEOUT_MS')
        http_ms, _ = lm3s_setting(bsp, 'PKG_AGENT_HTTP_TIMEOUT_MS')
        cap, cap_from = lm3s_setting(bsp, 'PKG_AGENT_MAX_CONTENT_LEN')
        state = {}

        def fresh():
            if self.board is not None:
                return self.board
            boot = self.boot(bsp, fw + '-limits', **kw)
            state['boot'] = boot
            return self.board

        def open_chat(b):
            b.send('main_loop_entry\r')
            b.expect(r'Agent chat:[^\n]*\n', 20, 'main_loop_entry opens the chat')
            b.expect(re.escape(CHAT_PROMPT), 5, 'the chat prompt')

        def leave(b, when):
            """Ctrl-D and the shell back; the CLI thread's [mem] line as a
            figure (`when`)."""
            mark = len(b.buf)
            b.send('\x04')
            b.expect(r'leaving the agent chat', 10, 'Ctrl-D leaves the chat')
            self.shell_alive('after Ctrl-D')
            b.quiet(0.3)
            if when:
                self.cli_stack_since(fw, bsp, when, mark)

        def leave_and_clean(b, problems, limit=None, when=None):
            """Ctrl-D, `cleanup_agent_entry` (timed), `free` against the
            boot figure; returns (cleanup seconds, heap used)."""
            leave(b, when)
            t0 = time.monotonic()
            b.run('cleanup_agent_entry', timeout=40)
            secs = time.monotonic() - t0
            used = b.free()['used']
            boot = state['boot']['used']
            if limit is not None and secs > limit:
                problems.append('cleanup_agent_entry returned after %.1f s (limit %d s)' % (secs, limit))
            if used != boot:
                problems.append('heap used after cleanup is %d, at boot %d (%+d)' % (used, boot, used - boot))
            return secs, used

        def step(name, fn):
            try:
                fresh()
            except (Fail, Timeout) as e:
                self.record(fw, name, 'FAIL', 'boot: %s%s' % (e, self.excerpt(0)))
                return
            if not self.attempt(fw, name, lambda: fn(self.board)):
                # The board may still be in the chat or in a request.
                self.board.close()
                self.board = None

        def started(b):
            problems = []
            open_chat(b)
            leave(b, None)
            h = b.free()
            state['started'] = h['used']
            self.figures.append(('%s: heap used after main_loop_entry (free after Ctrl-D, no question yet)' % fw,
                                 h['used']))
            b.run('cleanup_agent_entry', timeout=40)
            used = b.free()['used']
            if used != state['boot']['used']:
                problems.append('heap used after cleanup is %d, at boot %d' % (used, state['boot']['used']))
            if problems:
                raise Fail('; '.join(problems))
            return 'boot %d, after start %d, after cleanup %d' % (state['boot']['used'], h['used'], used)

        def stall(b):
            if not deadline_ms:
                raise Fail('PKG_AGENT_REQUEST_TIMEOUT_MS: %s (%s/rtconfig.h)' % (deadline_from, bsp))
            deadline = deadline_ms / 1000.0
            problems = []
            open_chat(b)
            mark = self.server.mark()
            reply, secs = self.chat('stallheaders: say something', None, deadline + LM3S_DEADLINE_SLACK_S)
            answers = [a for a in self.server.answers(mark) if a[0] == 'stallheaders']
            text = reply_text(reply)
            if not answers:
                problems.append('the request never reached the server')
            elif len(answers) > 1:
                problems.append('%d requests: the deadline is never retried' % len(answers))
            if not re.search(r'timed out', text) or str(deadline_ms) not in text:
                problems.append('the reply does not say that the request deadline (%d ms) ended it: %r'
                                % (deadline_ms, text[:300]))
            if secs < deadline - 1.5:
                problems.append('answered after %.1f s, before the %.0f s deadline (per-read timeout %s ms): '
                                'something else ended it' % (secs, deadline, http_ms))
            csecs, used = leave_and_clean(b, problems, limit=2)
            if problems:
                raise Fail('; '.join(problems) + '; reply after %.1f s: %r; cleanup_agent_entry returned in %.1f s, '
                           'heap %d (boot %d)' % (secs, text[:200], csecs, used, state['boot']['used']))
            return ('answered after %.1f s (deadline %.0f s from %s, per-read timeout %s ms, the server sending an '
                    'SSE comment every 2 s): %r; cleanup_agent_entry returned in %.1f s; heap back to %d'
                    % (secs, deadline, deadline_from, http_ms, text[:160], csecs, used))

        def huge_mode():
            """'cut' when the free heap after start holds the cap twice
            over (the text kept and the response's copy of it), 'oom' when
            the cap is at or above the whole heap, else None (either)."""
            total = state['boot'].get('total')
            free = total - state.get('started', state['boot']['used']) if total else None
            if cap is None or free is None:
                return None
            if 2 * cap <= free:
                return 'cut'
            if cap >= total:
                return 'oom'
            return None

        def huge(b):
            total = state['boot'].get('total')
            if not total:
                raise Fail('`free` printed no heap total')
            size = 2 * total
            mode = huge_mode()
            problems = []
            open_chat(b)
            mark = self.server.mark()
            reply, secs = self.chat('hugeanswer %d: tell me everything' % size, None, 120)
            answers = [a for a in self.server.answers(mark) if a[0] == 'hugeanswer']
            text = reply_text(reply)
            clean = re.sub(r'\x1b\[[0-9;]*m', '', reply)
            shown = [int(x) for x in re.findall(r'\[(\d{6,})\] ', reply)]
            far = ('the text shown reached offset %d' % max(shown)) if shown else 'no answer text shown'
            logged = [m.group(0) for m in LOG_FALLBACK.finditer(clean)]
            logged += [ln.strip() for ln in clean.splitlines() if LOG_LINE.match(ln)]
            only_log = ('; only the log said: %s' % ' | '.join(logged)[:300]) if logged else ''
            oom = re.search(r'(?i)out of memory', text)
            note = re.search(CUT_NOTE, text)
            # The answer's own text on the console: the chat's text without
            # the log lines, the note and an error after it (offsets and
            # "lorem ipsum" only).
            answer = re.split(r'\s*error: ', re.sub(CUT_NOTE, '', text))[0].strip()
            if not answers:
                problems.append('the request never reached the server')
            if mode == 'cut':
                last = ((cap - 1) // 512) * 512  # the last event that starts below the cap
                if oom:
                    problems.append('the reply says out of memory (the %d-byte cap, %s, should have cut the answer '
                                    'first; %s)' % (cap, cap_from, far))
                if not note:
                    problems.append('the reply does not show the note of an answer cut at the cap (%r): %d characters '
                                    'of answer, %s, ending %r%s'
                                    % (CUT_NOTE.replace('\\', ''), len(answer), far, text[-160:], only_log))
                if [o for o in shown if o >= cap]:
                    problems.append('text beyond the %d-byte cap was shown (offsets up to %d)' % (cap, max(shown)))
                if last not in shown:
                    problems.append('the answer up to the cap was not shown (no event at offset %d; %s)' % (last, far))
                if re.search(r'(?i)timed out|error', text):
                    problems.append('the reply says something failed: %r' % text[-240:])
            elif mode == 'oom' or not note:
                if not oom:
                    problems.append('the reply (%d characters, %s) does not say out of memory: %r ... %r%s'
                                    % (len(text), far, text[:120], text[-240:], only_log))
            ended = ('cut at the cap with the note' if note else 'out of memory' if oom
                     else 'cut at the cap, no note shown' if mode == 'cut' and len(answer) <= cap
                     else 'neither a note nor out of memory')
            self.figures.append(('%s: answer text shown of the answer twice the heap total (%s)' % (fw, ended),
                                 '%d characters' % len(answer)))
            _, qsecs = self.chat(QUESTION, ANSWER, 90)
            leave(b, 'after the answer twice the heap total')
            h = b.free()
            self.figures.append(('%s: heap maximum after the answer twice the heap total (free)' % fw, h['max']))
            self.thread_figures(fw, 'after the answer twice the heap total')
            b.run('cleanup_agent_entry', timeout=40)
            used = b.free()['used']
            if used != state['boot']['used']:
                problems.append('heap used after cleanup is %d, at boot %d (%+d)'
                                % (used, state['boot']['used'], used - state['boot']['used']))
            rest = ('the next question answered in %.1f s; heap maximum %d; heap after cleanup %d (boot %d)'
                    % (qsecs, h['max'], used, state['boot']['used']))
            if problems:
                raise Fail('; '.join(problems) + '; ' + rest)
            return ('an answer of %d bytes (heap total %d, content cap %s from %s): reply after %.1f s, %s, %s, '
                    'ending %r; %s' % (size, total, cap, cap_from, secs, far,
                                       'cut at the cap with the note' if note else 'out of memory',
                                       text[-160:], rest))

        step('limits: heap after main_loop_entry (Ctrl-D at once), cleanup, heap back', started)
        step('limits: a stall (head, then only SSE comments) answered by the request deadline, cleanup '
             'within 2 s, heap back', stall)
        mode = huge_mode() if 'boot' in state else None
        if mode == 'cut':
            what = 'cut at the %s-byte content cap with the note' % cap
        elif mode == 'oom':
            what = 'the reply says out of memory'
        else:
            what = 'cut at the cap with the note or out of memory'
        step('limits: an answer twice the heap total: %s, the next question answered, heap back' % what, huge)

    def lm3s_steps_after_faults(self, fw):
        b = self.board
        if b is None:
            return
        if any(r[0] == fw and r[1] == 'faults: main_loop_entry' and r[2] == 'FAIL' for r in self.results):
            # The chat never opened: the shell is still at its prompt.
            self.attempt(fw, 'faults: list thread at the shell (the chat did not open)',
                         lambda: self.thread_figures(fw, 'after the fault steps'))
            self.attempt(fw, 'every kernel object name fits RT_NAME_MAX (after main_loop_entry)',
                         lambda: self.lm3s_names(fw, self.lm3s_bsp))

            def console():
                # Facts for the reader of a failed start: the console the
                # build names and the character devices there are.
                with open(os.path.join(self.lm3s_bsp, 'rtconfig.h')) as f:
                    m = re.search(r'#define\s+RT_CONSOLE_DEVICE_NAME\s+"([^"]*)"', f.read())
                name = m.group(1) if m else None
                out = b.run('list device')
                chars = [ln.split()[0] for ln in out.splitlines()
                         if len(ln.split()) >= 2 and 'Character' in ln]
                self.figures.append(('%s: RT_CONSOLE_DEVICE_NAME; the character devices (list device)' % fw,
                                     '"%s"%s; %s' % (name, '' if name in chars else ' (no such device)',
                                                     ', '.join(chars) or 'none')))
                return 'RT_CONSOLE_DEVICE_NAME "%s"; character devices: %s' % (name, ', '.join(chars) or 'none')
            self.attempt(fw, 'list device (the console the build names)', console)

            def heap():
                h = b.free()
                self.figures.append(('%s: heap used after two failed main_loop_entry (free)' % fw, h['used']))
                self.figures.append(('%s: heap maximum after two failed main_loop_entry (free)' % fw, h['max']))
                return 'used %d, maximum %s' % (h['used'], h['max'])
            self.attempt(fw, 'free after the failed starts', heap)

            def cleanup():
                b.run('cleanup_agent_entry', timeout=40)
                h = b.free()
                if h['used'] != self.lm3s_boot_used:
                    raise Fail('heap used after cleanup is %d, at boot %d (%+d)' % (
                        h['used'], self.lm3s_boot_used, h['used'] - self.lm3s_boot_used))
                return 'free: used %d (= boot)' % h['used']
            if self.lm3s_boot_used is not None:
                self.attempt(fw, 'cleanup_agent_entry after the failed starts, heap back', cleanup)
            b.close()
            self.board = None
            return

        def leave():
            mark = len(b.buf)
            b.send('\x04')
            b.expect(r'leaving the agent chat', 10, 'Ctrl-D leaves the chat')
            self.shell_alive('after Ctrl-D')
            detail = self.thread_figures(fw, 'after the fault steps')
            self.cli_stack_since(fw, self.lm3s_bsp, 'after the fault steps', mark)
            self.attempt(fw, 'every kernel object name fits RT_NAME_MAX (chat open)',
                         lambda: self.lm3s_names(fw, self.lm3s_bsp))
            b.run('cleanup_agent_entry', timeout=40)
            heap = b.free()
            self.figures.append(('%s: heap used after the fault steps\' cleanup' % fw, heap['used']))
            self.figures.append(('%s: heap maximum after the fault steps (free)' % fw, heap['max']))
            return '%s; after cleanup free: used %d, maximum %s' % (detail, heap['used'], heap['max'])

        self.attempt(fw, 'faults: Ctrl-D, list thread, cleanup_agent_entry', leave)
        b.close()
        self.board = None

    # -- Debug firmware ------------------------------------------------------
    def debug(self, bsp):
        fw = 'debug'
        try:
            boot = self.boot(bsp, fw)
        except (Fail, Timeout) as e:
            self.record(fw, 'boot', 'FAIL', str(e) + self.excerpt(0))
            return
        b = self.board
        heap = {'boot': boot['used']}

        def start():
            b.run('main_loop_entry', timeout=20)
            heap['started'] = b.free()['used']
            return 'free after start: used %d' % heap['started']

        def converse():
            mark = self.server.mark()
            t0 = time.monotonic()
            out = b.run('agent_send_message 0 ' + QUESTION, timeout=60)
            secs = time.monotonic() - t0
            if not re.search(r'agent: ' + ANSWER, out):
                raise Fail('agent_send_message printed no "agent: The result is 20.": %s' % one_line(out))
            kinds = [k for (_, _, k) in self.server.answers(mark)]
            if kinds != ['tool_calls', 'tool_calls', 'text']:
                raise Fail('expected two tool-call rounds then the answer; the server answered %s' % kinds)
            f = b.free()
            heap['peak'] = f['max']
            heap['after_chat'] = f['used']
            st = b.thread_stack(LOOP_THREAD)
            if st:
                heap['stack'] = st
            return 'answered in %.1f s; free: used %d, maximum %d' % (secs, f['used'], f['max'])

        def cleanup():
            b.run('cleanup_agent_entry', timeout=40)
            heap['cleanup'] = b.free()['used']
            if heap['cleanup'] != boot['used']:
                raise Fail('heap used after cleanup is %d, at boot %d (%+d)'
                           % (heap['cleanup'], boot['used'], heap['cleanup'] - boot['used']))
            return 'used %d (= boot)' % heap['cleanup']

        def stalled():
            b.run('main_loop_entry', timeout=20)
            mark = self.server.mark()
            t0 = time.monotonic()
            out = b.run('agent_send_message 0 stallforever please', timeout=60)
            waited = time.monotonic() - t0
            if not self.server.wait_answers(mark, lambda a: any(s == 'stallforever' for s, _, _ in a), 5):
                raise Fail('the stalled request never reached the server')
            t1 = time.monotonic()
            b.run('cleanup_agent_entry', timeout=45, what='cleanup_agent_entry during the stalled request returns')
            secs = time.monotonic() - t1
            used = b.free()['used']
            if used != boot['used']:
                raise Fail('heap used after cleanup is %d, at boot %d (%+d)' % (used, boot['used'], used - boot['used']))
            return ('agent_send_message gave up after %.0f s (%s); cleanup_agent_entry returned in %.1f s; '
                    'heap back to %d' % (waited, one_line(out)[:80], secs, used))

        ok = self.attempt(fw, 'main_loop_entry, free', start)
        ok = ok and self.attempt(fw, 'agent_send_message: two tool rounds', converse)
        ok = ok and self.attempt(fw, 'cleanup_agent_entry, heap back', cleanup)
        if ok:
            self.attempt(fw, 'cleanup_agent_entry during a stalled request', stalled)
        self.figures.append(('debug: heap used at boot (free)', heap['boot']))
        for k, label in (('started', 'after main_loop_entry'), ('peak', 'peak ("maximum" of free) after a '
                                                                      'two-round conversation'),
                         ('cleanup', 'after cleanup_agent_entry')):
            if k in heap:
                self.figures.append(('debug: heap used %s' % label, heap[k]))
        if 'stack' in heap:
            size, pct, line = heap['stack']
            self.figures.append(('debug: %s stack high-water (list thread)' % LOOP_THREAD,
                                 '%s%% of %d bytes' % (pct, size)))
        b.close()
        self.board = None

    # -- WebNet firmware -----------------------------------------------------
    def webnet(self, bsp, token, page_path, browser):
        fw = 'webnet'
        port = free_port()
        try:
            boot = self.boot(bsp, fw, host_port=port)
        except (Fail, Timeout) as e:
            self.record(fw, 'boot', 'FAIL', str(e) + self.excerpt(0))
            return
        b = self.board
        web = Web(port)
        heap = {'boot': boot['used']}
        fails = TokenWindow()
        self.figures.append(('webnet: host port forwarded to the board\'s port 80', '127.0.0.1:%d' % port))
        with open(page_path, 'rb') as f:
            page = f.read()

        def not_yet():
            try:
                r = web.get('/cgi-bin/agent', timeout=8)
            except OSError as e:
                return 'no answer before main_loop_entry (%s)' % type(e).__name__
            raise Fail('the board answered %d on port 80 before main_loop_entry started WebNet' % r.status)

        def start():
            mark = len(b.buf)
            b.run('main_loop_entry', timeout=20)
            log = b.since(mark)
            if not re.search(r'WebNet channel: open http://<board address>:80/cgi-bin/agent', log):
                raise Fail('main_loop_entry did not log the page\'s address (WebNet channel: open ...:80/cgi-bin/agent)')
            if 'webnet package' not in log or 'initialize success' not in log:
                raise Fail('WebNet did not report its start ("RT-Thread webnet package ... initialize success")')
            m = re.search(r'agent started: used (\d+)', log)
            if m:
                heap['logged'] = int(m.group(1))
                self.figures.append(('webnet: heap used at agent start, before WebNet (library log)', int(m.group(1))))
            b.quiet(1)
            heap['started'] = b.free()['used']
            if 'logged' in heap:
                self.figures.append(('webnet: heap the channel\'s init and WebNet\'s start took (free - library log)',
                                     heap['started'] - heap['logged']))
            return 'free after start: used %d (boot %d, %+d)' % (heap['started'], boot['used'],
                                                                 heap['started'] - boot['used'])

        def get_page():
            r = web.get('/cgi-bin/agent')
            expect_status(r, 200)
            if r.header('content-encoding') != 'gzip':
                raise Fail('Content-Encoding is %r, not gzip: %s' % (r.header('content-encoding'), r.head))
            if not (r.header('content-type') or '').startswith('text/html'):
                raise Fail('Content-Type is %r' % r.header('content-type'))
            try:
                html = gzip.decompress(r.body)
            except (OSError, EOFError) as e:
                raise Fail('the page does not inflate: %s (%d bytes)' % (e, len(r.body)))
            if html != page:
                raise Fail('the inflated page (%d bytes) differs from web/agent.html (%d bytes)'
                           % (len(html), len(page)))
            self.figures.append(('webnet: GET /cgi-bin/agent', '%d bytes gzip -> %d bytes = web/agent.html'
                                 % (len(r.body), len(html))))
            return '%d bytes gzip, inflates to web/agent.html (%d bytes); %s' % (len(r.body), len(html),
                                                                                   r.conn_note())

        def stream():
            mark = self.server.mark()
            t0 = time.monotonic()
            r = web.post('/cgi-bin/chat', json.dumps({'message': QUESTION, 'stream': True, 'token': token}),
                         timeout=90)
            secs = time.monotonic() - t0
            expect_status(r, 200)
            if r.header('content-type') != 'text/event-stream':
                raise Fail('Content-Type is %r, not text/event-stream' % r.header('content-type'))
            if not r.body.startswith(b':rt-thread-stream\n\n'):
                raise Fail('the stream does not start with the hello comment: %r' % r.body[:80])
            events = sse_events(r.body.decode('utf-8', 'replace'))
            names = [e for e, _ in events]
            deltas = [d for e, d in events if e == 'delta']
            calls = [d for e, d in events if e == 'tool_call']
            results = [d for e, d in events if e == 'tool_result']
            finals = [d for e, d in events if e == 'final']
            if len(deltas) < 2:
                raise Fail('%d delta event(s): %s' % (len(deltas), names))
            if not finals or not re.fullmatch(ANSWER, finals[-1]):
                raise Fail('the final event is %r, not %r' % (finals, ANSWER))
            if ''.join(deltas) != finals[-1]:
                raise Fail('the deltas %r do not add up to the final %r' % (deltas, finals[-1]))
            if names[-1:] != ['done'] or names.index('final') < max(i for i, n in enumerate(names) if n == 'delta'):
                raise Fail('final then done must end the stream: %s' % names)
            names_called = sorted(json.loads(c).get('function', {}).get('name', '?') if c.startswith('{') else c
                                  for c in calls)
            if len(calls) < 2 or len(results) < 2:
                raise Fail('expected two tool calls and two results: calls %r results %r' % (calls, results))
            kinds = [k for (_, _, k) in self.server.answers(mark)]
            if kinds != ['tool_calls', 'tool_calls', 'text']:
                raise Fail('expected two tool-call rounds then the answer; the server answered %s' % kinds)
            f = b.free()
            heap['peak'] = f['max']
            counts = ', '.join('%d %s' % (names.count(n), n) for n in
                               ('reasoning', 'tool_call', 'tool_result', 'delta', 'final', 'done') if n in names)
            self.figures.append(('webnet: events of the streamed two-round answer', counts))
            return ('%.1f s; %s; tool calls %s, results %r; final %r' % (secs, counts, names_called, results,
                                                                         finals[-1]))

        def plain():
            mark = self.server.mark()
            r = web.post('/cgi-bin/chat', json.dumps({'message': 'what is 6*7?', 'token': token}), timeout=90)
            expect_status(r, 200)
            if r.header('content-type') != 'application/json':
                raise Fail('Content-Type is %r' % r.header('content-type'))
            doc = r.json()
            if doc.get('success') is not True or not re.fullmatch(r'The result is 42\.', doc.get('response', '')):
                raise Fail('the answer is %r' % doc)
            if len(r.body) != int(r.header('content-length') or -1):
                raise Fail('Content-Length %s, body %d bytes' % (r.header('content-length'), len(r.body)))
            # WebNet zeroes a new request (WEBNET_CONN_CLOSE): without a
            # Connection header the head says close, and the session is
            # closed after the answer (the host port does the same).
            if r.header('connection') != 'close' or not r.closed:
                raise Fail('expected "Connection: close" and the connection closed: %s' % r.conn_note())
            kinds = [k for (_, _, k) in self.server.answers(mark)]
            return '%s; the server answered %s; %s' % (r.body.decode(), kinds, r.conn_note())

        def slow_and_second():
            # A model that sends its five fragments 600 ms apart: the deltas
            # must reach the host over time (each when it arrives, not all at
            # the end). A second client asks meanwhile: WebNet runs one
            # handler at a time, so it is answered after the first, with its
            # own reply.
            times, second = [], {}
            t0 = time.monotonic()

            def other():
                time.sleep(1.0)
                try:
                    second['r'] = web.post('/cgi-bin/chat', json.dumps({'message': 'what is 6*7?', 'token': token}),
                                           timeout=90)
                except OSError as e:
                    second['e'] = e
                second['t'] = time.monotonic()

            th = threading.Thread(target=other)
            th.start()
            r = web.post('/cgi-bin/chat', json.dumps({'message': 'slowstream: count for me', 'stream': True,
                                                      'token': token}), timeout=90, times=times)
            t_first = time.monotonic()
            th.join(120)
            expect_status(r, 200)
            head_len = len(r.head) + 4
            events = sse_events(r.text())
            deltas = [d for e, d in events if e == 'delta']
            finals = [d for e, d in events if e == 'final']
            if finals != ['Counting slowly: one, two, three.'] or ''.join(deltas) != finals[0]:
                raise Fail('the slow answer: deltas %r, final %r' % (deltas, finals))
            # When each delta's bytes had arrived.
            arrived, pos = [], 0
            for d in deltas:
                block = ('event: delta\ndata: %s\n\n' % d).encode()
                at = r.body.find(block, pos)
                if at < 0:
                    raise Fail('delta %r not found in the stream' % d)
                pos = at + len(block)
                end = head_len + pos
                arrived.append(next(t for t, n in times if n >= end) - t0)
            spread = arrived[-1] - arrived[0]
            if len(deltas) < 3 or spread < 1.0:
                raise Fail('the deltas arrived at %s s: not over time' % ['%.2f' % a for a in arrived])
            if 'e' in second or 'r' not in second:
                raise Fail('the second client got no answer: %s' % second.get('e'))
            r2 = second['r']
            expect_status(r2, 200)
            if r2.json().get('response') != 'The result is 42.':
                raise Fail('the second client got %s' % r2.text())
            # WebNet's one thread: the second request is read only once the
            # stream's handler has returned (after its last delta).
            if second['t'] - t0 <= arrived[-1]:
                raise Fail('the second client was answered at %.1f s, before the stream\'s last delta (%.1f s)'
                           % (second['t'] - t0, arrived[-1]))
            return ('%d deltas arrived at %s s (the model sent one per 600 ms); a second client asking at 1.0 s '
                    'was answered at %.1f s, once the stream had ended (%.1f s): %s' % (
                        len(deltas), ', '.join('%.1f' % a for a in arrived), second['t'] - t0, t_first - t0,
                        r2.text()))

        def errors():
            out = []
            mark = self.server.mark()
            # The body's checks (JSON, size) come before the token's; the
            # message's after it: those requests carry the token (a missing
            # one would be a 403, counted against the 429 step's five).
            with_token = json.dumps({'token': token}).encode()
            cases = [
                ('GET /cgi-bin/chat', lambda: web.get('/cgi-bin/chat'), 405, 'use POST'),
                ('PUT /cgi-bin/chat', lambda: web.request('PUT', '/cgi-bin/chat', '{}'), 405, 'use POST'),
                ('POST without a body', lambda: web.request('POST', '/cgi-bin/chat', None), 400,
                 'JSON object is required'),
                ('invalid JSON', lambda: web.post('/cgi-bin/chat', '{"message":'), 400, 'not valid JSON'),
                ('not an object', lambda: web.post('/cgi-bin/chat', '[1,2]'), 400, 'not a JSON object'),
                ('no message', lambda: web.post('/cgi-bin/chat', with_token), 400, 'message must be a string'),
                ('empty message', lambda: web.post('/cgi-bin/chat', json.dumps({'message': '', 'token': token})),
                 400, 'cannot be empty'),
                ('5000-byte body', lambda: web.post('/cgi-bin/chat', json.dumps({'message': 'x' * 5000})), 413,
                 'at most 4096 bytes'),
                # Longer than WebNet reads (POST_BUFSZ_MAX, 8 KB): the head
                # alone, as a client waiting for 100-continue sends it.
                ('9000-byte body (head only)', lambda: web.raw(
                    b'POST /cgi-bin/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n'
                    b'Content-Length: 9000\r\n\r\n'), 413, 'at most 4096 bytes'),
                ('GET /cgi-bin/config', lambda: web.get('/cgi-bin/config'), 405, 'use POST'),
                # WebNet matches header names case-insensitively.
                ('lower-case header names', lambda: web.raw(
                    b'POST /cgi-bin/chat HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n'
                    b'content-length: %d\r\n\r\n%s' % (len(with_token), with_token)), 400,
                 'message must be a string'),
            ]
            for what, fn, code, text in cases:
                r = fn()
                if r.status != code or text not in r.text():
                    raise Fail('%s: expected %d with %r, got %d: %s' % (what, code, text, r.status, r.text()[:200]))
                if r.header('content-type') != 'application/json' or r.json().get('success') is not False:
                    raise Fail('%s: not a JSON error: %s %s' % (what, r.head, r.text()[:200]))
                out.append('%s %d' % (what, r.status))
            r = web.get('/cgi-bin/nothing')
            if r.status != 404:
                raise Fail('an unregistered CGI: %d, not 404: %s' % (r.status, r.text()[:200]))
            out.append('unregistered CGI %d' % r.status)
            if self.server.answers(mark):
                raise Fail('a bad request reached the model: %s' % self.server.answers(mark))
            return ', '.join(out)

        def config():
            # With the token; the refusals without it and with a wrong one
            # are the 429 step's five (each counts against the limit).
            out = []
            key = 'sk-qemu-check'
            r = web.get('/cgi-bin/get_config?token=' + token)
            expect_status(r, 200)
            doc = r.json()
            if key in r.text() or key[3:] in r.text():
                raise Fail('get_config shows the key in clear: %s' % r.text())
            if doc.get('modelName') != 'scripted-arith' or '10.0.2.100' not in doc.get('apiUrl', '') \
                    or 'characters' not in doc.get('apiKey', ''):
                raise Fail('get_config with the token: %s' % r.text())
            out.append('get_config with token 200: %s' % r.text())
            r = web.post('/cgi-bin/config', json.dumps({'token': token, 'modelName': 'qemu-model-2'}))
            expect_status(r, 200)
            r = web.post('/cgi-bin/get_config', json.dumps({'token': token}))
            expect_status(r, 200)
            if r.json().get('modelName') != 'qemu-model-2' or key in r.text():
                raise Fail('after config, get_config (POST) shows %s' % r.text())
            out.append('config with token 200, get_config (POST) shows the new model')
            r = web.post('/cgi-bin/config', json.dumps({'token': token, 'modelName': 'scripted-arith'}))
            expect_status(r, 200)
            return '; '.join(out)

        # Issue 30: a token set at run time (agent_config web-token, the
        # firmware has PKG_AGENT_MSH_EXTRAS) replaces the build's at once;
        # the 429 step below runs with it (the build's token is one of its
        # five wrong ones), then the build's token is set back.
        run_token = token + '-rt02'
        notes = []  # the library's log lines around agent_config

        def console_token(value):
            """`agent_config web-token <value>`: its one line (the token
            itself never echoed back)."""
            out = re.sub(r'\x1b\[[0-9;]*m', '', b.run('agent_config web-token %s' % value))
            if value in out:
                raise Fail('agent_config echoed the token: %r' % out)
            # Its line (the library's log lines may come before it).
            line = re.search(r'^web-token: [^\n]*', out, re.M)
            if not line:
                raise Fail('agent_config web-token printed no "web-token: ..." line: %r' % one_line(out))
            logs = [ln.strip() for ln in out.splitlines() if LOG_LINE.match(ln)]
            notes.extend(logs)
            return line.group(0).strip()

        def runtime_token():
            out = []
            said = console_token('short-token')
            if not re.search(r'web-token: refused: a token needs at least 16 characters \(this one has 11\); '
                             r'not changed', said):
                raise Fail('a 11-character token: %r, not refused' % said)
            out.append('a 11-character token: %r' % said)
            said = console_token(run_token)
            if not re.match(r'web-token: set( until reboot)?', said):
                raise Fail('agent_config web-token: %r' % said)
            out.append('%r' % said)
            shown = one_line(re.sub(r'\x1b\[[0-9;]*m', '', b.run('agent_config')))
            m = re.search(r'web token: (\S+ \(\d+ characters\))', shown)
            if not m or run_token in shown or token in shown or m.group(1) != '******** (%d characters)' % len(
                    run_token):
                raise Fail('agent_config shows %r: the web token not masked as ******** (%d characters)'
                           % (shown, len(run_token)))
            out.append('agent_config shows "web token: %s"' % m.group(1))
            # At once: the next request takes the new token.
            r = web.post('/cgi-bin/get_config', json.dumps({'token': run_token}))
            expect_status(r, 200)
            out.append('get_config with it 200 at once')
            if notes:
                out.append('log: %s' % ' | '.join(one_line(n) for n in notes))
            return '; '.join(out)

        def too_many():
            # Five wrong or missing tokens, each refused with 403; the sixth
            # request, with the right token, gets 429 with Retry-After (one
            # table for every endpoint); the block logged once, no token in
            # the log. The build's token, replaced at run time, is one of
            # the five.
            waited = fails.clear(b)
            mark = len(b.buf)
            right = run_token
            t_first = None
            five = (
                ('chat without token', lambda: web.post('/cgi-bin/chat', json.dumps({'message': QUESTION}))),
                ('chat with the build\'s token (replaced at run time)',
                 lambda: web.post('/cgi-bin/chat', json.dumps({'message': QUESTION, 'token': token}))),
                ('cleanup with a wrong token', lambda: web.post('/cgi-bin/cleanup', '{"token":"wrong"}')),
                ('get_config without token', lambda: web.get('/cgi-bin/get_config')),
                ('config with a wrong token', lambda: web.post('/cgi-bin/config',
                                                               '{"token":"wrong-token-0123456","modelName":"m2"}')),
            )
            out = []
            smark = self.server.mark()
            for what, fn in five:
                r = fn()
                fails.failed()
                if t_first is None:
                    t_first = time.monotonic()
                if r.status != 403 or 'token' not in r.text():
                    raise Fail('%s: expected 403 asking for the token, got %d: %s' % (what, r.status, r.text()))
                out.append('%s 403' % what)
            t_sixth = time.monotonic()
            blocked = []
            for what, fn in (
                    ('chat with the right token', lambda: web.post(
                        '/cgi-bin/chat', json.dumps({'message': QUESTION, 'token': right}))),
                    ('get_config with the right token', lambda: web.post(
                        '/cgi-bin/get_config', json.dumps({'token': right})))):
                r = fn()
                ra = r.header('retry-after')
                if r.status != 429 or not (ra or '').isdigit():
                    raise Fail('%s after five wrong tokens: HTTP %d, Retry-After %r, not 429 with it: %s'
                               % (what, r.status, ra, r.text()[:200]))
                ra = int(ra)
                lo = TOKEN_WINDOW_S - (time.monotonic() - t_first) - 3
                if not 1 <= ra <= TOKEN_WINDOW_S or ra < lo:
                    raise Fail('%s: Retry-After %d, not within %d..%d s (the window of the first wrong token, '
                               '%.1f s ago)' % (what, ra, max(1, lo), TOKEN_WINDOW_S, time.monotonic() - t_first))
                blocked.append(ra)
                out.append('%s 429, Retry-After: %d' % (what, ra))
            if r.header('content-type') != 'application/json' or 'too many' not in r.text():
                raise Fail('the 429 answer: %s | %s' % (r.head.replace('\r\n', ' | '), r.text()))
            if self.server.answers(smark):
                raise Fail('a refused chat reached the model: %s' % self.server.answers(smark))
            b.quiet(1)
            log = re.sub(r'\x1b\[[0-9;]*m', '', b.since(mark))
            lines = [ln.strip() for ln in log.splitlines() if re.search(TOKEN_BLOCKED, ln)]
            if len(lines) != 1 or 'WebNet channel' not in lines[0]:
                raise Fail('expected one log line "WebNet channel: <address> sent 5 wrong tokens: refused (429) '
                           'for 60 s", got %r' % lines)
            for t in (token, right, 'wrong-token-0123456'):
                if t in log:
                    raise Fail('the console shows a token (%r) during the refusals' % t)
            out.append('logged once: %r' % lines[0])
            self.figures.append(('webnet: 429 after 5 wrong tokens', 'Retry-After %s s; %s' % (
                ', '.join(map(str, blocked)), lines[0])))
            # The window passed: the right token is served again.
            left = t_first + TOKEN_WINDOW_S + TokenWindow.SLACK_S - time.monotonic()
            b.quiet(max(left, 0))
            r = web.post('/cgi-bin/chat', json.dumps({'reset': True, 'token': right}))
            expect_status(r, 200)
            fails.last = None  # the window passed, the entry is gone
            out.append('%.0f s after the first wrong token, chat (reset) with the right token 200' % (
                time.monotonic() - t_first))
            return '%s; %s' % ('waited %.0f s for an earlier window' % waited if waited else
                               'no wrong token before', '; '.join(out))

        def token_back():
            said = console_token(token)
            if not re.match(r'web-token: set', said):
                raise Fail('agent_config web-token (the build\'s again): %r' % said)
            r = web.post('/cgi-bin/get_config', json.dumps({'token': token}))
            expect_status(r, 200)
            return '%r; get_config with the build\'s token 200' % said

        def stacks(when, names=('webnet', LOOP_THREAD)):
            def fn():
                got = []
                for name in names:
                    st = b.thread_stack(name)
                    if not st:
                        raise Fail('`list thread` shows no %s thread' % name)
                    size, pct, line = st
                    self.figures.append(('webnet: %s thread stack high-water %s (list thread)' % (name, when),
                                         '%s%% of %d bytes' % (pct, size)))
                    got.append('%s: %s%% of %d' % (name, pct, size))
                return '; '.join(got)
            return fn

        def cleanup(label):
            def fn():
                b.run('cleanup_agent_entry', timeout=40)
                b.quiet(2)  # lwIP's last segments of the closed sessions
                used = b.free()['used']
                heap[label] = used
                r = web.post('/cgi-bin/chat', json.dumps({'message': 'anyone?', 'token': token}))
                if r.status != 503 or 'not running' not in r.text():
                    raise Fail('after cleanup a chat gets %d: %s' % (r.status, r.text()))
                b.quiet(2)
                used2 = b.free()['used']
                if used2 != used:
                    raise Fail('heap not settled after cleanup: %d then %d after one more request'
                               % (used, used2))
                if label == 'cleanup1':
                    kept = used - boot['used']
                    took = heap['started'] - heap['logged'] if 'logged' in heap else None
                    if took is not None and not 0 < kept <= took:
                        raise Fail('after cleanup %+d bytes over boot, but the channel\'s init and WebNet\'s start '
                                   'took %d: more than WebNet holds stays allocated' % (kept, took))
                    return ('used %d: boot %d %+d, within the %s bytes WebNet\'s start took (it cannot be stopped: '
                            'thread, socket, CGI table); a chat now gets 503' % (used, boot['used'], kept, took))
                base = heap['cleanup1']
                if used != base:
                    raise Fail('heap after this cleanup is %d, after the first one %d (%+d)'
                               % (used, base, used - base))
                return 'used %d (= after the first cleanup); a chat now gets 503' % used
            return fn

        def again():
            b.run('main_loop_entry', timeout=20)
            r = web.post('/cgi-bin/chat', json.dumps({'message': QUESTION, 'stream': True, 'token': token}),
                         timeout=90)
            expect_status(r, 200)
            finals = [d for e, d in sse_events(r.text()) if e == 'final']
            if not finals or not re.fullmatch(ANSWER, finals[-1]):
                raise Fail('second start: final %r' % finals)
            return 'main_loop_entry again, streamed answer %r' % finals[-1]

        def browse():
            # It sends four wrong or missing tokens itself (the first
            # chat, a wrong login, the settings without and with a wrong
            # token): it starts with none counted.
            fails.clear(b)
            b.run('main_loop_entry', timeout=20)
            cmd = browser.split() + ['--url', 'http://127.0.0.1:%d/cgi-bin/agent' % port, '--token', token,
                                     '--key', 'sk-qemu-check',
                                     '--screenshot', os.path.join(self.args.shots, 'browser-webnet-qemu.png')]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
            text = p.stdout.decode('utf-8', 'replace')
            with open(os.path.join(self.args.logs, 'browser-webnet.txt'), 'w') as f:
                f.write(text)
            fails.failed()
            if p.returncode != 0:
                raise Fail('tests/browser/run.py failed (exit %d):\n%s' % (p.returncode, text[-3000:]))
            shot = re.search(r'screenshot: (\S+)', text)
            oks = len(re.findall(r'^ok ', text, re.M))
            return '%d checks passed; screenshot %s' % (oks, shot.group(1) if shot else '?')

        def no_content_type():
            # Last: it takes the board down. WebNet 2.0.3's
            # webnet_request_parse_header passes the NULL content_type of a
            # POST with a body and no Content-Type to str_begin_with. The
            # host port (host/port/webnet_port.c) drops such a connection
            # unanswered because of this; if WebNet ever answers it, that
            # model is to be revisited.
            mark = len(b.buf)
            try:
                r = web.raw(b'POST /cgi-bin/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}',
                            timeout=10)
                answered = 'HTTP %d' % r.status
            except OSError as e:
                answered = None
                why = type(e).__name__
            try:
                b.expect(r'data abort', 10, 'the console after a POST without Content-Type')
            except Timeout:
                raise Fail('WebNet did not crash on a POST with a body and no Content-Type (answer: %s): the '
                           'host port models a crash there (it drops the connection); update it'
                           % (answered or 'none, ' + why))
            m = re.search(r'please use: addr2line -e rtthread.elf -a -f (\w+)\s+([0-9a-f ]+)', b.since(mark))
            return ('no answer (%s); the board took a data abort%s' % (
                answered or why, (' (pc %s, backtrace %s)' % (m.group(1), ' '.join(m.group(2).split()[:3])))
                if m else ''))

        ok = self.attempt(fw, 'nothing on port 80 before main_loop_entry', not_yet)
        ok = self.attempt(fw, 'main_loop_entry starts WebNet, free', start) and ok
        ok = ok and self.attempt(fw, 'GET /cgi-bin/agent: the gzip page = web/agent.html', get_page)
        ok = ok and self.attempt(fw, 'POST /cgi-bin/chat stream: deltas, tool calls, final', stream)
        ok = ok and self.attempt(fw, 'POST /cgi-bin/chat JSON answer', plain)
        ok = ok and self.attempt(fw, 'a slow model streams over time; a second client waits its turn',
                                 slow_and_second)
        ok = ok and self.attempt(fw, 'errors: 405, 400, 413, 404 (nothing reaches the model)', errors)
        ok = ok and self.attempt(fw, 'config/get_config with the token: key masked, model set', config)
        ok = ok and self.attempt(fw, 'agent_config web-token: a short one refused, a new one masked, works at once',
                                 runtime_token)
        ok = ok and self.attempt(fw, 'tokens: 5 wrong -> 403 each, the 6th (right token) 429 with Retry-After, '
                                 'logged once; served again after the window', too_many)
        ok = ok and self.attempt(fw, 'agent_config web-token: the build\'s token again', token_back)
        ok = ok and self.attempt(fw, 'list thread: webnet and AgentLoop stacks', stacks('after the HTTP steps'))
        ok = ok and self.attempt(fw, 'cleanup_agent_entry, heap settles, chat 503', cleanup('cleanup1'))
        ok = ok and self.attempt(fw, 'second main_loop_entry, streamed answer', again)
        ok = ok and self.attempt(fw, 'cleanup again: heap = after the first cleanup', cleanup('cleanup2'))
        if ok and browser:
            ok = self.attempt(fw, 'browser test (tests/browser/run.py --url) on the board\'s page', browse)
            ok = ok and self.attempt(fw, 'cleanup after the browser: heap = after the first cleanup',
                                     cleanup('cleanup3'))
        if ok:
            # The AgentLoop thread is gone after cleanup; WebNet's stays.
            self.attempt(fw, 'list thread at the end: the webnet stack', stacks('after every step', ('webnet',)))
        if ok:
            self.attempt(fw, 'WebNet 2.0.3 quirk: a POST body without Content-Type crashes the board',
                         no_content_type)
        self.figures.append(('webnet: heap used at boot (free)', heap['boot']))
        for k, label in (('started', 'after main_loop_entry (WebNet started)'),
                         ('peak', 'peak ("maximum" of free) after the streamed two-round answer'),
                         ('cleanup1', 'after cleanup_agent_entry (WebNet stays)'),
                         ('cleanup2', 'after the second cycle\'s cleanup'),
                         ('cleanup3', 'after the browser test\'s cleanup')):
            if k in heap:
                self.figures.append(('webnet: heap used %s' % label, heap[k]))
        b.close()
        self.board = None

    # -- MCP firmware --------------------------------------------------------
    def mcp(self, bsp, token, sdk_check, remote_cmd=''):
        """The CLI firmware with PKG_AGENT_MCP_SERVER: the MCP server on the
        board's port 8000 through a hostfwd from 127.0.0.1, driven with the
        official MCP Python SDK and raw HTTP, while the console's chat goes
        on. With remote_cmd (the firmware also has PKG_AGENT_MCP_CLIENT and
        PKG_AGENT_MCP_SERVERS=REMOTE_URLS): the two scripted SDK servers
        started on 127.0.0.1 and reached by the board through guestfwds;
        their tools offered to the model and called, kept out of the
        board's own server, and left out with a reason once they are
        stopped."""
        fw = 'mcp'
        port = free_port()
        fwds = ()
        if remote_cmd:
            fwds = []
            for i, (guest, extra, kind) in enumerate(REMOTES):
                try:
                    r = RemoteMcp(remote_cmd, guest, extra, os.path.join(self.args.logs, 'mcp-remote-%d.log' % (i + 1)))
                except Fail as e:
                    self.record(fw, 'start the scripted MCP server %d (tests/mcp/scripted_server.py)' % (i + 1),
                                'FAIL', str(e))
                    return
                self.remotes.append(r)
                self.figures.append(('mcp client: scripted SDK server %d (%s answers) on the host, relayed from '
                                     'the guest\'s %s:%d' % ((i + 1, kind) + guest), '127.0.0.1:%d' % r.port))
                fwds.append((guest[0], guest[1], [self.server.exe, '--connect', '127.0.0.1:%d' % r.port]))
        try:
            boot = self.boot(bsp, fw, host_port=port, guest_port=MCP_PORT, guestfwds=fwds)
        except (Fail, Timeout) as e:
            self.record(fw, 'boot', 'FAIL', str(e) + self.excerpt(0))
            return
        b = self.board
        web = Web(port)
        url = 'http://127.0.0.1:%d%s' % (port, MCP_PATH)
        heap = {'boot': boot['used']}
        fails = TokenWindow()
        self.figures.append(('mcp: host port forwarded to the board\'s port %d' % MCP_PORT, '127.0.0.1:%d' % port))
        auth = {'Authorization': 'Bearer ' + token}

        def nothing_listens(when):
            def fn():
                try:
                    r = mcp_post(web, INITIALIZE, auth, timeout=8)
                except OSError as e:
                    return 'no answer on port %d %s (%s)' % (MCP_PORT, when, type(e).__name__)
                raise Fail('the board answered HTTP %d on port %d %s' % (r.status, MCP_PORT, when))
            return fn

        def start(cycle):
            def fn():
                mark = len(b.buf)
                b.send('main_loop_entry\r')
                b.expect(r'Agent chat:[^\n]*\n', 20, 'main_loop_entry opens the chat')
                b.expect(re.escape(CHAT_PROMPT), 5, 'the chat prompt')
                b.quiet(1)  # the server thread logs from its own start
                log = b.since(mark)
                m = re.search(r'\[mcp\] serving MCP \(Streamable HTTP\) on port (\d+)(\S*) \((bearer token|no '
                              r'token)\)', log)
                if not m:
                    bad = re.search(r'\[mcp\][^\n]*', log)
                    raise Fail('no "[mcp] serving MCP ..." line after main_loop_entry%s'
                               % (': the log says %r' % bad.group(0) if bad else ''))
                if int(m.group(1)) != MCP_PORT or m.group(2) != MCP_PATH or m.group(3) != 'bearer token':
                    raise Fail('the server says port %s path %s (%s), built with %d %s and a token'
                               % (m.group(1), m.group(2), m.group(3), MCP_PORT, MCP_PATH))
                client = ''
                if remote_cmd:
                    client = '; ' + client_line(mark, cycle)
                    log = b.since(mark)
                started = re.search(r'agent started: used (\d+)', log)
                if started and cycle == 1:
                    heap['started'] = int(started.group(1))
                return 'log: %s; %s%s' % (one_line(m.group(0)),
                                          'heap used at start %s (library log)' % (started.group(1) if started
                                                                                    else '?'), client)
            return fn

        def client_line(mark, cycle):
            # The client's summary of each server: cycle 1 (the scripted
            # servers up) "<url>: 3 remote tool(s)"; cycle 2 (stopped) the
            # reason its tools are left out. Waited for (bounded): the
            # client may still be connecting or retrying when the chat
            # prompt shows.
            lines = []
            for url, tools in zip(REMOTE_URLS, REMOTE_TOOLS):
                esc = re.escape(url)
                want = (r'mcp: %s: (\d+) remote tool\(s\)' % esc if cycle == 1
                        else r'mcp: %s: its tools are left out \(([^\n]*)\)' % esc)
                deadline = time.monotonic() + 60
                while True:
                    log = re.sub(r'\x1b\[[0-9;]*m', '', b.since(mark))
                    got = re.search(want, log)
                    if got:
                        break
                    other = re.search(r'mcp: %s: [^\n]*' % esc, log)
                    if other and cycle == 1:
                        raise Fail('the MCP client logged %r, not its tools' % other.group(0).strip())
                    if time.monotonic() > deadline:
                        raise Fail('no %r line within 60 s of main_loop_entry%s'
                                   % (want, ': the log has %r' % other.group(0) if other else ''))
                    b.quiet(0.5)
                if cycle == 1 and int(got.group(1)) != len(tools):
                    raise Fail('the MCP client registered %s remote tools of %s; the scripted server has %d (%s)'
                               % (got.group(1), url, len(tools), ', '.join(tools)))
                lines.append(got.group(0).strip())
            return 'client: %s' % '; '.join(lines)

        def sdk():
            cmd = sdk_check.split() + ['--url', url, '--token', token]
            t0 = time.monotonic()
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
            # Its 401 checks: the SDK's connect without a token and with a
            # wrong one, and the same as raw requests: four wrong tokens
            # the board counts (src/net/token_limit.rs; a fifth before the
            # window passes would block every later request).
            fails.failed()
            text = p.stdout.decode('utf-8', 'replace')
            with open(os.path.join(self.args.logs, 'mcp-sdk.txt'), 'w') as f:
                f.write(text)
            oks = re.findall(r'^ok +(.*)$', text, re.M)
            if p.returncode != 0 or 'all checks passed' not in text:
                bad = re.findall(r'^FAIL .*$', text, re.M)
                raise Fail('tests/mcp/sdk_server_check.py --url failed (exit %d): %s\n%s'
                           % (p.returncode, '; '.join(bad) or '?', text[-3000:]))
            return '%d checks passed in %.1f s (both connect modes, tools/list add/mul/compare with their ' \
                   'schemas, add(2,3), isError, -32602, 401 twice); output in logs/mcp-sdk.txt' % (
                       len(oks), time.monotonic() - t0)

        def own_server_hides_remote():
            # The board's own MCP server serves its local tools only: a
            # remote tool re-served would make the board a proxy nobody
            # asked for.
            r = mcp_post(web, INITIALIZE, auth)
            sid = r.header('mcp-session-id')
            if r.status != 200 or not sid:
                raise Fail('initialize: HTTP %d %s' % (r.status, r.text()[:200]))
            h = dict(auth, **{'Mcp-Session-Id': sid})
            try:
                lst = mcp_post(web, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}', h)
                body = rpc_json(lst)
                names = [t.get('name') for t in ((body or {}).get('result') or {}).get('tools', [])]
                if lst.status != 200 or not names:
                    raise Fail('tools/list: HTTP %d %s' % (lst.status, lst.text()[:300]))
                if any(re.match(r'm\d+_', n) for n in names) or 'add' not in names:
                    raise Fail('the board\'s own server lists %s (remote tools must not be there)' % names)
                call = mcp_post(web, '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"m1_sub",'
                                     '"arguments":{"a":10,"b":4}}}', h)
                cb = rpc_json(call) or {}
                refused = 'error' in cb or (cb.get('result') or {}).get('isError') is True
                if call.status != 200 or not refused or '10 - 4' in call.text():
                    raise Fail('tools/call m1_sub on the board\'s own server was not refused: HTTP %d %s'
                               % (call.status, call.text()[:300]))
                how = 'JSON-RPC %s' % cb['error'].get('code') if 'error' in cb else 'isError'
            finally:
                web.raw(('DELETE %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: '
                         '%s\r\n\r\n' % (MCP_PATH, token, sid)).encode())
            return 'tools/list: %s; tools/call m1_sub refused (%s)' % (' '.join(names), how)

        def remote_call(keyword, question, expect):
            # The model (qemu_llm_server's remotesub / remoteecho) calls a
            # remote tool and answers with its result: the answer on the
            # console carries what the SDK server computed.
            def fn():
                mark = self.server.mark()
                reply, secs = self.chat(question, expect, 90)
                got = self.server.answers(mark)
                scen = [sc for (sc, _, _) in got]
                if scen != [keyword + '-call', keyword + '-answer']:
                    raise Fail('the LLM server answered %s, not the remote call then the answer' % got)
                offered = self.server.offered(mark)
                missing = [t for ts in REMOTE_TOOLS for t in ts if not offered or t not in offered[0]]
                if missing:
                    raise Fail('the first request did not offer %s: %s' % (missing, offered[:1]))
                return 'answered in %.1f s: %s; the model was offered %s' % (
                    secs, one_line(reply), ' '.join(offered[0]))
            return fn

        def stop_remote():
            out = []
            for r in self.remotes:
                r.stop()
                try:
                    socket.create_connection(('127.0.0.1', r.port), timeout=3).close()
                except OSError as e:
                    out.append('nothing on 127.0.0.1:%d (%s)' % (r.port, type(e).__name__))
                    continue
                raise Fail('127.0.0.1:%d still answers after its scripted MCP server was stopped' % r.port)
            return 'both stopped; ' + ', '.join(out)

        def local_only():
            # The remote servers down: the arithmetic question still answered
            # with the board's own tools, and no remote tool offered.
            mark = self.server.mark()
            _, secs = self.chat(QUESTION, ANSWER, 90)
            kinds = [k for (_, _, k) in self.server.answers(mark)]
            if kinds != ['tool_calls', 'tool_calls', 'text']:
                raise Fail('the two-round question: the server answered %s' % kinds)
            offered = self.server.offered(mark)
            remote = sorted({t for o in offered for t in o if re.match(r'm\d+_', t)})
            if remote or not offered:
                raise Fail('the requests offered remote tools %s (or none logged: %s)' % (remote, offered))
            return 'answered in %.1f s with local tools (%s), no remote (m<N>_) tool offered' % (
                secs, ' '.join(offered[0]))

        def bad_input():
            out = []
            mark = self.server.mark()
            for what, body, code, rpc in (
                    ('malformed JSON', '{"jsonrpc":"2.0","id":1,"method":', 400, -32700),
                    ('a batch', '[' + INITIALIZE + ']', 400, -32600),
                    ('not an object', '42', 400, -32600)):
                r = mcp_post(web, body, auth)
                got = rpc_code(r)
                if r.status != code or got != rpc:
                    raise Fail('%s: expected HTTP %d with JSON-RPC %d, got %d %s: %s'
                               % (what, code, rpc, r.status, got, r.text()[:200]))
                out.append('%s %d/%d' % (what, r.status, got))
            # A body over PKG_AGENT_MCP_MAX_BODY (4096), sent whole: the
            # server answers from the head, without reading it.
            big = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'ping', 'params': {'pad': 'x' * 5000}})
            try:
                r = mcp_post(web, big, auth)
            except OSError as e:
                raise Fail('a %d-byte body: no answer (%s: %s)' % (len(big), type(e).__name__, e))
            if r.status != 413:
                raise Fail('a %d-byte body: HTTP %d, not 413: %s' % (len(big), r.status, r.text()[:200]))
            out.append('%d-byte body %d' % (len(big), r.status))
            # The head alone announcing such a body (a client waiting to
            # send it).
            r = web.raw(('POST %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\nContent-Type: '
                         'application/json\r\nContent-Length: 100000\r\n\r\n' % (MCP_PATH, token)).encode())
            if r.status != 413:
                raise Fail('a head announcing 100000 bytes: HTTP %d, not 413' % r.status)
            out.append('head announcing 100000 bytes %d' % r.status)
            # With the token: a GET without it is a wrong token the board
            # counts (the SDK check's four before it make five: the next
            # request would get 429); the 429 step sends that one.
            r = web.raw(('GET %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\n\r\n'
                         % (MCP_PATH, token)).encode())
            if r.status != 405:
                raise Fail('GET %s with the token: HTTP %d, not 405: %s' % (MCP_PATH, r.status, r.text()[:200]))
            out.append('GET (with the token) %d' % r.status)
            if self.server.answers(mark):
                raise Fail('an MCP request reached the model: %s' % self.server.answers(mark))
            return ', '.join(out)

        def broken_clients():
            # A client that resets the connection after half a head: lwIP
            # keeps ERR_RST, so every later recv() fails at once; the
            # server must take that as the end of the connection, not wait
            # out its 5 s read deadline (the next client would wait that
            # long). And a client that pauses 2 s in the middle of its head
            # (two SO_RCVTIMEO timeouts of 1 s): still answered, so a
            # timeout is still told from a failure.
            out = []
            for i in (1, 2):
                s = socket.create_connection(('127.0.0.1', port), timeout=10)
                s.sendall(('POST %s HTTP/1.1\r\nHost: board\r\n' % MCP_PATH).encode())
                time.sleep(0.5)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
                s.close()  # SO_LINGER 0: an RST, relayed to the guest by QEMU's slirp
                t0 = time.monotonic()
                r = mcp_post(web, INITIALIZE, auth)
                secs = time.monotonic() - t0
                if r.status != 200:
                    raise Fail('initialize after a reset client: HTTP %d %s' % (r.status, r.text()[:200]))
                web.raw(('DELETE %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: '
                         '%s\r\n\r\n' % (MCP_PATH, token, r.header('mcp-session-id'))).encode())
                if secs > 2:
                    raise Fail('the client after one that reset mid-request was answered after %.1f s: the '
                               'server stayed on the reset connection' % secs)
                out.append('%.2f s' % secs)
            s = socket.create_connection(('127.0.0.1', port), timeout=20)
            try:
                data = INITIALIZE.encode()
                s.sendall(('POST %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\n'
                           % (MCP_PATH, token)).encode())
                time.sleep(2.0)
                s.sendall(('Content-Type: application/json\r\nContent-Length: %d\r\n\r\n' % len(data)).encode()
                          + data)
                buf = b''
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
            finally:
                s.close()
            r = Response(buf, True) if buf else None
            if r is None or r.status != 200:
                raise Fail('a client pausing 2 s inside its head got %s' % (r and r.status or 'no answer'))
            web.raw(('DELETE %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: '
                     '%s\r\n\r\n' % (MCP_PATH, token, r.header('mcp-session-id'))).encode())
            return ('the next client after one that reset mid-request answered in %s; a client pausing 2 s inside '
                    'its head answered (200)' % ' and '.join(out))

        flood_result = {}

        def flood(times):
            ids, statuses = [], []
            for _ in range(20):
                r = mcp_post(web, INITIALIZE, auth)
                times.append(time.monotonic())
                statuses.append(r.status)
                if r.status == 200:
                    ids.append(r.header('mcp-session-id'))
                elif r.status != 503 or rpc_code(r) is None:
                    flood_result['bad'] = 'HTTP %d: %s' % (r.status, r.text()[:200])
            flood_result['statuses'] = statuses
            deleted = []
            for sid in ids:
                r = web.raw(('DELETE %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: '
                             '%s\r\n\r\n' % (MCP_PATH, token, sid)).encode())
                deleted.append(r.status)
            flood_result['deleted'] = deleted
            r = mcp_post(web, INITIALIZE, auth)
            flood_result['after'] = r.status
            if r.status == 200:
                web.raw(('DELETE %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: '
                         '%s\r\n\r\n' % (MCP_PATH, token, r.header('mcp-session-id'))).encode())

        def flood_and_chat():
            # The flood from a host thread while the console's chat waits
            # for a slow model (five fragments 600 ms apart): the agent loop
            # and the server share the heap and the tool lock, nothing else,
            # so the chat must be answered meanwhile. Then the two-round
            # question (the tools, under the lock the server also takes).
            errors, times = [], []

            def run_flood():
                try:
                    flood(times)
                except (OSError, Fail) as e:
                    errors.append('%s: %s' % (type(e).__name__, e))

            th = threading.Thread(target=run_flood)
            th.start()
            t0 = time.monotonic()
            _, secs = self.chat('slowstream: count for me', r'Counting slowly: one, two, three\.', 90)
            t1 = time.monotonic()
            th.join(180)
            if th.is_alive() or errors:
                raise Fail('the flood did not finish: %s' % (errors or 'still running after 180 s'))
            during = sum(1 for t in times if t0 <= t <= t1)
            if during == 0:
                raise Fail('no flood request was answered during the %.1f s chat (flood %.1f-%.1f s): no overlap, '
                           'nothing shown' % (t1 - t0, times[0] - t0, times[-1] - t0))
            st = flood_result.get('statuses', [])
            if 'bad' in flood_result:
                raise Fail('flood: %s' % flood_result['bad'])
            if st[:MCP_SESSIONS] != [200] * MCP_SESSIONS or st[MCP_SESSIONS:] != [503] * (20 - MCP_SESSIONS):
                raise Fail('20 initialize with %d sessions allowed: %s (the SDK\'s sessions must have been ended '
                           'by its DELETE)' % (MCP_SESSIONS, st))
            if flood_result['deleted'] != [200] * MCP_SESSIONS or flood_result['after'] != 200:
                raise Fail('DELETE of the %d sessions: %s; initialize after: %s'
                           % (MCP_SESSIONS, flood_result['deleted'], flood_result['after']))
            mark = self.server.mark()
            _, secs2 = self.chat(QUESTION, ANSWER, 90)
            kinds = [k for (_, _, k) in self.server.answers(mark)]
            if kinds != ['tool_calls', 'tool_calls', 'text']:
                raise Fail('the two-round question after the flood: the server answered %s' % kinds)
            return ('the slow chat answered in %.1f s, %d of the 20 initialize answered within it (flood %.1f s); '
                    '%d x 200 then %d x 503; DELETE %s; a new initialize then %d; then the two-round question '
                    'answered in %.1f s' % (secs, during, times[-1] - times[0], st.count(200), st.count(503),
                                            '/'.join(map(str, flood_result['deleted'])), flood_result['after'],
                                            secs2))

        def leave():
            b.send('\x04')
            b.expect(r'leaving the agent chat', 10, 'Ctrl-D leaves the chat')
            self.shell_alive('after Ctrl-D')
            got = []
            out = b.run('list thread')
            # tcpip: lwIP's thread, on the BSP's 1024-byte stack (the
            # WebNet firmware needs 2048), runs every segment of the
            # server's connections.
            for name in (MCP_THREAD, LOOP_THREAD, 'tcpip'):
                line = next((ln for ln in out.splitlines() if ln.split() and ln.split()[0].startswith(name)), None)
                if not line:
                    raise Fail('`list thread` shows no %s thread:\n%s' % (name, out))
                f = line.split()
                size = int(f[4], 16) if f[4].startswith('0x') else int(f[4])
                pct = re.search(r'(\d+)%', line)
                self.figures.append(('mcp: %s stack high-water (list thread)' % name,
                                     '%s%% of %d bytes' % (pct.group(1) if pct else '?', size)))
                got.append('%s %s%% of %d' % (name, pct.group(1) if pct else '?', size))
            f = b.free()
            heap['peak'] = f['max']
            return '; '.join(got) + '; free: used %d, maximum %d' % (f['used'], f['max'])

        def cleanup(cycle, half_sent=False):
            def fn():
                held = None
                if half_sent:
                    # A client that sent half a head and went silent: the
                    # server sits in recv() on it. Stopping must not wait
                    # for that client (nor for the 5 s read deadline): recv
                    # returns after SO_RCVTIMEO (1 s) and the thread sees
                    # the stop request.
                    held = socket.create_connection(('127.0.0.1', port), timeout=10)
                    held.sendall(('POST %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\n'
                                  % (MCP_PATH, token)).encode())
                    time.sleep(0.5)
                t0 = time.monotonic()
                try:
                    out = b.run('cleanup_agent_entry', timeout=40)
                    secs = time.monotonic() - t0
                    if held is not None:
                        if secs >= 4:
                            raise Fail('cleanup_agent_entry took %.1f s with a silent client connected: the '
                                       'server did not leave recv() on its 1 s SO_RCVTIMEO' % secs)
                        try:
                            closed = held.recv(100) == b''
                        except OSError:
                            closed = True
                        if not closed:
                            raise Fail('the silent client got an answer, not the connection closed')
                finally:
                    if held is not None:
                        held.close()
                b.quiet(2)  # lwIP's last segments of the closed connections
                m = re.search(r'cleanup done: used (\d+)', out)
                used = b.free()['used']
                heap['cleanup%d' % cycle] = used
                if used != boot['used']:
                    raise Fail('heap used after cleanup is %d, at boot %d (%+d)'
                               % (used, boot['used'], used - boot['used']))
                return 'returned in %.1f s%s; free: used %d (= boot)%s' % (
                    secs, ' with a silent client connected (closed)' if half_sent else '', used,
                    '; library log: cleanup done: used %s' % m.group(1) if m else '')
            return fn

        def again():
            # The console back first: `free` with the server started and
            # idle (the library's "agent started" line comes before it).
            b.send('\x04')
            b.expect(r'leaving the agent chat', 10, 'Ctrl-D leaves the chat')
            self.shell_alive('after Ctrl-D')
            heap['serving'] = b.free()['used']
            r = mcp_post(web, INITIALIZE, auth)
            if r.status != 200 or not r.header('mcp-session-id'):
                raise Fail('initialize after the restart: HTTP %d %s' % (r.status, r.text()[:200]))
            sid = r.header('mcp-session-id')
            r2 = mcp_post(web, '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mul",'
                               '"arguments":{"a":6,"b":7}}}', dict(auth, **{'Mcp-Session-Id': sid}))
            text = r2.text()
            if r2.status != 200 or '42' not in text or '"isError":true' in text.replace(' ', ''):
                raise Fail('tools/call mul(6,7) after the restart: HTTP %d %s' % (r2.status, text[:300]))
            r3 = web.raw(('DELETE %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: '
                          '%s\r\n\r\n' % (MCP_PATH, token, sid)).encode())
            return 'free with the server idle: used %d; initialize 200, tools/call mul(6,7): %s; DELETE %d' % (
                heap['serving'], one_line(r2.text())[:160], r3.status)

        def too_many():
            # Issue 30: five wrong or missing tokens, each 401 (with
            # WWW-Authenticate: Bearer); the sixth request, with the right
            # token, gets 429 with Retry-After, and so does the seventh;
            # the block logged once, no token in the log; once the window
            # has passed the right token is served again. The SDK check's
            # two 401s and bad_input's GET came earlier: the step first
            # waits until they are out of the board's window.
            waited = fails.clear(b)
            mark = len(b.buf)
            wrong = 'wrong-token-0123456'
            five = (
                ('initialize without Authorization', lambda: mcp_post(web, INITIALIZE, {})),
                ('initialize with a wrong bearer token',
                 lambda: mcp_post(web, INITIALIZE, {'Authorization': 'Bearer ' + wrong})),
                ('initialize with the token as Basic credentials',
                 lambda: mcp_post(web, INITIALIZE, {'Authorization': 'Basic ' + token})),
                ('tools/list with the token one character off',
                 lambda: mcp_post(web, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
                                  {'Authorization': 'Bearer ' + token[:-1] + 'X'})),
                ('GET without token', lambda: web.get(MCP_PATH)),
            )
            out = []
            t_first = None
            for what, fn in five:
                r = fn()
                fails.failed()
                if t_first is None:
                    t_first = time.monotonic()
                if r.status != 401 or 'bearer' not in (r.header('www-authenticate') or '').lower():
                    raise Fail('%s: expected 401 with WWW-Authenticate: Bearer, got %d: %s | %s'
                               % (what, r.status, r.head.replace('\r\n', ' | '), r.text()[:200]))
                out.append('%s 401' % what)
            blocked = []
            for what, body in (('initialize with the right token', INITIALIZE),
                               ('tools/call mul(6,7) with the right token',
                                '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mul",'
                                '"arguments":{"a":6,"b":7}}}')):
                r = mcp_post(web, body, auth)
                ra = r.header('retry-after')
                if r.status != 429 or not (ra or '').isdigit():
                    raise Fail('%s after five wrong tokens: HTTP %d, Retry-After %r, not 429 with it: %s | %s'
                               % (what, r.status, ra, r.head.replace('\r\n', ' | '), r.text()[:200]))
                ra = int(ra)
                lo = TOKEN_WINDOW_S - (time.monotonic() - t_first) - 3
                if not 1 <= ra <= TOKEN_WINDOW_S or ra < lo:
                    raise Fail('%s: Retry-After %d, not within %d..%d s (the window of the first wrong token, '
                               '%.1f s ago)' % (what, ra, max(1, lo), TOKEN_WINDOW_S, time.monotonic() - t_first))
                if r.header('mcp-session-id') or '42' in r.text():
                    raise Fail('%s: refused with 429 but served: %s' % (what, r.text()[:200]))
                blocked.append(ra)
                out.append('%s 429, Retry-After: %d' % (what, ra))
            b.quiet(1)
            log = re.sub(r'\x1b\[[0-9;]*m', '', b.since(mark))
            lines = [ln.strip() for ln in log.splitlines() if re.search(TOKEN_BLOCKED, ln)]
            if len(lines) != 1 or '[mcp]' not in lines[0]:
                raise Fail('expected one log line "[mcp]: <address> sent 5 wrong tokens: refused (429) for 60 s", '
                           'got %r' % lines)
            for t in (token, wrong, token[:-1] + 'X'):
                if t in log:
                    raise Fail('the console shows a token (%r) during the refusals' % t)
            out.append('logged once: %r' % lines[0])
            self.figures.append(('mcp: 429 after 5 wrong tokens', 'Retry-After %s s; %s' % (
                ', '.join(map(str, blocked)), lines[0])))
            left = t_first + TOKEN_WINDOW_S + TokenWindow.SLACK_S - time.monotonic()
            b.quiet(max(left, 0))
            r = mcp_post(web, INITIALIZE, auth)
            if r.status != 200 or not r.header('mcp-session-id'):
                raise Fail('initialize with the right token after the window: HTTP %d %s' % (r.status, r.text()[:200]))
            r3 = web.raw(('DELETE %s HTTP/1.1\r\nHost: board\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: '
                          '%s\r\n\r\n' % (MCP_PATH, token, r.header('mcp-session-id'))).encode())
            fails.last = None  # the window passed, the entry is gone
            out.append('%.0f s after the first wrong token, initialize with the right token 200 (DELETE %d)'
                       % (time.monotonic() - t_first, r3.status))
            return '%s; %s' % ('waited %.0f s for the earlier wrong tokens to leave the window' % waited
                               if waited else 'no wrong token before', '; '.join(out))

        ok = self.attempt(fw, 'nothing on port %d before main_loop_entry' % MCP_PORT,
                          nothing_listens('before main_loop_entry'))
        ok = self.attempt(fw, 'main_loop_entry: "[mcp] serving MCP" on port %d' % MCP_PORT, start(1)) and ok
        ok = ok and self.attempt(fw, 'official MCP Python SDK (sdk_server_check.py --url) on the board', sdk)
        if remote_cmd:
            ok = ok and self.attempt(fw, 'client: the board\'s own MCP server lists and calls no remote tool',
                                     own_server_hides_remote)
            ok = ok and self.attempt(fw, 'client: the model calls m1_sub (SSE server), the answer carries its '
                                     'result', remote_call('remotesub', 'remotesub: what is 10 - 4?',
                                                           r'Remote result: 10 - 4 = 6'))
            ok = ok and self.attempt(fw, 'client: the model calls m2_echo (JSON server), the answer carries its '
                                     'result', remote_call('remoteecho', 'remoteecho: say hi there',
                                                           r'Remote result: echo: hi there'))
        ok = ok and self.attempt(fw, 'bad input: malformed JSON, batch, oversized bodies', bad_input)
        ok = ok and self.attempt(fw, 'a client reset mid-request does not hold the server; a slow one is served',
                                 broken_clients)
        ok = ok and self.attempt(fw, 'flood of 20 initialize while the chat answers; DELETE', flood_and_chat)
        ok = ok and self.attempt(fw, 'Ctrl-D; list thread: AgentMcp, AgentLoop and tcpip stacks', leave)
        ok = ok and self.attempt(fw, 'cleanup_agent_entry, heap back to boot', cleanup(1))
        ok = ok and self.attempt(fw, 'nothing on port %d after cleanup' % MCP_PORT, nothing_listens('after cleanup'))
        if remote_cmd:
            ok = ok and self.attempt(fw, 'client: stop both scripted MCP servers', stop_remote)
        # At once again: the port must be free for the new listener though
        # the last connections' TIME_WAIT lasts 2 MSL (lwIP SO_REUSE).
        ok = ok and self.attempt(fw, 'second main_loop_entry: serving again at once%s'
                                 % (', the client says why the remote tools are left out' if remote_cmd else ''),
                                 start(2))
        if remote_cmd:
            ok = ok and self.attempt(fw, 'client: the remote servers down, the two-round question with local tools',
                                     local_only)
        ok = ok and self.attempt(fw, 'second cycle: Ctrl-D, free, initialize, tools/call mul, DELETE', again)
        ok = ok and self.attempt(fw, 'tokens: 5 wrong -> 401 each, the 6th (right token) 429 with Retry-After, '
                                 'logged once; served again after the window', too_many)
        ok = ok and self.attempt(fw, 'second cleanup_agent_entry with a silent client connected, heap back',
                                 cleanup(2, half_sent=True))
        self.figures.append(('mcp: heap used at boot (free)', heap['boot']))
        # The library's "agent started" line comes after the MCP client's
        # start (its remote tools registered) and before the server's.
        for k, label in (('started', 'at agent start (library log: remote tools registered, before the server '
                                     'starts)' if remote_cmd else 'at agent start (library log, before the server '
                                     'starts)'),
                         ('serving', 'after main_loop_entry, the server started and idle (free, second cycle)'),
                         ('peak', 'peak ("maximum" of free) after the SDK check, bad input, flood and chat'),
                         ('cleanup1', 'after cleanup_agent_entry'),
                         ('cleanup2', 'after the second cycle\'s cleanup')):
            if k in heap:
                self.figures.append(('mcp: heap used %s' % label, heap[k]))
        b.close()
        self.board = None

    # -- HTTPS firmwares -----------------------------------------------------
    def tls_boot(self, bsp, name):
        """Boot a TLS firmware with the front's guestfwd (10.0.2.100:443),
        set its clock from the host (the soft RTC starts at 2018-01-01: a
        board with an RTC or an NTP sync has the time), and return (boot
        free, the mark of the front's connections before the boot)."""
        mark = self.front.mark()
        relay = [self.args.server, '--connect', '127.0.0.1:%d' % self.front.port]
        boot = self.boot(bsp, name, guestfwds=[(GUEST_SERVER, TLS_PORT, relay)])
        self.set_clock()
        return boot, mark

    def set_clock(self):
        b = self.board
        out = b.run('date')
        tz = re.search(r'timezone: UTC([+-])(\d+):(\d+)', out)
        off = 0
        if tz:
            off = (int(tz.group(2)) * 3600 + int(tz.group(3)) * 60) * (1 if tz.group(1) == '+' else -1)
        t = time.gmtime(time.time() + off)
        b.run('date %d %d %d %d %d %d' % (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec))
        out = b.run('date')
        m = re.search(r'timestamps: (\d+)', out)
        if not m or abs(int(m.group(1)) - time.time()) > 120:
            raise Fail('setting the board\'s clock with `date` did not take: %s' % one_line(out))
        self.tls_notes.setdefault('clock', 'soft RTC set with `date` to the host\'s time after each boot '
                                  '(board timezone %s)' % (tz.group(0)[10:] if tz else '?'))

    def tls_conn_note(self, conns):
        parts = []
        for c in conns:
            if c['handshake'] in ('full', 'resumed'):
                parts.append('%s %d ms' % (c['handshake'], c['handshake_ms']))
            else:
                parts.append('%s%s' % (c['handshake'], (' (%s)' % c['error'][:90]) if c['error'] else ''))
        return '%d connection(s): %s' % (len(conns), ', '.join(parts) if parts else '-')

    def tls_start(self, fw, b):
        mark = len(b.buf)
        b.send('main_loop_entry\r')
        b.expect(r'Agent chat:[^\n]*\n', 20, 'main_loop_entry opens the chat')
        b.expect(re.escape(CHAT_PROMPT), 5, 'the chat prompt')
        log = re.sub(r'\x1b\[[0-9;]*m', '', b.since(mark))
        tls_lines = [ln.strip() for ln in log.splitlines() if re.search(r'\bTLS\b|mbedtls|certificate', ln)]
        if tls_lines:
            self.tls_notes['start log'] = ' | '.join(tls_lines)[:400]
        else:
            self.tls_notes.setdefault('start log', 'no line about TLS or certificates (main_loop_entry)')
        return log

    def tls_leave(self, b):
        b.send('\x04')
        b.expect(r'leaving the agent chat', 10, 'Ctrl-D leaves the chat')
        self.shell_alive('after Ctrl-D')

    def tls(self, bsp, debug_bsp, pki):
        fw = 'tls'
        self.tls_notes = {}
        self.front = tls_front.TlsFront(pki, self.server.port, os.path.join(self.args.logs, 'tls-front.log'))
        self.figures.append(('tls: front', '127.0.0.1:%d (guestfwd %s:%d), PKI %s' % (
            self.front.port, GUEST_SERVER, TLS_PORT, pki)))
        turns = []
        first_random = []

        def begin():
            return self.front.mark()

        def end(mark, cycle):
            conns = self.front.since(mark)
            full, resumed, other = tls_front.summary(conns)
            turns.append((cycle, full, resumed, other, conns))
            return 'TLS front: %s' % self.tls_conn_note(conns)

        state = {}

        def no_clock_said():
            # Before the clock is set (the soft RTC reads 2018): the start
            # log must say that certificate dates are not checked.
            b = self.board
            log = self.tls_start(fw, b)
            self.tls_leave(b)
            b.run('cleanup_agent_entry', timeout=20)
            line = [ln for ln in log.splitlines() if 'certificate dates are not checked' in ln]
            if not line:
                raise Fail('the start log without a set clock says nothing about certificate dates: %s'
                           % one_line(log)[-300:])
            return line[0].strip()

        def after_boot():
            self.attempt(fw, 'no clock set: the start log says certificate dates are not checked', no_clock_said)
            self.set_clock()

        # 1. Three cycles on a fresh boot, the front in its good (RSA) mode.
        self.front.set_mode('good')
        boot_mark = self.front.mark()
        relay = [self.args.server, '--connect', '127.0.0.1:%d' % self.front.port]
        boot = self.cli_cycles(bsp, fw, boot_kw={'guestfwds': [(GUEST_SERVER, TLS_PORT, relay)]},
                               after_boot=after_boot, turn=(begin, end))
        conns = self.front.since(boot_mark)
        if conns:
            first_random.append(('%s boot %d' % (fw, self.boots), conns[0]['random']))

        def per_turn():
            if not turns:
                raise Fail('no two-round turn completed, nothing counted')
            rows = ['turn %d: %d full, %d resumed, %d other' % (c, f, r, o) for c, f, r, o, _ in turns]
            bad = [t for t in turns if t[1] > 1]
            if bad:
                raise Fail('more than one full handshake in a user turn (%s); every request of the turn '
                           'negotiated a new session: neither keep-alive nor session resumption'
                           % '; '.join(rows))
            return '; '.join(rows)

        self.attempt(fw, 'one full TLS handshake per user turn (counted at the front)', per_turn)
        all_conns = [c for t in turns for c in t[4]]
        fulls = sorted(c['handshake_ms'] for c in all_conns if c['handshake'] == 'full')
        res = sorted(c['handshake_ms'] for c in all_conns if c['handshake'] == 'resumed')
        if fulls:
            self.figures.append(('tls: full handshake as the front sees it (ClientHello to Finished), RSA leaf',
                                 'min %d, median %d, max %d ms (%d handshakes)'
                                 % (fulls[0], fulls[len(fulls) // 2], fulls[-1], len(fulls))))
        if res:
            self.figures.append(('tls: resumed handshake as the front sees it', 'min %d, median %d, max %d ms'
                                 % (res[0], res[len(res) // 2], res[-1])))
        if all_conns and all_conns[0].get('cipher'):
            self.figures.append(('tls: protocol and cipher (RSA leaf)', '%s %s' % (all_conns[0]['version'],
                                                                                  all_conns[0]['cipher'])))

        if self.board is None:
            try:
                boot, mark = self.tls_boot(bsp, fw + '-faults')
                conns = self.front.since(mark)
            except (Fail, Timeout) as e:
                self.record(fw, 'boot for the next steps', 'FAIL', str(e))
                self.tls_two_boots(bsp, fw, first_random)
                self.tls_debug(debug_bsp, first_random)
                return
        b = self.board
        boot_used = boot['used'] if boot else None

        # 2. An ECDSA leaf: its own AgentLoop thread, so its own stack
        # high-water mark.
        def ecdsa():
            self.front.set_mode('good-ecdsa')
            try:
                self.tls_start(fw, b)
                mark = self.front.mark()
                reply, secs = self.chat(QUESTION, ANSWER, 90)
                conns = self.front.since(mark)
                self.tls_leave(b)
                st = b.thread_stack(LOOP_THREAD)
                if st:
                    state['stack_ecdsa'] = st
                b.run('cleanup_agent_entry', timeout=40)
                used = b.free()['used']
                if boot_used is not None and used != boot_used:
                    raise Fail('heap used after cleanup is %d, at boot %d (%+d)' % (used, boot_used, used - boot_used))
                ok = [c for c in conns if c['handshake'] in ('full', 'resumed')]
                if ok:
                    state['ecdsa_cipher'] = '%s %s' % (ok[0]['version'], ok[0]['cipher'])
                    full = [c['handshake_ms'] for c in ok if c['handshake'] == 'full']
                    if full:
                        state['ecdsa_ms'] = full
                return 'answered in %.1f s; TLS front: %s; heap back to %d' % (secs, self.tls_conn_note(conns), used)
            finally:
                self.front.set_mode('good')

        ok = self.attempt(fw, 'ECDSA (P-256) leaf: two tool rounds, cleanup, heap back', ecdsa)
        if 'stack_ecdsa' in state:
            size, pct, line = state['stack_ecdsa']
            self.figures.append(('tls: %s stack high-water, ECDSA leaf (list thread)' % LOOP_THREAD,
                                 '%s%% of %d bytes' % (pct, size)))
        if 'ecdsa_cipher' in state:
            self.figures.append(('tls: protocol and cipher (ECDSA leaf)', state['ecdsa_cipher']))
        if 'ecdsa_ms' in state:
            self.figures.append(('tls: full handshake as the front sees it, ECDSA leaf',
                                 ', '.join('%d ms' % v for v in state['ecdsa_ms'])))
        if not ok:
            self.board.close()
            self.board = None
            try:
                boot, _ = self.tls_boot(bsp, fw + '-faults')
                boot_used = boot['used']
            except (Fail, Timeout) as e:
                self.record(fw, 'boot for the fault steps', 'FAIL', str(e))
                self.tls_two_boots(bsp, fw, first_random)
                self.tls_debug(debug_bsp, first_random)
                return
        b = self.board

        # 3. Faults in one chat: each refused with its cause named, within
        # the request deadline.
        if self.attempt(fw, 'faults: main_loop_entry', lambda: self.tls_start(fw, b) and None):
            for mode in ('wrong-ca', 'expired', 'not-yet-valid', 'close-mid-handshake'):
                if not self.tls_fault(fw, mode):
                    break
            else:
                self.tls_large(fw, boot_used)
        if self.board:
            self.board.close()
            self.board = None

        # 4. A second boot: another ClientHello random; the stalled handshake
        # on this board (it may not come back).
        self.tls_two_boots(bsp, fw, first_random)
        # 5. The Debug firmware: cleanup_agent_entry during a stalled
        # handshake.
        self.tls_debug(debug_bsp, first_random)
        for k, v in self.tls_notes.items():
            self.figures.append(('tls: %s' % k, v))

    def tls_fault(self, fw, mode, board_may_hang=False):
        """One question with the front in `mode`: the reply must come within
        the deadline and name the cause. Returns whether the chat is usable
        afterwards."""
        b = self.board
        usable = {'ok': True}

        def fn():
            self.front.set_mode(mode)
            mark = self.front.mark()
            smark = self.server.mark()
            text = 'what is 6*7?'
            t0 = time.monotonic()
            b.send(text + '\r')
            start = b.expect(re.escape(text), 5, 'the chat echoes the message').end()
            try:
                end = b.expect(re.escape(CHAT_PROMPT), TLS_DEADLINE_S + TLS_SLACK_S,
                               'the reply with the front in %s mode' % mode).start()
            except Timeout:
                secs = time.monotonic() - t0
                conns = self.front.since(mark)
                # Let the board go: the front answers normally again and
                # drops what it holds; the reply may still come.
                self.front.set_mode('good')
                released = self.front.release()
                try:
                    b.expect(re.escape(CHAT_PROMPT), 120, 'the reply after the front let go')
                    late = 'a reply came %.0f s after the question, once the front %s: %s' % (
                        time.monotonic() - t0, 'closed the stalled connection(s)' if released else
                        'answered normally', one_line(b.buf[start:b.pos])[:200])
                except Timeout:
                    usable['ok'] = False
                    late = 'no reply even 120 s after the front let go: the board is rebooted for the next steps'
                raise Fail('no reply within %d s (request deadline %d s + %d s); TLS front: %s; %s'
                           % (int(secs), TLS_DEADLINE_S, TLS_SLACK_S, self.tls_conn_note(conns), late))
            secs = time.monotonic() - t0
            reply = b.buf[start:end]
            # The front's side of a refused handshake may end a moment
            # after the board's.
            self.front.wait_conns(mark, lambda c: all(x['handshake'] for x in c), 3)
            conns = self.front.since(mark)
            self.front.set_mode('good')
            self.front.release()
            answered = self.server.answers(smark)
            if re.search(r'The result is', reply) or answered:
                raise Fail('the certificate/handshake was accepted: the request reached the model (%d answer(s)) '
                           'and the reply is %s; TLS front: %s' % (len(answered), one_line(reply)[:200],
                                                                   self.tls_conn_note(conns)))
            text = reply_text(reply)
            if not re.search(TLS_CAUSES[mode], text):
                raise Fail('reply after %.1f s does not name the cause (/%s/): %r; TLS front: %s; console: %s'
                           % (secs, TLS_CAUSES[mode], text[:300], self.tls_conn_note(conns), one_line(reply)[:300]))
            if secs > TLS_DEADLINE_S + TLS_SLACK_S:
                raise Fail('reply after %.1f s, deadline %d s' % (secs, TLS_DEADLINE_S))
            return 'reply after %.1f s: %r; TLS front: %s' % (secs, text[:300], self.tls_conn_note(conns))

        labels = {'wrong-ca': 'a leaf of another CA', 'expired': 'an expired leaf',
                  'not-yet-valid': 'a leaf not yet valid', 'close-mid-handshake': 'the server closes mid-handshake',
                  'stall-handshake': 'the server stalls in the handshake'}
        self.attempt(fw, 'faults: %s (%s): answered within the deadline, cause named' % (labels[mode], mode), fn)
        if not usable['ok']:
            self.board.close()
            self.board = None
        return usable['ok']

    def tls_large(self, fw, boot_used):
        b = self.board
        state = {}

        def fn():
            self.front.set_mode('large-records')
            mark = self.front.mark()
            smark = self.server.mark()
            try:
                reply, secs = self.chat(WIDE_QUESTION, WIDE_ANSWER, 150)
            except Fail as e:
                conns = self.front.since(mark)
                # A failed read or retry: the chat may come back later.
                try:
                    b.expect(re.escape(CHAT_PROMPT), 60, 'the chat prompt after the failure')
                except Timeout:
                    pass
                raise Fail('%s; server answers: %s; TLS front: %s; largest record written %s bytes'
                           % (e, [(k, st) for _, st, k in self.server.answers(smark)], self.tls_conn_note(conns),
                              max([c.get('largest_write', 0) for c in conns] or [0])))
            finally:
                self.front.set_mode('good')
            conns = self.front.since(mark)
            offered = self.server.offered(smark)
            answers = self.server.answers(smark)
            largest = max([c.get('largest_write', 0) for c in conns] or [0])
            firsts = [ln for ln in self.server.lines()[smark:] if 'tool_results=0' in ln]
            calls = len(re.findall(r'"name":"mul"', reply))
            state['records'] = largest
            if largest < 6144:
                raise Fail('the largest TLS record written was %d bytes: the step did not test large records' % largest)
            return ('answered in %.1f s, %d requests (%s); records up to %d bytes; TLS front: %s'
                    % (secs, len(answers), ','.join(k for _, _, k in answers), largest, self.tls_conn_note(conns)))

        def after():
            self.tls_leave(b)
            st = b.thread_stack(LOOP_THREAD)
            f = b.free()
            self.figures.append(('tls: heap maximum after the 16-call question, 16 KB records (free)',
                                 '%d (%+d above boot)' % (f['max'], f['max'] - boot_used) if boot_used else f['max']))
            if st:
                self.figures.append(('tls: %s stack high-water after faults and the 16-call question' % LOOP_THREAD,
                                     '%s%% of %d bytes' % (st[1], st[0])))
            t0 = time.monotonic()
            b.run('cleanup_agent_entry', timeout=40)
            used = b.free()['used']
            if boot_used is not None and used != boot_used:
                raise Fail('heap used after cleanup is %d, at boot %d (%+d)' % (used, boot_used, used - boot_used))
            return 'cleanup in %.1f s, heap back to %d; peak %d' % (time.monotonic() - t0, used, f['max'])

        self.attempt(fw, 'large records: 16 parallel tool calls, answer in 12 KB TLS records', fn)
        self.attempt(fw, 'Ctrl-D, cleanup after the faults, heap back', after)

    def tls_two_boots(self, bsp, fw, first_random):
        name = fw + '-boot2'
        try:
            boot, mark = self.tls_boot(bsp, name)
        except (Fail, Timeout) as e:
            self.record(fw, 'second boot', 'FAIL', str(e))
            return
        b = self.board

        def second():
            self.front.set_mode('good')
            self.tls_start(fw, b)
            self.chat('what is 6*7?', r'The result is 42\.', 60)
            conns = self.front.since(mark)
            if not conns:
                raise Fail('no connection reached the front')
            first_random.append(('%s boot %d' % (fw, self.boots), conns[0]['random']))
            r = [hello_random_tail(x) for _, x in first_random]
            rows = '; '.join('%s: %s' % (w, x) for w, x in first_random)
            if len(first_random) < 2:
                raise Fail('only one boot recorded a ClientHello: %s' % rows)
            if not r[0] or r[0] == r[1]:
                raise Fail('the first ClientHello random after each boot is the same after its first 4 bytes '
                           '(gmt_unix_time, the board\'s clock): %s' % rows)
            return rows

        self.attempt(fw, 'two boots: different ClientHello randoms (first connection after boot)', second)
        # The chat is open unless main_loop_entry itself failed.
        if self.tls_fault(fw, 'stall-handshake') and self.board:
            def still():
                self.chat('what is 6*7?', r'The result is 42\.', 60)
                return 'the chat answers a question after the stalled one'
            self.attempt(fw, 'after the stalled handshake: the next question answered', still)
        if self.board:
            self.board.close()
            self.board = None

    def tls_debug(self, bsp, first_random):
        fw = 'tls-debug'
        if not bsp:
            return
        try:
            boot, mark = self.tls_boot(bsp, fw)
        except (Fail, Timeout) as e:
            self.record(fw, 'boot', 'FAIL', str(e) + self.excerpt(0))
            return
        b = self.board

        def stalled():
            b.run('main_loop_entry', timeout=20)
            self.front.set_mode('stall-handshake')
            fmark = self.front.mark()
            t0 = time.monotonic()
            out = b.run('agent_send_message 0 what is 6*7?', timeout=60)
            waited = time.monotonic() - t0
            if not self.front.wait_conns(fmark, lambda c: any(x['handshake'] == 'stalled by the front' for x in c), 5):
                raise Fail('no handshake reached the front (agent_send_message: %s)' % one_line(out))
            conns = self.front.since(fmark)
            stall_age = time.time() - conns[-1]['t']
            t1 = time.monotonic()
            note = ''
            try:
                b.run('cleanup_agent_entry', timeout=30, what='cleanup_agent_entry during the stalled handshake')
                secs = time.monotonic() - t1
            except Timeout:
                secs = time.monotonic() - t1
                n = self.front.release()
                self.front.set_mode('good')
                try:
                    b.expect(re.escape(PROMPT), 90, 'cleanup_agent_entry after the front closed')
                    note = ('; it returned only %.1f s after the front closed the %d stalled connection(s)'
                            % (time.monotonic() - t1 - secs, n))
                except Timeout:
                    raise Fail('cleanup_agent_entry typed %.0f s into a stalled handshake did not return in '
                               '%.0f s, nor 90 s after the front closed the connection' % (stall_age, secs))
                raise Fail('cleanup_agent_entry typed %.0f s into a stalled handshake did not return within 30 s%s'
                           % (stall_age, note))
            finally:
                self.front.set_mode('good')
            self.front.release()
            used = b.free()['used']
            if secs > 2:
                raise Fail('cleanup_agent_entry typed %.0f s into a stalled handshake returned after %.1f s (limit 2 s)'
                           '; heap %d (boot %d)' % (stall_age, secs, used, boot['used']))
            if used != boot['used']:
                raise Fail('heap used after cleanup is %d, at boot %d (%+d)' % (used, boot['used'], used - boot['used']))
            return ('agent_send_message gave up after %.0f s (%s); cleanup_agent_entry, typed %.0f s into the stalled '
                    'handshake, returned in %.1f s; heap back to %d' % (waited, one_line(out)[:80], stall_age, secs,
                                                                        used))

        self.attempt(fw, 'cleanup_agent_entry during a stalled TLS handshake: within 2 s, heap back', stalled)
        conns = self.front.since(mark)
        if conns:
            first_random.append(('%s boot %d' % (fw, self.boots), conns[0]['random']))
            self.figures.append(('tls: first ClientHello random after each boot (time | 28 random bytes)',
                                 '; '.join('%s: %s' % (w, (x[:8] + ' | ' + x[8:24] + '...') if x else x)
                                           for w, x in first_random)))
        b.close()
        self.board = None

    # -- the entropy seed file: three boots on one SD card ---------------------
    def tls_seed(self, bsp):
        """The TLS firmware has no hardware RNG and PKG_AGENT_TLS_SEED_FILE
        /.agent_seed: booted three times on the same SD card, its clock left
        as the soft RTC starts it (2018-01-01). The start log says the keys
        are seeded from the file; at the first connection of the first boot
        the log says there is no seed yet (weak keys), at the next boots
        that it was read; after each boot the file on the image (read with
        mtools) holds 32 bytes, new each time, shown nowhere on the
        console, and no .tmp is left. The front records each connection's
        ClientHello random: the first one of the three boots must differ
        after its first 4 bytes (the time)."""
        fw = 'tls-seed'
        if not getattr(self, 'front', None):
            return
        self.front.set_mode('good')
        relay = [self.args.server, '--connect', '127.0.0.1:%d' % self.front.port]
        state = {'seeds': [], 'randoms': []}
        try:
            state['img'] = self.sd_image('tls-seed')
        except sdcard.SdError as e:
            self.record(fw, 'a fresh SD image', 'FAIL', str(e))
            return

        def one(n):
            img = state['img']
            before = img.read(TLS_SEED_FILE)
            mark = self.front.mark()
            self.boot(bsp, '%s-%d' % (fw, n), guestfwds=[(GUEST_SERVER, TLS_PORT, relay)], sd=img)
            how, _ = self.sd_mount
            b = self.board
            log = self.tls_start(fw, b)
            said = [ln.strip() for ln in log.splitlines() if 'keys are seeded from %s' % TLS_SEED_FILE in ln]
            if not said:
                raise Fail('the start log does not say the keys are seeded from %s: %s'
                           % (TLS_SEED_FILE, one_line(log)[-300:]))
            cmark = len(b.buf)
            self.chat('what is 6*7?', r'The result is 42\.', 60)
            text = re.sub(r'\x1b\[[0-9;]*m', '', b.since(cmark))
            if before is None:
                want = "TLS: no entropy seed in %s yet: this boot's keys are weak; the next one is written"
            else:
                want = 'TLS: entropy seed read from %s; the next one is written'
            want %= TLS_SEED_FILE
            if want not in text:
                seed_lines = [ln.strip() for ln in text.splitlines() if 'seed' in ln]
                raise Fail('the first connection did not log "%s": %s' % (want, ' | '.join(seed_lines) or
                                                                          one_line(text)[-300:]))
            self.tls_leave(b)
            st = b.thread_stack(LOOP_THREAD)
            b.run('cleanup_agent_entry', timeout=20)
            conns = self.front.since(mark)
            transcript = re.sub(r'\x1b\[[0-9;]*m', '', b.since(0)).lower()
            self.stop()
            if not conns or not conns[0]['random']:
                raise Fail('no ClientHello reached the front: %s' % self.tls_conn_note(conns))
            state['randoms'].append(('boot %d' % n, conns[0]['random']))
            after = img.read(TLS_SEED_FILE)
            if after is None or len(after) != 32:
                raise Fail('after the boot %s holds %s' % (TLS_SEED_FILE, 'nothing' if after is None
                                                           else '%d bytes, not 32' % len(after)))
            if img.read(TLS_SEED_FILE + '.tmp') is not None:
                raise Fail('%s.tmp was left on the card' % TLS_SEED_FILE)
            if after == before or after in state['seeds']:
                raise Fail('the seed file was not renewed: %s again' % after.hex())
            shown = [x.hex() for x in (before, after) if x and x.hex() in transcript]
            if shown:
                raise Fail('the seed shows on the console: %s' % shown)
            state['seeds'].append(after)
            if st and st[1] is not None and st[1] > state.get('stack', (-1, 0))[0]:
                state['stack'] = (st[1], st[0])
            return ('card %s; %s: %s -> %s (32 bytes); start log: %s; first ClientHello random %s'
                    % (how, TLS_SEED_FILE, before.hex()[:16] + '...' if before else 'none yet',
                       after.hex()[:16] + '...', said[0][-90:], conns[0]['random']))

        for n in (1, 2, 3):
            what = ('no seed yet: weak keys said, a seed written' if n == 1
                    else 'the seed read and renewed')
            if not self.attempt(fw, 'boot %d on one SD card: %s' % (n, what), lambda n=n: one(n)):
                if self.board:
                    self.board.close()
                    self.board = None

        def distinct():
            r = state['randoms']
            rows = '; '.join('%s: %s' % (w, x) for w, x in r)
            if len(r) < 3:
                raise Fail('only %d boot(s) recorded a ClientHello: %s' % (len(r), rows))
            tails = [hello_random_tail(x) for _, x in r]
            if len(set(tails)) < len(tails):
                raise Fail('a ClientHello random repeats after its first 4 bytes (the time): %s' % rows)
            return rows

        self.attempt(fw, 'three boots on one SD card: three different ClientHello randoms', distinct)
        if state['randoms']:
            self.figures.append(('tls: first ClientHello random of three boots on one SD card, seed file, clock '
                                 'not set (time | 28 random bytes)',
                                 '; '.join('%s: %s' % (w, x[:8] + ' | ' + x[8:24] + '...') for w, x in
                                           state['randoms'])))
        if 'stack' in state:
            self.figures.append(('tls: %s stack high-water with the seed file (list thread, highest of the boots)'
                                 % LOOP_THREAD, '%s%% of %d bytes' % state['stack']))

    # -- an SD card that survives a reboot (--persist) -----------------------
    def persist(self, bsp):
        """The board's SD card across boots, with no library feature: a
        reference boot without a card, then a fresh FAT image: the board
        writes a file, is rebooted (QEMU stopped and started on the same
        image) and reads it back; the host reads it from the image, replaces
        it and writes another file, the board reads the new bytes and
        writes a file into the host's directory; the host makes the file
        unreadable (first cluster 0), the board opens it, reads nothing,
        keeps its shell, and replaces it. What the board's own mkdir made is
        a figure (a regular file with this BSP's -DO_DIRECTORY=0)."""
        fw = os.path.basename(bsp.rstrip('/')) + '-sd'
        state = {}

        def reference():
            self.boot(bsp, fw + '-nocard')
            state['nocard'] = self.boot_secs
            text = re.sub(r'\x1b\[[0-9;]*m', '', self.board.since(0))
            said = [ln.strip() for ln in text.splitlines() if 'FileSystem' in ln][-1:]
            self.stop()
            self.figures.append(('%s: boot to the shell prompt, no SD card' % fw, '%.1f s' % state['nocard']))
            return 'prompt after %.1f s; %s' % (state['nocard'], ' '.join(said) or 'no FileSystem line')

        def fresh():
            img = state['img'] = self.sd_image('persist')
            self.boot(bsp, fw, sd=img)
            how, tick = self.sd_mount
            if how != 'mounted':
                raise Fail('the fresh FAT image was %s by the board, not mounted as it was' % how)
            # (No `ls`: with this BSP's -DO_DIRECTORY=0 DFS opens no
            # directory; `cat` of a missing file says "Open ... failed".)
            if self.sd_cat('/f.txt') is not None:
                raise Fail('`cat /f.txt` on a fresh card found a file')
            self.figures.append(('%s: boot to the shell prompt, fresh %d MiB FAT image' % (fw, img.mib),
                                 '%.1f s (mounted at tick %d)' % (self.boot_secs, tick)))
            return 'prompt after %.1f s (%+.1f s against no card); "/" mounted at tick %d' % (
                self.boot_secs, self.boot_secs - state['nocard'], tick)

        def write():
            self.board.run('echo hello /f.txt')
            got = self.sd_cat('/f.txt')
            if got != 'hello':
                raise Fail('`cat /f.txt` after `echo hello /f.txt` printed %r' % got)
            return '`echo hello /f.txt`, `cat /f.txt`: hello'

        def reboot():
            self.reboot()
            got = self.sd_cat('/f.txt')
            self.figures.append(('%s: reboot (QEMU stopped and started on the same image) to the prompt' % fw,
                                 '%.1f s' % self.boot_secs))
            if got != 'hello':
                raise Fail('after the reboot `cat /f.txt` printed %r' % got)
            return 'prompt after %.1f s; `cat /f.txt`: hello' % self.boot_secs

        def host_reads():
            self.stop()
            img = state['img']
            got = img.read('/f.txt')
            if got != b'hello':
                raise Fail('the image holds %r as /f.txt (names on the card: %s)' % (got, img.listdir('/')))
            return 'the image\'s /f.txt: %r; on the card: %s' % (got, ', '.join(img.listdir('/')))

        def host_replaces():
            img = state['img']
            img.write('/f.txt', b'replaced by the host 0123')
            img.write('/agent/notes', b'note 1: written by the host\n')
            self.boot(bsp, fw, sd=img)
            got = self.sd_cat('/f.txt')
            if got != 'replaced by the host 0123':
                raise Fail('`cat /f.txt` printed %r, not the bytes the host wrote' % got)
            notes = self.sd_cat('/agent/notes')
            if notes is None or notes.strip() != 'note 1: written by the host':
                raise Fail('`cat /agent/notes` printed %r' % notes)
            # A new file in the directory the host made, and the board's
            # own mkdir (looked at from the host in the next step).
            self.board.run('echo board /agent/board.txt')
            mine = self.sd_cat('/agent/board.txt')
            if mine != 'board':
                raise Fail('`echo board /agent/board.txt` then `cat` printed %r (a file in a directory the host '
                           'made)' % mine)
            self.board.run('mkdir /made-by-board')
            return ('`cat /f.txt`: %r; `cat /agent/notes`: %r; `echo board /agent/board.txt` read back'
                    % (got, notes.strip()))

        def unreadable():
            self.stop()
            img = state['img']
            first, size = img.make_unreadable('/f.txt')
            made = img.kind('/made-by-board')
            self.boot(bsp, fw, sd=img)
            b = self.board
            got = self.sd_cat('/f.txt')
            if got is None:
                raise Fail('`cat /f.txt` could not open the file (its entry should still be there)')
            if got != '':
                raise Fail('`cat /f.txt` printed %r: the read should have failed' % got)
            self.shell_alive('after `cat` of the unreadable file')
            b.run('rm /f.txt')
            b.run('echo again /f.txt')
            again = self.sd_cat('/f.txt')
            if again != 'again':
                raise Fail('after `rm` and `echo again /f.txt`, `cat /f.txt` printed %r' % again)
            self.stop()
            host = img.read('/f.txt')
            if host != b'again':
                raise Fail('the image holds %r as /f.txt after the board replaced it' % host)
            self.figures.append(('%s: `mkdir /made-by-board` on the board made' % fw,
                                 {'dir': 'a directory', 'file': 'a regular file (the BSP\'s -DO_DIRECTORY=0)',
                                  None: 'nothing'}[made]))
            return ('first cluster %d -> 0 (size %d kept): `cat /f.txt` opened it, read nothing, the shell '
                    'stayed; `rm`, `echo again`: the board and the image read "again"; the board\'s mkdir made %s'
                    % (first, size, made or 'nothing'))

        for name, fn in (('boot without an SD card (reference)', reference),
                         ('fresh FAT image: "/" mounted from the card', fresh),
                         ('the board writes /f.txt and reads it', write),
                         ('reboot on the same image: /f.txt still there', reboot),
                         ('board stopped: the host reads /f.txt from the image', host_reads),
                         ('the host replaces /f.txt and writes /agent/notes: the board reads them', host_replaces),
                         ('a file made unreadable between boots', unreadable)):
            if not self.attempt(fw, name, fn):
                self.stop()
                self.record(fw, 'the rest of the SD steps', 'SKIP', 'not run: "%s" failed' % name)
                return
        self.stop()

    def close(self):
        if getattr(self, 'front', None):
            self.front.close()
        if self.board:
            self.board.close()
        for r in self.remotes:
            r.stop()
        self.server.close()


def free_port():
    """A TCP port free on 127.0.0.1 now (for the hostfwd)."""
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Response:
    def __init__(self, raw, closed):
        cut = raw.find(b'\r\n\r\n')
        if cut < 0:
            raise Fail('no HTTP response head: %r' % raw[:200])
        self.head = raw[:cut].decode('latin-1')
        self.body = raw[cut + 4:]
        first = self.head.split('\r\n', 1)[0].split()
        self.status = int(first[1]) if len(first) > 1 and first[1].isdigit() else 0
        self.headers = {}
        for line in self.head.split('\r\n')[1:]:
            k, _, v = line.partition(':')
            self.headers[k.strip().lower()] = v.strip()
        self.closed = closed

    def header(self, name):
        return self.headers.get(name.lower())

    def text(self):
        return self.body.decode('utf-8', 'replace')

    def json(self):
        try:
            return json.loads(self.text())
        except ValueError:
            raise Fail('not JSON: %r' % self.text()[:300])

    def conn_note(self):
        return 'Connection: %s, %s' % (self.header('connection'),
                                       'the board closed the connection' if self.closed
                                       else 'the connection stayed open')


class Web:
    """HTTP/1.1 over a plain socket to the board's WebNet through the
    hostfwd on 127.0.0.1: a request per connection; a response with a
    Content-Length is read to its length (WebNet may keep the connection
    alive), one without to the close."""

    def __init__(self, port):
        self.port = port

    def raw(self, data, timeout=30, times=None):
        """times: a list that gets (monotonic time, bytes so far) after each
        read."""
        s = socket.create_connection(('127.0.0.1', self.port), timeout=timeout)
        try:
            s.sendall(data)
            buf = b''
            need = None
            while True:
                if need is None and b'\r\n\r\n' in buf:
                    head = buf[:buf.find(b'\r\n\r\n')].decode('latin-1').lower()
                    m = re.search(r'^content-length:\s*(\d+)', head, re.M)
                    if m:
                        need = buf.find(b'\r\n\r\n') + 4 + int(m.group(1))
                if need is not None and len(buf) >= need:
                    break
                chunk = s.recv(65536)
                if not chunk:
                    if not buf:
                        raise ConnectionResetError('the connection closed without an answer')
                    return Response(buf, True)
                buf += chunk
                if times is not None:
                    times.append((time.monotonic(), len(buf)))
            # Did the board close after the response?
            s.settimeout(1.0)
            try:
                closed = s.recv(1) == b''
            except socket.timeout:
                closed = False
            except OSError:
                closed = True
            return Response(buf, closed)
        finally:
            s.close()

    def request(self, method, path, body, timeout=30, ctype='application/json', times=None):
        head = '%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n' % (method, path, self.port)
        data = b''
        if body is not None:
            data = body.encode() if isinstance(body, str) else body
            head += 'Content-Type: %s\r\nContent-Length: %d\r\n' % (ctype, len(data))
        return self.raw(head.encode() + b'\r\n' + data, timeout, times)

    def get(self, path, timeout=30):
        return self.request('GET', path, None, timeout)

    def post(self, path, body, timeout=30, times=None):
        return self.request('POST', path, body, timeout, times=times)


def sse_events(text):
    """[(event, data)] of a server-sent-events stream (data lines joined
    with newlines)."""
    out = []
    for block in text.replace('\r\n', '\n').split('\n\n'):
        name, data = None, []
        for line in block.split('\n'):
            if line.startswith('event:'):
                name = line[6:].strip()
            elif line.startswith('data:'):
                data.append(line[5:][1:] if line[5:].startswith(' ') else line[5:])
        if name:
            out.append((name, '\n'.join(data)))
    return out


def expect_status(r, code):
    if r.status != code:
        raise Fail('HTTP %d, not %d: %s | %s' % (r.status, code, r.head.replace('\r\n', ' | '), r.text()[:300]))


def mcp_post(web, body, headers, timeout=30):
    """One JSON-RPC message POSTed to the MCP endpoint."""
    data = body.encode()
    head = 'POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n' \
           'Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n' % (MCP_PATH, web.port, len(data))
    for k, v in headers.items():
        head += '%s: %s\r\n' % (k, v)
    return web.raw(head.encode() + b'\r\n' + data, timeout)


def rpc_json(r):
    """The JSON-RPC message of an answer (the board's server answers with a
    JSON body; the first `data:` line of an SSE body is taken too), or
    None."""
    text = r.text()
    data = re.search(r'^data: ?(.*)$', text, re.M)
    try:
        return json.loads(data.group(1) if data and not text.lstrip().startswith('{') else text)
    except ValueError:
        return None


def rpc_code(r):
    """The JSON-RPC error code of an answer, or None."""
    try:
        return json.loads(r.text()).get('error', {}).get('code')
    except (ValueError, AttributeError):
        return None


def lm3s_config(bsp, name):
    """An integer setting of a BSP's generated rtconfig.h, or None."""
    try:
        with open(os.path.join(bsp, 'rtconfig.h')) as f:
            m = re.search(r'#define\s+%s\s+(\d+)' % re.escape(name), f.read())
    except OSError:
        return None
    return int(m.group(1)) if m else None


def rtconfig_defines(bsp, name):
    try:
        with open(os.path.join(bsp, 'rtconfig.h')) as f:
            return re.search(r'^#define\s+%s\b' % re.escape(name), f.read(), re.M) is not None
    except OSError:
        return False


def small_profile(bsp):
    """Whether the BSP's rtconfig.h turns PKG_AGENT_PROFILE_SMALL on."""
    return rtconfig_defines(bsp, 'PKG_AGENT_PROFILE_SMALL')


def lm3s_setting(bsp, name):
    """(value, where) of an integer package setting as the firmware has it:
    its rtconfig.h's, else the C glue's default (the small profile's with
    PKG_AGENT_PROFILE_SMALL: glue/agent_board_config.c of the package in
    the BSP); (None, why) when neither says."""
    v = lm3s_config(bsp, name)
    if v is not None:
        return v, 'rtconfig.h'
    import lm3s
    try:
        d = lm3s.glue_defaults(os.path.join(bsp, 'packages', 'Agent-latest'))
    except SystemExit:
        return None, 'no rtconfig.h value, no glue default read'
    if name not in d:
        return None, 'neither in rtconfig.h nor defaulted by the glue'
    small, normal = d[name]
    if small_profile(bsp):
        return small, 'the glue\'s small-profile default' if small != normal else 'the glue\'s default'
    return normal, 'the glue\'s default'


def thread_name(bsp, kind):
    """The name the library gives its `kind` thread ('loop', 'cli') on this
    BSP: the full one where it is shorter than RT_NAME_MAX, else the short
    one (RT_NAME_MAX read from rtconfig.h; none: the full name)."""
    full, short = THREAD_NAMES[kind]
    name_max = lm3s_config(bsp, 'RT_NAME_MAX')
    return full if name_max is None or len(full) < name_max else short


def one_line(text):
    text = re.sub(r'\x1b\[[0-9;]*m', '', text)
    return ' '.join(text.split())[:400]


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--server', required=True)
    p.add_argument('--logs', required=True)
    p.add_argument('--cli', action='append', default=[])
    p.add_argument('--debug')
    p.add_argument('--lm3s', action='append', default=[],
                   help='an lm3s8962 firmware\'s BSP (CLI channel; booted on -M lm3s6965evb); repeatable')
    p.add_argument('--webnet', help='the WebNet firmware\'s BSP')
    p.add_argument('--web-token', default='')
    p.add_argument('--page', help='web/agent.html, to compare with what the board serves')
    p.add_argument('--browser', default='', help='command of the browser test (tests/browser/run.py)')
    p.add_argument('--mcp', help='the MCP firmware\'s BSP (CLI channel and PKG_AGENT_MCP_SERVER)')
    p.add_argument('--mcp-token', default='', help='its PKG_AGENT_MCP_TOKEN')
    p.add_argument('--mcp-check', default='', help='command of the SDK check (tests/mcp/sdk_server_check.py)')
    p.add_argument('--mcp-remote', default='', help='command of the scripted SDK MCP server the firmware\'s MCP '
                   'client connects to (tests/mcp/scripted_server.py); the firmware must have PKG_AGENT_MCP_SERVERS '
                   '"%s"' % ' '.join(REMOTE_URLS))
    p.add_argument('--tls', help='the HTTPS firmware\'s BSP (CLI channel, PKG_AGENT_TLS_MBEDTLS)')
    p.add_argument('--tls-debug', default='', help='the HTTPS firmware with the Debug channel')
    p.add_argument('--tls-pkgcfg', default='', help='the HTTPS firmware built with the mbedtls package\'s own '
                   'configuration (PKG_AGENT_TLS_LEAN_MBEDTLS off), for its flash')
    p.add_argument('--pki', default='', help='the test PKI (tests/qemu/tls_pki.sh) the TLS front serves')
    p.add_argument('--upstream-tools', default='', help='the firmware with the C package\'s MQTT toolset, '
                   'paho-mqtt and PKG_AGENT_DRIVER_AUDIO (tests/qemu/upstream_tools.py)')
    p.add_argument('--upstream-src', default='', help='UPSTREAM_AGENT_SRC: the C package\'s files it was built with')
    p.add_argument('--persist', default='', help='an A9 CLI firmware\'s BSP for the SD card steps (a FAT image '
                   'that survives a reboot; tests/qemu/sdcard.py)')
    p.add_argument('--abilities', default='', help='the A9 CLI firmware with issue 28\'s PKG_AGENT_NOTES, '
                   'PKG_AGENT_SCHEDULE and PKG_AGENT_SUMMARY, driven on an SD image (tests/qemu/abilities.py)')
    p.add_argument('--sd-dir', default='', help='where the SD images are made (default: <logs>/../sd)')
    p.add_argument('--shots', default=os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), 'target'), help='where the browser test saves its screenshot')
    a = p.parse_args()
    a.sd_dir = a.sd_dir or os.path.join(os.path.dirname(os.path.abspath(a.logs)), 'sd')
    # QEMU runs in its own session (a Ctrl-C at the terminal must not reach
    # it half-way): on SIGTERM/SIGHUP too, unwind so that `finally` below
    # kills it and stops the server.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda n, f: sys.exit('qemu check: FAIL: stopped by signal %d' % n))
    t0 = time.monotonic()
    for old in os.listdir(a.logs):
        if old.startswith('serial-') and old.endswith('.txt'):
            os.remove(os.path.join(a.logs, old))
    run = Run(a)
    try:
        for i, bsp in enumerate(a.cli):
            fw = os.path.basename(bsp)
            run.cli_cycles(bsp, fw)
            if i == 0:
                run.cli_faults(bsp, fw)
        if a.debug:
            run.debug(a.debug)
        if a.webnet:
            run.webnet(a.webnet, a.web_token, a.page, a.browser)
        if a.mcp:
            run.mcp(a.mcp, a.mcp_token, a.mcp_check, a.mcp_remote)
        if a.tls:
            run.tls(a.tls, a.tls_debug, a.pki)
            run.tls_seed(a.tls)
        for bsp in a.lm3s:
            run.lm3s(bsp)
        if a.persist:
            run.persist(a.persist)
        if a.abilities:
            import abilities
            abilities.drive(run, a.abilities, Fail, one_line)
        if a.upstream_tools:
            upstream_tools.drive(run, a.upstream_tools, a.upstream_src,
                                 {'Fail': Fail, 'Timeout': Timeout, 'CHAT_PROMPT': CHAT_PROMPT, 'QUESTION': QUESTION,
                                  'ANSWER': ANSWER, 'one_line': one_line})
    finally:
        run.close()

    print('\n== results (%.0f s; serial transcripts and server log in %s)' % (time.monotonic() - t0, a.logs))
    for fw, step, status, detail in run.results:
        print('%-4s %-18s %s' % (status, fw, step))
    print('\n== figures')
    rows = []
    if a.cli:
        rows += mapsize.rows(os.path.join(a.cli[0], 'rtthread.map'))
    if a.webnet:
        rows += [('webnet firmware: ' + w, v) for w, v in mapsize.rows(os.path.join(a.webnet, 'rtthread.map'))]
    if a.mcp:
        rows += [('mcp firmware: ' + w, v) for w, v in mapsize.rows(os.path.join(a.mcp, 'rtthread.map'))]
        # The exact cost of the server: the same CLI firmware without it
        # (agent-cli, RT_USING_POSIX_STDIO on as agent-mcp).
        plain = [c for c in a.cli if os.path.basename(c) == 'agent-cli']
        if plain:
            try:
                with_mcp = mapsize.package_flash(os.path.join(a.mcp, 'rtthread.map'))
                without = mapsize.package_flash(os.path.join(plain[0], 'rtthread.map'))
                rows.append(('flash PKG_AGENT_MCP_SERVER and PKG_AGENT_MCP_CLIENT add to the package '
                             '(agent-mcp - agent-cli)',
                             '%+d bytes (%d - %d)' % (with_mcp - without, with_mcp, without)))
            except (OSError, SystemExit) as e:
                rows.append(('flash PKG_AGENT_MCP_SERVER and PKG_AGENT_MCP_CLIENT add to the package',
                             'unavailable: %s' % e))
    if a.tls:
        rows += [('tls firmware: ' + w, v) for w, v in mapsize.rows(os.path.join(a.tls, 'rtthread.map'))]
        try:
            total = mapsize.firmware_flash(os.path.join(a.tls, 'rtthread.map'))
            mb = mapsize.group_flash(os.path.join(a.tls, 'rtthread.map'), 'mbedtls (dependency)')
            rows.append(('tls firmware: flash in all (text + rodata + data kept by the linker)', '%d bytes' % total))
            rows.append(('tls firmware: mbedtls share of the firmware\'s flash', '%d of %d bytes (%.1f%%)'
                         % (mb, total, 100.0 * mb / total if total else 0)))
            plain = [c for c in a.cli if os.path.basename(c) == 'agent-cli']
            if plain:
                rows.append(('flash the TLS firmware adds to agent-cli (mbedtls, webclient\'s TLS, the rest)',
                             '%+d bytes' % (total - mapsize.firmware_flash(os.path.join(plain[0], 'rtthread.map')))))
        except (OSError, SystemExit) as e:
            rows.append(('tls firmware: flash', 'unavailable: %s' % e))
        if a.tls_pkgcfg:
            try:
                m = os.path.join(a.tls_pkgcfg, 'rtthread.map')
                lean = mapsize.group_flash(os.path.join(a.tls, 'rtthread.map'), 'mbedtls (dependency)')
                pkg = mapsize.group_flash(m, 'mbedtls (dependency)')
                rows.append(('tls firmware: flash mbedtls, the package\'s own configuration '
                             '(PKG_AGENT_TLS_LEAN_MBEDTLS off)', '%d bytes' % pkg))
                rows.append(('tls firmware: flash mbedtls, the recommended configuration '
                             '(PKG_AGENT_TLS_LEAN_MBEDTLS on)', '%d bytes (%+d)' % (lean, lean - pkg)))
                rows.append(('tls firmware: flash in all, the package\'s own mbedTLS configuration',
                             '%d bytes' % mapsize.firmware_flash(m)))
            except (OSError, SystemExit) as e:
                rows.append(('tls firmware: flash with the package\'s mbedTLS configuration', 'unavailable: %s' % e))
    for bsp in a.lm3s:
        import lm3s
        name = os.path.basename(bsp.rstrip('/')).replace('agent-', '')
        m = os.path.join(bsp, lm3s.MAP)
        try:
            total = mapsize.firmware_flash(m)
            rows.append(('%s firmware: flash used (text + rodata + data kept by the linker)' % name,
                         '%d of %d bytes (%.0f%%)' % (total, lm3s.FLASH_BYTES, 100.0 * total / lm3s.FLASH_BYTES)))
            pkg = mapsize.package_flash(m)
            rows.append(('%s firmware: the package\'s share of the flash used' % name, '%d of %d bytes (%.1f%%)'
                         % (pkg, total, 100.0 * pkg / total if total else 0)))
        except (OSError, SystemExit) as e:
            rows.append(('%s firmware: flash' % name, 'unavailable: %s' % e))
        try:
            rows += [('%s firmware: ' % name + w, v) for w, v in mapsize.rows(m)]
        except (OSError, SystemExit) as e:
            rows.append(('%s firmware: flash by part' % name, 'unavailable: %s' % e))
    if a.upstream_tools:
        rows += upstream_tools.flash_rows(os.path.join(a.upstream_tools, 'rtthread.map'))
    rows += [(w, v) for w, v in run.figures]
    # For tools/figures (docs/figures.md): what this run measured, where.
    with open(os.path.join(a.logs, 'figures.json'), 'w') as f:
        board = ('qemu-system-arm -M lm3s6965evb (RT-Thread lm3s8962)'
                 if a.lm3s and not (a.cli or a.debug or a.webnet or a.mcp or a.tls)
                 else 'qemu-system-arm -M vexpress-a9 (RT-Thread qemu-vexpress-a9)')
        json.dump({'date': time.strftime('%Y-%m-%d'), 'board': board,
                   'results': [[fw, step, status] for fw, step, status, _ in run.results],
                   'figures': [[w, str(v)] for w, v in rows]}, f, indent=1)
    width = max(len(w) for w, _ in rows) if rows else 10
    for w, v in rows:
        print('%-*s  %s' % (width, w, v))
    failed = [r for r in run.results if r[2] == 'FAIL']
    if failed:
        print('\nqemu check: FAIL: %d step(s) failed:' % len(failed))
        for fw, step, _, detail in failed:
            print('  - %s: %s: %s' % (fw, step, detail.splitlines()[0] if detail else ''))
        sys.exit(1)
    print('\nqemu check: all steps passed')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Boots the firmwares built by tests/qemu/run.sh and drives their serial
consoles against the scripted server; prints a result per step and the
figures. Exit status 1 when any step failed. Std lib only."""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the repo
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from board import PROMPT, Board, Timeout  # noqa: E402
import mapsize  # noqa: E402

QUESTION = 'what is (2+3)*4?'
ANSWER = r'The result is 20\.'
CHAT_PROMPT = 'you> '
LOOP_THREAD = 'AgentLoop'


class Fail(Exception):
    pass


class Server:
    def __init__(self, exe, log_path):
        self.exe = exe
        self.log_path = log_path
        self.proc = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
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


class Run:
    def __init__(self, args):
        self.args = args
        self.results = []   # (firmware, step, status, detail)
        self.figures = []   # (what, value)
        self.server = Server(args.server, os.path.join(args.logs, 'server.log'))
        self.board = None
        self.boots = 0

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
    def boot(self, bsp, name):
        if self.board:
            self.board.close()
        self.boots += 1
        transcript = os.path.join(self.args.logs, 'serial-%s-%d.txt' % (name, self.boots))
        self.board = Board(bsp, self.server.relay, transcript)
        b = self.board
        # The BSP's main.c runs a demo at boot: wait for it to end.
        b.expect(r'==== RT-Thread Lab Done ====', 120, 'boot (the BSP demo must finish)')
        b.quiet(0.5)
        b.send('\r')
        b.expect(re.escape(PROMPT), 10, 'the shell prompt after boot')
        deadline = time.monotonic() + 40
        while True:
            out = b.run('ifconfig')
            if re.search(r'ip address:\s*10\.0\.2\.\d+', out) and '10.0.2.0' not in out:
                break
            if time.monotonic() > deadline:
                raise Fail('no DHCP address from qemu user networking within 40 s')
            b.quiet(2)
        return b.free()

    def shell_alive(self, what):
        """Enter at the shell must give a prompt (bounded)."""
        b = self.board
        b.quiet(0.5)
        b.send('\r')
        try:
            b.expect(re.escape(PROMPT), 6, what)
        except Timeout:
            raise Fail('%s: the shell does not answer (Enter gave no `%s` within 6 s, nothing typed is '
                       'echoed): the console was not given back to the shell' % (what, PROMPT))

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
    def cli_cycles(self, bsp, fw):
        try:
            boot = self.boot(bsp, fw)
        except (Fail, Timeout) as e:
            self.record(fw, 'boot', 'FAIL', str(e) + self.excerpt(0))
            return
        self.figures.append(('%s: heap used at boot (free)' % fw, boot['used']))
        self.record(fw, 'boot, free', 'PASS', 'used %d' % boot['used'])
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
                reply, secs = self.chat(QUESTION, ANSWER, 90)
                answers = self.server.answers(mark)
                kinds = [k for (_, _, k) in answers]
                if kinds[:2] != ['tool_calls', 'tool_calls'] or len(kinds) < 3:
                    raise Fail('expected two tool-call rounds then the answer; the server answered %s' % answers)
                calls = re.findall(r'"name":"(\w+)"', reply)
                return 'answered in %.1f s, %d requests, tool calls in the log: %s' % (secs, len(answers), calls or '?')

            def leave():
                b.send('\x04')
                b.expect(r'leaving the agent chat', 10, 'Ctrl-D leaves the chat')
                self.shell_alive('after Ctrl-D')
                st = b.thread_stack(LOOP_THREAD)
                if st:
                    state['stack'] = st
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
                self.figures.append(('%s: %s stack high-water (list thread)' % (fw, LOOP_THREAD),
                                     '%s%% of %d bytes' % (pct, size)))
            if 'heap' in state:
                self.figures.append(('%s: heap used after cleanup, cycle %d' % (fw, cycle), state['heap']['used']))
                self.figures.append(('%s: heap maximum so far (free), cycle %d' % (fw, cycle), state['heap']['max']))
            if not ok:
                for later in range(cycle + 1, 4):
                    self.record(fw, 'cycle %d' % later, 'SKIP', 'not run: cycle %d failed (the board is rebooted '
                                'for the next steps)' % cycle)
                self.board.close()
                self.board = None
                return

    def cli_faults(self, bsp, fw):
        if self.board is None:
            try:
                self.boot(bsp, fw + '-faults')
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
            mark = self.server.mark()
            reply, secs = self.chat('ratelimited: what is 6*7?', r'The result is 42\.', 90)
            answers = [a for a in self.server.answers(mark) if a[0].startswith('ratelimited')]
            if not answers or answers[0][1] != 429:
                raise Fail('the server did not see the 429 first: %s' % answers)
            return 'retried after Retry-After: 2 and answered in %.1f s (%s)' % (
                secs, ', '.join('%s %d' % (s, st) for s, st, _ in answers))

        self.attempt(fw, 'faults: 10 s before the first byte, HTTP timeout 15 s', slow)
        self.attempt(fw, 'faults: HTTP 500 (reply says what failed)', http500)
        self.attempt(fw, 'faults: HTTP 429 with Retry-After (retried, answered)', http429)
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

    def close(self):
        if self.board:
            self.board.close()
        self.server.close()


def one_line(text):
    text = re.sub(r'\x1b\[[0-9;]*m', '', text)
    return ' '.join(text.split())[:400]


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--server', required=True)
    p.add_argument('--logs', required=True)
    p.add_argument('--cli', action='append', default=[])
    p.add_argument('--debug')
    a = p.parse_args()
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
    finally:
        run.close()

    print('\n== results (%.0f s; serial transcripts and server log in %s)' % (time.monotonic() - t0, a.logs))
    for fw, step, status, detail in run.results:
        print('%-4s %-18s %s' % (status, fw, step))
    print('\n== figures')
    rows = []
    if a.cli:
        rows += mapsize.rows(os.path.join(a.cli[0], 'rtthread.map'))
    rows += [(w, v) for w, v in run.figures]
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

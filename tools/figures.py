#!/usr/bin/env python3
"""Writes docs/figures.md from what tools/figures measured (std lib only).

    tools/figures.py MEASURED_DIR OUT.md

MEASURED_DIR (target/figures/) may hold: size-report.md (tests/cross/run.sh),
bench-agent.txt and bench-stream.txt (cargo bench), and qemu-*/logs/
figures.json (tests/qemu/run.sh, one per run). Whatever is missing is said
to be missing; nothing is typed in by hand.
"""
import datetime
import glob
import json
import os
import platform
import re
import subprocess
import sys

# The goal for HTTPS: the heap peak of a turn with TLS and 16 KB
# incoming records at most this far above the same turn's plain-HTTP peak.
TLS_HEAP_GOAL = 40 * 1024


def machine():
    cpu = ''
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    cpu = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        rustc = subprocess.run(['rustc', '--version'], capture_output=True, text=True).stdout.strip()
    except OSError:
        rustc = 'rustc: not found'
    return '%s %s, %s, %d cores; %s' % (platform.system(), platform.machine(), cpu or 'unknown CPU',
                                        os.cpu_count() or 0, rustc)


def number(v):
    m = re.match(r'\s*(-?\d+)', str(v))
    return int(m.group(1)) if m else None


def load_runs(measured):
    runs = []
    for path in sorted(glob.glob(os.path.join(measured, 'qemu-*', 'logs', 'figures.json'))):
        with open(path) as f:
            run = json.load(f)
        run['name'] = path.split(os.sep)[-3]
        run['rows'] = {w: v for w, v in run['figures']}
        runs.append(run)
    return runs


def find(rows, pattern):
    """The value of the first row whose name matches `pattern`."""
    rx = re.compile(pattern)
    for w, v in rows.items():
        if rx.search(w):
            return v
    return None


def tls_summary(runs):
    tls = next((r for r in runs if any(w.startswith('tls:') for w in r['rows'])), None)
    if tls is None:
        return ['No HTTPS run measured (tests/qemu/run.sh --tls needs MBEDTLS_SRC).', '']
    rows = tls['rows']
    plain = next((r for r in runs if r is not tls and find(r['rows'], r'^(agent-)?cli: heap maximum so far')), None)
    boot = number(find(rows, r'^tls: heap used at boot'))
    turn = number(find(rows, r'^tls: heap maximum so far \(free\), cycle 1$'))
    many = number(find(rows, r'^tls: heap maximum after the 16-call question'))
    out = ['| what (HTTPS firmware, %s) | measured |' % tls['date'], '|---|---:|']

    def row(what, value):
        out.append('| %s | %s |' % (what, value if value is not None else 'not measured'))

    row('heap at boot', boot)
    row('heap after `main_loop_entry`', find(rows, r'^tls: heap used after main_loop_entry'))
    row('heap peak, a two-round turn', turn)
    row('heap peak, 16 parallel tool calls in 12 KB records', many)
    row('heap after every cleanup', find(rows, r'^tls: heap used after cleanup, cycle 3'))
    if plain is not None:
        p = number(find(plain['rows'], r'^(agent-)?cli: heap maximum so far \(free\), cycle 1$'))
        row('heap peak of the same two-round turn over plain HTTP (%s)' % plain['date'], p)
        if p is not None and turn is not None:
            above = turn - p
            row('HTTPS above plain HTTP, same turn (goal: at most %d)' % TLS_HEAP_GOAL,
                '%d: %s' % (above, 'met' if above <= TLS_HEAP_GOAL else 'not met'))
    else:
        row('heap peak of the same turn over plain HTTP', None)
    row('AgentLoop stack high-water, RSA leaf', find(rows, r'^tls: AgentLoop stack high-water \(list thread\)'))
    row('AgentLoop stack high-water, ECDSA leaf', find(rows, r'^tls: AgentLoop stack high-water, ECDSA leaf'))
    row('full handshake, RSA leaf (at the front, ms)', find(rows, r'^tls: full handshake as the front sees it \(Cl'))
    row('full handshake, ECDSA leaf (at the front)', find(rows, r'^tls: full handshake as the front sees it, ECDSA'))
    row('resumed handshake (at the front, ms)', find(rows, r'^tls: resumed handshake'))
    row('mbedtls flash, the package\'s configuration', find(rows, r'flash mbedtls, the package'))
    row('mbedtls flash, the recommended configuration', find(rows, r'flash mbedtls, the recommended'))
    out.append('')
    return out


def run_tables(runs):
    out = []
    for run in runs:
        results = run.get('results', [])
        passed = sum(1 for r in results if r[2] == 'PASS')
        failed = [r for r in results if r[2] != 'PASS']
        out.append('### %s (%s; %s)' % (run['name'], run['date'], run.get('board', '')))
        out.append('')
        out.append('%d steps passed, %d failed%s.' % (
            passed, len(failed), ''.join('; failed: %s %s' % (r[0], r[1]) for r in failed)))
        out.append('')
        out.append('| figure | value |')
        out.append('|---|---|')
        for w, v in run['figures']:
            out.append('| %s | %s |' % (w.replace('|', '/'), str(v).replace('|', '/')))
        out.append('')
    return out


def main():
    measured, target = sys.argv[1], sys.argv[2]
    runs = load_runs(measured)
    try:
        with open(os.path.join(measured, 'commit.txt')) as f:
            commit = f.read().strip()
    except OSError:
        commit = 'unknown'
    out = ['# Figures', '',
           'Written by `tools/figures` on %s from measurements of commit %s on %s. Each part '
           'says when it was measured. Nothing here is typed by hand: run `tools/figures` again '
           'to renew it.' % (datetime.date.today().isoformat(), commit, machine()), '']
    out += ['## HTTPS on the real firmware', '',
            'RT-Thread 5.3 `qemu-vexpress-a9` (C at `-O0` as the BSP ships), webclient 2.3.0 in its '
            'mbedTLS mode, the mbedtls package 2.28.1 with `MBEDTLS_SSL_MAX_CONTENT_LEN` 16384 and '
            '`PKG_AGENT_TLS_OUT_CONTENT_LEN` 2048, against the TLS front of `tests/qemu/run.sh --tls` '
            '([tls.md](tls.md)).', '']
    out += tls_summary(runs)
    out += ['## Real-firmware runs', '']
    out += run_tables(runs) or ['No real-firmware run measured (tests/qemu/run.sh needs RTT_ROOT).', '']
    out += ['## Flash by target (tests/cross/run.sh)', '']
    report = os.path.join(measured, 'size-report.md')
    if os.path.exists(report):
        with open(report) as f:
            text = f.read()
        # Its headings one level down.
        out += [re.sub(r'^(#+)', r'\1##', line) for line in text.splitlines()]
        out.append('')
    else:
        out += ['Not measured (tools/figures without --render-only runs it).', '']
    for name in ('agent', 'stream'):
        out += ['## cargo bench --bench %s' % name, '']
        path = os.path.join(measured, 'bench-%s.txt' % name)
        if os.path.exists(path):
            with open(path) as f:
                lines = [l.rstrip() for l in f if l.strip() and not l.startswith(('warning', '   Compiling'))]
            out += ['```'] + lines[-60:] + ['```', '']
        else:
            out += ['Not measured.', '']
    with open(target, 'w') as f:
        f.write('\n'.join(out).rstrip() + '\n')


if __name__ == '__main__':
    main()

"""An RT-Thread firmware on a serial console (std lib only).

Board(bsp, ...) boots `qemu-system-arm -M vexpress-a9` (the qemu-vexpress-a9
BSP) or, with machine='lm3s6965evb', `-M lm3s6965evb` (the lm3s8962 BSP,
tests/qemu/lm3s.py) with the serial console on pipes and user networking
restricted to one guestfwd; every wait is bounded and raises Timeout with
the end of the transcript.
"""
import os
import re
import select
import signal
import subprocess
import time

GUEST_SERVER = '10.0.2.100'  # the address PKG_AGENT_API_URL names
PROMPT = 'msh />'
# The shell's prompt without DFS's working directory (the lm3s firmware has
# DFS off): finsh prints "msh >".
PROMPT_NO_DFS = 'msh >'
# The lm3s firmware's ELF (its rtconfig.py names it).
LM3S_ELF = 'rtthread-lm3s.elf'
# Crash reports: the library's panic handler (ulog "panic: ..."), RT-Thread's
# assertion and ARM exception handlers (Cortex-A9; Cortex-M3's "hard fault
# on thread/handler").
FATAL = re.compile(r'E/agent: panic|\) assertion failed at function|data abort|prefetch abort|'
                   r'undefined instruction|hard fault on (thread|handler)')


# What may come between two echoed characters of a typed command: colour
# codes and whole kernel log lines (`[tick] L/tag: text`).
LOG_BETWEEN = r'(?:\x1b\[[0-9;]*m|\[\d+\] [DIWEA]/[^\n]*\n)*'

class Timeout(Exception):
    pass


class Board:
    def __init__(self, bsp, relay_cmd, transcript, host_port=None, guest_port=80, guestfwds=(),
                 machine='vexpress-a9', sd=None, hostfwds=()):
        """relay_cmd: the program QEMU runs per guest connection to
        GUEST_SERVER:80 (it connects to the scripted server on 127.0.0.1).
        host_port: forward 127.0.0.1:host_port on the host to the board's
        guest_port (80: its WebNet; 8000: its MCP server), and nothing
        else. guestfwds: more (guest address, guest port, relay command)
        forwards, each relay connecting to a server on 127.0.0.1 (the MCP
        client's remote server). machine: vexpress-a9 or lm3s6965evb.
        sd: an sdcard.SdImage to boot with as the board's SD card (A9
        only; the BSP mounts it at "/"); it is marked attached until
        close(), and its host-side helpers refuse to touch it meanwhile.
        hostfwds: more (host port, guest port) forwards from 127.0.0.1 (the
        load run reaches the board's MCP server and its WebNet)."""
        if machine not in ('vexpress-a9', 'lm3s6965evb'):
            raise ValueError('unknown machine %r' % machine)
        self.machine = machine
        self.prompt = PROMPT if machine == 'vexpress-a9' else PROMPT_NO_DFS
        image = os.path.join(bsp, 'rtthread.bin' if machine == 'vexpress-a9' else LM3S_ELF)
        fwds = [(GUEST_SERVER, 80, relay_cmd)] + list(guestfwds)
        for _, _, cmd in fwds:
            for c in cmd:
                if ',' in c:
                    raise ValueError('no commas in the relay command (qemu option syntax): %r' % c)
            # The relays (qemu_llm_server --connect) refuse any other
            # address too; checked here so that no forward is ever set up
            # towards one.
            if '--connect' not in cmd or not cmd[cmd.index('--connect') + 1].startswith('127.0.0.1:'):
                raise ValueError('a guestfwd relay must connect to 127.0.0.1: %r' % (cmd,))
        # Isolated user networking: restrict=on cuts the guest off from the
        # host and any network; each guestfwd runs a relay, which only
        # connects to 127.0.0.1.
        netdev = 'user,id=n0,restrict=on' + ''.join(
            ',guestfwd=tcp:%s:%d-cmd:%s' % (addr, int(port), ' '.join(cmd)) for addr, port, cmd in fwds)
        for hp, gp in ([(host_port, guest_port)] if host_port is not None else []) + list(hostfwds):
            # Only the host's loopback: restrict=on leaves explicit
            # forwards working, and these listen on 127.0.0.1 only.
            netdev += ',hostfwd=tcp:127.0.0.1:%d-:%d' % (int(hp), int(gp))
        if machine == 'vexpress-a9':
            self.cmd = ['qemu-system-arm', '-M', 'vexpress-a9', '-smp', 'cpus=1', '-m', '128M',
                        '-kernel', image, '-display', 'none', '-monitor', 'none', '-serial', 'stdio',
                        '-netdev', netdev, '-net', 'nic,netdev=n0,model=lan9118']
            if sd is not None:
                # The PL181 (drv_sdio.c) with this raw image as its card.
                self.cmd += ['-drive', 'if=sd,format=raw,file=%s' % sd.path]
        else:
            if sd is not None:
                raise ValueError('the lm3s firmware has DFS off: no SD card')
            # 256 KB flash, 64 KB SRAM: the machine fixes both. Its
            # Ethernet controller (stellaris_enet) on the same restricted
            # user networking.
            self.cmd = ['qemu-system-arm', '-M', 'lm3s6965evb', '-kernel', image, '-display', 'none',
                        '-monitor', 'none', '-serial', 'stdio',
                        '-netdev', netdev, '-net', 'nic,netdev=n0,model=stellaris']
        # QEMU_GDB_PORT: QEMU's gdb stub on 127.0.0.1:PORT, for a debugger
        # to attach to a run (e.g. a breakpoint on rt_assert_handler to see
        # which thread failed an assertion and how it got there).
        gdb_port = os.environ.get('QEMU_GDB_PORT')
        if gdb_port:
            self.cmd += ['-gdb', 'tcp:127.0.0.1:%d' % int(gdb_port)]
        self.log = open(transcript, 'w', encoding='utf-8', errors='replace')
        self.log.write('$ %s\n' % ' '.join(self.cmd))
        self.sd = sd
        if sd is not None:
            if sd.attached is not None and sd.attached.proc.poll() is None:
                raise ValueError('%s is already open in another QEMU' % sd.path)
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        if sd is not None:
            sd.attached = self
        self.buf = ''   # everything received
        self.pos = 0    # how far expect() has consumed

    # -- low level ---------------------------------------------------------
    def _pump(self, timeout):
        if self.proc.poll() is not None and not self._readable(0):
            raise Timeout('qemu exited (code %s)' % self.proc.returncode)
        if self._readable(timeout):
            data = os.read(self.proc.stdout.fileno(), 65536)
            if not data:
                raise Timeout('qemu closed the serial console (exit code %s)' % self.proc.poll())
            text = data.decode('utf-8', errors='replace').replace('\r', '')
            self.buf += text
            self.log.write(text)
            self.log.flush()

    def _readable(self, timeout):
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return bool(r)

    def send(self, text):
        data = text.encode() if isinstance(text, str) else text
        self.log.write('\n[driver types %r]\n' % data)
        self.log.flush()
        # A few bytes at a time: the PL011 has a 16-byte receive FIFO and
        # RT-Thread's console reads it from an interrupt.
        for i in range(0, len(data), 8):
            self.proc.stdin.write(data[i:i + 8])
            self.proc.stdin.flush()
            time.sleep(0.02)

    def expect(self, pattern, timeout, what):
        """Wait for regex `pattern` after the last match; returns the match.
        A crash report on the console (FATAL) ends the wait at once."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.buf, self.pos)
            if m:
                self.pos = m.end()
                return m
            crash = FATAL.search(self.buf, self.pos)
            if crash:
                for _ in range(10):  # the rest of that line, briefly
                    if '\n' in self.buf[crash.end():]:
                        break
                    try:
                        self._pump(0.1)
                    except Timeout:
                        break
                line_end = self.buf.find('\n', crash.end())
                line_end = len(self.buf) if line_end < 0 else line_end
                text = self.buf[self.buf.rfind('\n', 0, crash.start()) + 1:line_end]
                self.pos = line_end
                raise Timeout('%s: the firmware reported %r' % (what, re.sub(r'\x1b\[[0-9;]*m', '', text).strip()))
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout('%s: nothing matching %r within %.0f s' % (what, pattern, timeout))
            self._pump(min(left, 0.5))

    def quiet(self, seconds):
        """Read for `seconds` (keeps the transcript complete)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                # Never negative: the deadline may pass between the two reads
                # of the clock (select() refuses a negative timeout).
                self._pump(max(0.0, deadline - time.monotonic()))
            except Timeout:
                return

    def since(self, mark):
        return self.buf[mark:]

    def tail(self, n=1500):
        return self.buf[-n:]

    # -- shell -------------------------------------------------------------
    def run(self, command, timeout=15, what=None):
        """Type a command at `msh />` and return its output (up to the next
        prompt)."""
        self.send(command + '\r')
        # The kernel's log lines may land inside the echo (a scheduled
        # prompt's retry warning between two typed characters): the echo is
        # the command's characters with whole log lines and colour codes
        # allowed between them.
        echo = LOG_BETWEEN.join(re.escape(c) for c in command)
        start = self.expect(echo, 5, what or ('the shell echoes `%s`' % command)).end()
        end = self.expect(re.escape(self.prompt), timeout, what or ('`%s` finishes' % command)).start()
        return self.buf[start:end]

    def free(self):
        out = self.run('free')
        used = re.search(r'used\s*:\s*(\d+)', out)
        peak = re.search(r'maximum\s*:\s*(\d+)', out)
        total = re.search(r'total\s*(?:memory)?\s*:\s*(\d+)', out)
        if not used:
            raise Timeout('`free` printed no "used" line: %r' % out)
        return {'used': int(used.group(1)), 'max': int(peak.group(1)) if peak else None,
                'total': int(total.group(1)) if total else None}

    def thread_stack(self, prefix):
        """(stack size, max used %) of the first thread whose name starts
        with `prefix` in `list thread`, or None."""
        out = self.run('list thread')
        for line in out.splitlines():
            f = line.split()
            if f and f[0].startswith(prefix) and len(f) >= 6:
                size = int(f[4], 16) if f[4].startswith('0x') else int(f[4])
                pct = re.search(r'(\d+)%', line)
                return size, int(pct.group(1)) if pct else None, line.strip()
        return None

    def close(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        # QEMU has exited (its raw image writes went to the file as the
        # guest made them): the host may read and change the image now.
        if self.sd is not None and self.sd.attached is self:
            self.sd.attached = None
        self.log.close()

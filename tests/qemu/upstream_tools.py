"""The newest C package's tool files on the real firmware (issue 29):
`tests/qemu/run.sh --upstream-tools`. Std lib only.

The firmware `agent-upstream-tools` is the CLI firmware of
tests/qemu/run.sh plus what a user who updated the C package and then
switched to this one keeps:

- the C package's MQTT toolset, `src/tools/tool_mqtt/*.c`, its headers
  `include/tools/tool_mqtt/*.h` and its `src/tool_func.c` (which registers
  the seven tools), copied UNCHANGED from UPSTREAM_AGENT_SRC into the work
  dir's copy of this package (never into the repo);
- RT-Thread-packages/paho-mqtt (PAHOMQTT_SRC) as a package of the BSP, in
  pipe mode, with the settings the toolset asks for in its help and header
  (4 subscribe handlers, an 8 KB worker stack);
- PKG_AGENT_DRIVER_AUDIO: AgentAudio.h's functions (glue/agent_audio.c)
  linked in. The board has no audio device: link only. A probe package
  (written here into the BSP) is compiled against the C package's own
  AgentAudio.h and references every function, as a user's tool would, so
  that the linker's --gc-sections keeps them; it also measures on the
  board what one rt_mutex costs the heap (what the toolset keeps by
  design: its lock, s_lock, is never deleted).

The broker is Debian's mosquitto on 127.0.0.1, reached from the guest
through a guestfwd (GUEST_BROKER:1883, the firmware's
PKG_AGENT_TOOL_MQTT_BROKER_URL) whose relay connects to 127.0.0.1 only.

layout.py calls lay_out(), kconfig() and overrides(); drive.py calls drive().
"""
import hashlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import time

# The guest-side address of the broker (a guestfwd to mosquitto on
# 127.0.0.1; restrict=on lets the guest reach nothing else).
GUEST_BROKER = '10.0.2.103'
GUEST_BROKER_PORT = 1883
BROKER_URL = 'tcp://%s:%d' % (GUEST_BROKER, GUEST_BROKER_PORT)
BSP_NAME = 'agent-upstream-tools'
# Package folders as the env tool names them (<name>-<version>).
AGENT_DIR = 'Agent-latest'
PAHOMQTT_DIR = 'pahomqtt-latest'
PROBE_DIR = 'upstream-tools-probe'
# The paho settings the toolset asks for (its Kconfig help, tool_mqtt.h's
# #warning lines): a handler per subscription, an 8 KB worker stack.
SUBSCRIBE_HANDLERS = 4
MQTT_THREAD_STACK = 8192
# What the scripted model does (testkit/src/bin/qemu_llm_server.rs,
# mqttsetup / mqttbye) and what the test publishes.
TOPIC_IN = 't/in'
TOPIC_OUT = 't/out'
PUBLISHED = 'hello from the board'
RULE = ('temp', '>', 30)
BELOW = '{"temp":20}'
ABOVE = '{"temp":42}'
REASON = 'threshold rule matched: temp= 42 > 30'
FORWARD_PREFIX = '[MQTT message forwarded for analysis]'
FORWARD_ANSWER = 'MQTT watch: the scripted model read the forwarded message and answers on its own.'
# The C package's tool names (its tool_func.c registers them).
MQTT_TOOLS = ('mqtt_connect', 'mqtt_disconnect', 'mqtt_publish', 'mqtt_subscribe', 'mqtt_receive',
              'mqtt_rule', 'mqtt_history')
TOOL_FUNCS = tuple('tool_' + t for t in MQTT_TOOLS)
AUDIO_FUNCS = ('agent_driver_audio_play', 'agent_driver_audio_stop', 'agent_driver_audio_pause',
               'agent_driver_audio_resume', 'agent_driver_audio_set_volume', 'agent_driver_audio_record',
               'agent_driver_audio_record_stop')
AUDIO_DATA = ('agent_audio_cmd', 'agent_audio_option')
# The toolset's object names (tool_mqtt.c, tool_mqtt_client.c) and the
# paho worker's ("mqtt%d", paho_mqtt_pipe.c).
LOCK_NAME = 'mqtt_lock'
THREADS = re.compile(r'^\s*(mqtt_rx|mqtt\d+)\s', re.M)
# What paho's worker logs as it leaves after a DISCONNECT (paho_mqtt_pipe.c).
PAHO_DOWN = 'MQTT server is disconnected.'



def die(msg):
    raise SystemExit('qemu check: error: %s' % msg)


# -- layout (tests/qemu/layout.py bsp ... --pahomqtt P --upstream-agent U) ---

def upstream_files(src):
    """The C package's files this check copies: its MQTT toolset's sources
    and headers and its tool_func.c (paths relative to the package)."""
    need = ('src/tool_func.c', 'src/tools/tool_mqtt/tool_mqtt.c', 'include/tools/tool_mqtt/tool_mqtt.h',
            'include/tools/tool_mqtt/tool_mqtt_internal.h', 'include/driver/audio/AgentAudio.h')
    for n in need:
        if not os.path.isfile(os.path.join(src, n)):
            die('UPSTREAM_AGENT_SRC=%s has no %s (it must hold the newest C package\'s files: '
                'CXSforHPU/Agent 70b0981)' % (src, n))
    out = ['src/tool_func.c']
    for folder, ext in (('src/tools/tool_mqtt', '.c'), ('include/tools/tool_mqtt', '.h')):
        out += sorted('%s/%s' % (folder, f) for f in os.listdir(os.path.join(src, folder)) if f.endswith(ext))
    return out


def _copy_if_changed(s, d):
    os.makedirs(os.path.dirname(d), exist_ok=True)
    try:
        with open(s, 'rb') as fs, open(d, 'rb') as fd:
            if fs.read() == fd.read():
                return
    except FileNotFoundError:
        pass
    shutil.copyfile(s, d)


def _write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, 'w') as f:
        f.write(text)


PROBE_SCONSCRIPT = '''from building import *

# Written by tests/qemu/upstream_tools.py (the --upstream-tools check).
group = DefineGroup('upstream-tools-probe', ['upstream_tools_probe.c'], CPPPATH=[GetCurrentDir()],
                    depend=['PKG_AGENT_DRIVER_AUDIO', 'PKG_AGENT_TOOL_MQTT_ENABLE'])
Return('group')
'''

# Compiled against the C package's own AgentAudio.h (copied next to it:
# a quoted #include looks in the including file's folder first), as a
# user's tool written for that package is.
PROBE_C = r'''/*
 * Written by tests/qemu/upstream_tools.py (tests/qemu/run.sh --upstream-tools).
 *
 * audio_link_probe: references every function and table of AgentAudio.h
 * (the C package's copy, next to this file), so the linker keeps them, and
 * prints their addresses. Nothing is called: the board has no audio device.
 *
 * mutex_heap_cost: what one rt_mutex_create costs the heap on this board
 * (the MQTT toolset keeps one, its lock, by design).
 */
#include <rtthread.h>
#include "AgentAudio.h"

static int audio_link_probe(void)
{
    struct { const char *name; void *addr; } refs[] = {
        {"agent_driver_audio_play", (void *)agent_driver_audio_play},
        {"agent_driver_audio_stop", (void *)agent_driver_audio_stop},
        {"agent_driver_audio_pause", (void *)agent_driver_audio_pause},
        {"agent_driver_audio_resume", (void *)agent_driver_audio_resume},
        {"agent_driver_audio_set_volume", (void *)agent_driver_audio_set_volume},
        {"agent_driver_audio_record", (void *)agent_driver_audio_record},
        {"agent_driver_audio_record_stop", (void *)agent_driver_audio_record_stop},
        {"agent_audio_cmd", (void *)agent_audio_cmd},
        {"agent_audio_option", (void *)agent_audio_option},
    };
    rt_size_t i;
    for (i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
        rt_kprintf("audio-link %s 0x%08x\n", refs[i].name, (rt_uint32_t)(rt_ubase_t)refs[i].addr);
    rt_kprintf("audio-link tables %s %s %s %s %s %s\n", agent_audio_cmd[AGENT_WAV_PLAY],
               agent_audio_cmd[AGENT_WAV_RECORD], agent_audio_option[AGENT_WAV_START],
               agent_audio_option[AGENT_WAV_STOP], agent_audio_option[AGENT_WAV_PAUSE],
               agent_audio_option[AGENT_WAV_RESUME]);
    return 0;
}
MSH_CMD_EXPORT(audio_link_probe, addresses of AgentAudio.h functions (link check));

static int mutex_heap_cost(void)
{
    rt_size_t total, before, after, peak;
    rt_mutex_t m;
    rt_memory_info(&total, &before, &peak);
    m = rt_mutex_create("probe_mx", RT_IPC_FLAG_PRIO);
    rt_memory_info(&total, &after, &peak);
    if (m == RT_NULL)
    {
        rt_kprintf("mutex-heap-cost failed\n");
        return -1;
    }
    rt_mutex_delete(m);
    rt_kprintf("mutex-heap-cost %d sizeof %d\n", (int)(after - before), (int)sizeof(struct rt_mutex));
    return 0;
}
MSH_CMD_EXPORT(mutex_heap_cost, heap cost of one rt_mutex_create);
'''


def kconfig():
    """The paho-mqtt index entry's menu (RT-Thread/packages iot/pahomqtt;
    the package ships none), written from what the package reads: its
    SConscript (PKG_USING_PAHOMQTT, PAHOMQTT_UDP_MODE, the example and
    test switches), paho_mqtt.h and paho_mqtt_pipe.c (MQTT_DEBUG,
    MQTT_USING_TLS, RT_PKG_MQTT_THREAD_STACK_SIZE,
    PKG_PAHOMQTT_SUBSCRIBE_HANDLERS), with the index's defaults; the
    pipe/UDP choice selects what the index's selects."""
    return '''
menuconfig PKG_USING_PAHOMQTT
    bool "Paho MQTT: Eclipse Paho MQTT C/C++ client for Embedded platforms"
    default n

if PKG_USING_PAHOMQTT
    choice
        prompt "MQTT mode"

        config PAHOMQTT_PIPE_MODE
            bool "Pipe mode: high performance and depends on DFS"
            select RT_USING_SAL
            select SAL_USING_POSIX

        config PAHOMQTT_UDP_MODE
            bool "UDP mode: small footprint, need net supported loopback"
            select RT_LWIP_NETIF_LOOPBACK
    endchoice

    config PKG_USING_PAHOMQTT_EXAMPLE
        bool "Enable MQTT example"
        default n

    config PKG_USING_PAHOMQTT_TEST
        bool "Enable MQTT test"
        default n

    config MQTT_USING_TLS
        bool "Enable support tls protocol"
        default n
        select PKG_USING_MBEDTLS

    config RT_PKG_MQTT_THREAD_STACK_SIZE
        int "Set MQTT thread stack size"
        default 4096

    config PKG_PAHOMQTT_SUBSCRIBE_HANDLERS
        int "Max pahomqtt subscribe topic handlers"
        default 1

    config MQTT_DEBUG
        bool "Enable debug log output"
        default y

    config PKG_PAHOMQTT_PATH
        string
        default "/packages/iot/pahomqtt"

    config PKG_PAHOMQTT_VER
        string
        default "latest"
endif
'''


def lay_out(bsp, pahomqtt_src, upstream_src, sync_dir):
    """After layout.py has laid out packages/ (this package's copy
    included): paho-mqtt from pahomqtt_src, the C package's MQTT toolset
    and tool_func.c from upstream_src over the package's copy (unchanged
    bytes), and the probe package."""
    pkgs = os.path.join(bsp, 'packages')
    for marker in ('SConscript', 'MQTTClient-RT/paho_mqtt.h', 'MQTTClient-RT/paho_mqtt_pipe.c', 'MQTTPacket/src'):
        if not os.path.exists(os.path.join(pahomqtt_src, marker)):
            die('PAHOMQTT_SRC=%s has no %s (RT-Thread-packages/paho-mqtt)' % (pahomqtt_src, marker))
    sync_dir(os.path.abspath(pahomqtt_src), os.path.join(pkgs, PAHOMQTT_DIR))
    agent = os.path.join(pkgs, AGENT_DIR)
    for rel in upstream_files(upstream_src):
        _copy_if_changed(os.path.join(upstream_src, rel), os.path.join(agent, rel))
        if rel.endswith('.c'):
            # Compiled at every build (a few seconds), so that the build log
            # always shows what the compiler says of them: their objects
            # (next to the sources, or in build/) go.
            obj = os.path.splitext(rel)[0] + '.o'
            for o in (os.path.join(agent, obj), os.path.join(bsp, 'build', 'packages', AGENT_DIR, obj)):
                if os.path.exists(o):
                    os.remove(o)
    probe = os.path.join(pkgs, PROBE_DIR)
    os.makedirs(probe, exist_ok=True)
    _write_if_changed(os.path.join(probe, 'SConscript'), PROBE_SCONSCRIPT)
    _write_if_changed(os.path.join(probe, 'upstream_tools_probe.c'), PROBE_C)
    _copy_if_changed(os.path.join(upstream_src, 'include/driver/audio/AgentAudio.h'),
                     os.path.join(probe, 'AgentAudio.h'))


def overrides(broker_url):
    """The .config settings of the firmware (tests/qemu/layout.py config
    --mqtt-broker URL; `check` requires each of them in rtconfig.h)."""
    return {
        # The toolset, its broker (the guestfwd's address) and a
        # subscription slot per paho handler.
        'PKG_AGENT_TOOL_MQTT_ENABLE': 'y',
        'PKG_AGENT_TOOL_MQTT_BROKER_URL': '"%s"' % broker_url,
        'PKG_AGENT_TOOL_MQTT_MAX_SUB_TOPICS': str(SUBSCRIBE_HANDLERS),
        # paho-mqtt in pipe mode (the toolset's header warns without it).
        'PKG_USING_PAHOMQTT': 'y',
        'PAHOMQTT_PIPE_MODE': 'y',
        'PAHOMQTT_UDP_MODE': None,
        'PKG_PAHOMQTT_SUBSCRIBE_HANDLERS': str(SUBSCRIBE_HANDLERS),
        'RT_PKG_MQTT_THREAD_STACK_SIZE': str(MQTT_THREAD_STACK),
        'MQTT_USING_TLS': None,
        'MQTT_DEBUG': None,
        'PKG_USING_PAHOMQTT_EXAMPLE': None,
        'PKG_USING_PAHOMQTT_TEST': None,
        # What pipe mode needs of the kernel: pipes on devfs, SAL's POSIX
        # sockets (select over a socket and a pipe).
        'RT_USING_POSIX_PIPE': 'y',
        'RT_USING_DFS': 'y',
        'RT_USING_DFS_DEVFS': 'y',
        'RT_USING_SAL': 'y',
        'SAL_USING_POSIX': 'y',
        # The toolset prints numbers with %g (rule values, the forward
        # reason): the kernel's full rt_vsnprintf.
        'RT_KLIBC_USING_VSNPRINTF_STANDARD': 'y',
        'RT_KLIBC_USING_VSNPRINTF_DECIMAL_SPECIFIERS': 'y',
        'RT_KLIBC_USING_VSNPRINTF_EXPONENTIAL_SPECIFIERS': 'y',
        # AgentAudio.h: compiled and linked (no audio device: link only).
        'PKG_AGENT_DRIVER_AUDIO': 'y',
        'RT_USING_AUDIO': 'y',
    }


# -- drive (tests/qemu/drive.py --upstream-tools BSP) ---------------------------

def _sha(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def _nm(elf):
    """{symbol: (type, address)} of the image's defined symbols."""
    out = subprocess.run(['arm-none-eabi-nm', elf], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    if out.returncode != 0:
        raise SystemExit('arm-none-eabi-nm %s failed: %s' % (elf, out.stderr.strip()))
    syms = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = (f[1], int(f[0], 16))
    return syms


def _rust_debug_str(s):
    """The text of a Rust `{:?}` string literal (the server's log lines)."""
    out, i = [], 1
    while i < len(s) - 1:
        c = s[i]
        if c != '\\':
            out.append(c)
            i += 1
            continue
        n = s[i + 1]
        if n == 'u' and s[i + 2] == '{':
            end = s.index('}', i)
            out.append(chr(int(s[i + 3:end], 16)))
            i = end + 1
            continue
        out.append({'n': '\n', 't': '\t', 'r': '\r', '0': '\0'}.get(n, n))
        i += 2
    return ''.join(out)


def inject_format(upstream_src):
    """PKG_AGENT_TOOL_MQTT_INJECT_FMT of the C package's tool_mqtt.h, as a
    Python %-format."""
    with open(os.path.join(upstream_src, 'include/tools/tool_mqtt/tool_mqtt.h'), errors='replace') as f:
        h = f.read()
    m = re.search(r'#define\s+PKG_AGENT_TOOL_MQTT_INJECT_FMT\s*\\\s*\n((?:\s*"(?:[^"\\]|\\.)*"\s*\\?\s*\n)+)', h)
    if not m:
        raise SystemExit('no PKG_AGENT_TOOL_MQTT_INJECT_FMT in the C package\'s tool_mqtt.h')
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))
    text = ''.join(parts)
    return re.sub(r'\\(.)', lambda e: {'n': '\n', 't': '\t', '"': '"', '\\': '\\'}.get(e.group(1), e.group(1)), text)


def _listeners(port):
    """The addresses with a listening TCP socket on `port` (/proc/net/tcp
    and tcp6)."""
    out = []
    for name in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            with open(name) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            addr, p = f[1].split(':')
            if int(p, 16) != port or f[3] != '0A':
                continue
            if len(addr) == 8:
                out.append(socket.inet_ntop(socket.AF_INET, bytes.fromhex(addr)[::-1]))
            else:
                raw = bytes.fromhex(addr)
                out.append(socket.inet_ntop(socket.AF_INET6, b''.join(raw[i:i + 4][::-1] for i in range(0, 16, 4))))
    return sorted(set(out))


class Broker:
    """Debian's mosquitto on a free port of 127.0.0.1 (anonymous clients,
    no persistence, its log in the logs folder), and mosquitto_sub
    watching the board's topics."""

    def __init__(self, logs):
        self.logs = logs
        self.log_path = os.path.join(logs, 'mosquitto.log')
        self.watch_path = os.path.join(logs, 'mosquitto-watch.txt')
        for p in (self.log_path, self.watch_path):
            if os.path.exists(p):
                os.remove(p)
        s = socket.socket()
        s.bind(('127.0.0.1', 0))
        self.port = s.getsockname()[1]
        s.close()
        conf = os.path.join(logs, 'mosquitto.conf')
        with open(conf, 'w') as f:
            f.write('# written by tests/qemu/upstream_tools.py\n'
                    'listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n'
                    'log_dest file %s\nlog_type error\nlog_type warning\nlog_type notice\n'
                    'log_type information\nconnection_messages true\nlog_timestamp true\n'
                    # Run as root, mosquitto would drop to its own user,
                    # which may not write into the logs folder: it stays
                    # the user running the check.
                    'user %s\n'
                    % (self.port, self.log_path, pwd.getpwuid(os.getuid()).pw_name))
        self.exe = shutil.which('mosquitto') or '/usr/sbin/mosquitto'
        self.procs = []
        self.proc = self._spawn([self.exe, '-c', conf], os.path.join(logs, 'mosquitto.out'))
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(('127.0.0.1', self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError('mosquitto did not listen on 127.0.0.1:%d (see %s and %s)'
                                       % (self.port, self.log_path, os.path.join(logs, 'mosquitto.out')))
                time.sleep(0.1)
        # Listening on the loopback only: every listening socket on that
        # port is 127.0.0.1's (/proc/net/tcp, tcp6; Linux).
        self.listening = _listeners(self.port)
        if self.listening != ['127.0.0.1']:
            self.stop()
            raise RuntimeError('mosquitto listens on %s, not on 127.0.0.1 only' % (self.listening or 'nothing seen'))
        ver = subprocess.run([self.exe, '-h'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True).stdout
        m = re.search(r'mosquitto version (\S+)', ver)
        self.version = m.group(1) if m else '?'
        # The watcher: every message of the board's topics (its publish and
        # its last will), one "topic payload" line each.
        self.watch = self._spawn(['mosquitto_sub', '-h', '127.0.0.1', '-p', str(self.port), '-i', 'qemu-check-watch',
                                  '-q', '1', '-v', '-t', TOPIC_OUT, '-t', 'agent/pub'], self.watch_path)
        deadline = time.monotonic() + 10
        while 'qemu-check-watch' not in self.log() and time.monotonic() < deadline:
            time.sleep(0.1)
        if 'qemu-check-watch' not in self.log():
            self.stop()
            raise RuntimeError('mosquitto_sub did not connect (see %s)' % self.log_path)

    def _spawn(self, cmd, out):
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=open(out, 'w'), stderr=subprocess.STDOUT,
                             start_new_session=True)
        self.procs.append(p)
        return p

    def log(self):
        try:
            with open(self.log_path, errors='replace') as f:
                return f.read()
        except FileNotFoundError:
            return ''

    def seen(self):
        try:
            with open(self.watch_path, errors='replace') as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def publish(self, topic, payload):
        r = subprocess.run(['mosquitto_pub', '-h', '127.0.0.1', '-p', str(self.port), '-i', 'qemu-check-pub',
                            '-q', '1', '-t', topic, '-m', payload], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, timeout=20)
        if r.returncode != 0:
            raise RuntimeError('mosquitto_pub %s %s failed: %s' % (topic, payload, r.stdout.strip()))

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(5)


def drive(run, bsp, upstream_src, env):
    """The steps on the firmware (see tests/qemu/README.md). `run` is
    drive.py's Run (its board, server, record, attempt, boot, chat); `env`
    has drive.py's Fail, Timeout, CHAT_PROMPT, QUESTION, ANSWER and
    one_line."""
    Fail, Timeout = env['Fail'], env['Timeout']
    fw = 'upstream-tools'
    agent = os.path.join(bsp, 'packages', AGENT_DIR)
    elf = os.path.join(bsp, 'rtthread.elf')
    state = {}

    def files_unchanged():
        files = upstream_files(upstream_src)
        bad = [rel for rel in files if not os.path.isfile(os.path.join(agent, rel))
               or _sha(os.path.join(agent, rel)) != _sha(os.path.join(upstream_src, rel))]
        probe_h = os.path.join(bsp, 'packages', PROBE_DIR, 'AgentAudio.h')
        if not os.path.isfile(probe_h) or _sha(probe_h) != _sha(os.path.join(upstream_src,
                                                                               'include/driver/audio/AgentAudio.h')):
            bad.append('(probe) AgentAudio.h')
        if bad:
            raise Fail('not the C package\'s bytes in the firmware\'s package copy: %s' % ', '.join(bad))
        objs = []
        with open(os.path.join(bsp, 'rtthread.map'), errors='replace') as f:
            m = f.read()
        for rel in files:
            if rel.endswith('.c'):
                stem = os.path.splitext(os.path.basename(rel))[0]
                if not re.search(r'%s/%s\.o\b' % (re.escape(os.path.dirname(rel)), re.escape(stem)), m):
                    objs.append(rel)
        if objs:
            raise Fail('the map file lists no object of %s' % ', '.join(objs))
        return '%d files identical to UPSTREAM_AGENT_SRC (%s), every .c linked (rtthread.map)' % (
            len(files), ', '.join(os.path.basename(f) for f in files))

    def symbols():
        syms = _nm(elf)
        state['syms'] = syms
        want = TOOL_FUNCS + ('mqtt_tool_start', 'mqtt_tool_stop', 'paho_mqtt_start', 'paho_mqtt_publish',
                             'agent_inject_text', 'agent_is_busy', 'agent_get_message_hub') + AUDIO_FUNCS
        missing = [s for s in want if s not in syms or syms[s][0] not in 'tT']
        missing += [s for s in AUDIO_DATA if s not in syms or syms[s][0] not in 'dDrRbB']
        if missing:
            raise Fail('not defined in rtthread.elf (arm-none-eabi-nm): %s' % ', '.join(missing))
        return ('defined in rtthread.elf: the 7 tool_mqtt_* functions, mqtt_tool_start/stop, paho_mqtt_start/'
                'publish, agent_inject_text, agent_is_busy, agent_get_message_hub, and AgentAudio.h\'s %d '
                'functions and 2 tables (the probe, compiled against the C package\'s AgentAudio.h, references '
                'them)' % len(AUDIO_FUNCS))

    def build_warnings():
        log = os.path.join(run.args.logs, 'build-%s.log' % BSP_NAME)
        try:
            with open(log, errors='replace') as f:
                text = f.read()
        except OSError:
            raise Fail('no build log at %s' % log)
        compiled = [rel for rel in upstream_files(upstream_src) if rel.endswith('.c')
                    and not re.search(r'^CC [^\n]*%s\.o$' % re.escape(os.path.splitext(rel)[0]), text, re.M)]
        if compiled:
            raise Fail('the last build log (%s) shows no compile of %s' % (log, ', '.join(compiled)))
        bad = re.findall(r'^[^\n]*tool_mqtt[^\n]*#warning[^\n]*$', text, re.M)
        if bad:
            raise Fail('the toolset\'s header warns about the configuration: %s' % '; '.join(bad[:4]))
        warned = sorted(set(re.findall(r'([\w./-]*(?:tool_mqtt|paho|AgentAudio|agent_audio)[\w./-]*\.[ch]):\d+:\d+: '
                                       r'warning', text)))
        return ('the last build (%s) compiled the C package\'s %d .c files: no #warning of tool_mqtt.h (pipe mode, '
                '%d handlers, %d-byte worker stack); compiler warnings in the toolset/paho/audio files: %s'
                % (os.path.basename(log), len([r for r in upstream_files(upstream_src) if r.endswith('.c')]),
                   SUBSCRIBE_HANDLERS, MQTT_THREAD_STACK, ', '.join(sorted(set(os.path.basename(w) for w in warned)))
                   or 'none'))

    for step, fn in (('the C package\'s tool files in the image, unchanged', files_unchanged),
                     ('the image links the toolset, paho-mqtt and AgentAudio.h (nm)', symbols),
                     ('the build: the toolset compiled without a configuration warning', build_warnings)):
        if not run.attempt(fw, step, fn):
            if step.startswith('the C'):
                return

    try:
        broker = Broker(run.args.logs)
    except (RuntimeError, OSError) as e:
        run.record(fw, 'start mosquitto on 127.0.0.1', 'FAIL', str(e))
        return
    run.record(fw, 'start mosquitto on 127.0.0.1', 'PASS', 'mosquitto %s listening on 127.0.0.1:%d only '
               '(/proc/net/tcp; log %s); mosquitto_sub watches %s and agent/pub'
               % (broker.version, broker.port, broker.log_path, TOPIC_OUT))
    run.figures.append(('upstream-tools: broker (mosquitto %s) on the host, relayed from the guest\'s %s:%d'
                        % (broker.version, GUEST_BROKER, GUEST_BROKER_PORT), '127.0.0.1:%d' % broker.port))
    try:
        _drive(run, bsp, upstream_src, broker, state, env, fw)
    finally:
        broker.stop()


def _drive(run, bsp, upstream_src, broker, state, env, fw):
    Fail, Timeout, one_line, chat_prompt = env['Fail'], env['Timeout'], env['one_line'], env['CHAT_PROMPT']
    relay = [run.server.exe, '--connect', '127.0.0.1:%d' % broker.port]
    try:
        boot = run.boot(bsp, fw, guestfwds=[(GUEST_BROKER, GUEST_BROKER_PORT, relay)])
    except (Fail, Timeout) as e:
        run.record(fw, 'boot', 'FAIL', str(e) + run.excerpt(0))
        return
    b = run.board
    heap = {'boot': boot['used']}
    run.record(fw, 'boot, free', 'PASS', 'used %d' % boot['used'])
    run.figures.append(('upstream-tools: heap used at boot (free)', boot['used']))

    def audio_probe():
        out = b.run('audio_link_probe')
        got = dict(re.findall(r'audio-link (\w+) 0x([0-9a-fA-F]+)', out))
        syms = state.get('syms') or _nm(os.path.join(bsp, 'rtthread.elf'))
        bad = []
        for name in AUDIO_FUNCS + AUDIO_DATA:
            if name not in got:
                bad.append('%s not printed' % name)
            elif name in syms and (int(got[name], 16) & ~1) != (syms[name][1] & ~1):
                bad.append('%s at 0x%s on the board, 0x%x in nm' % (name, got[name], syms[name][1]))
        if bad:
            raise Fail('; '.join(bad))
        tables = re.search(r'audio-link tables ([^\n]*)', out)
        if not tables or tables.group(1).split() != ['wavplay', 'wavrecord', '-s', '-t', '-p', '-r']:
            raise Fail('agent_audio_cmd/agent_audio_option read %r on the board' % (tables.group(1) if tables
                                                                                      else None))
        return ('the running image has all %d functions at nm\'s addresses; tables: %s (link only: no audio '
                'device, nothing called)' % (len(AUDIO_FUNCS), tables.group(1)))

    def mutex_cost():
        out = b.run('mutex_heap_cost')
        m = re.search(r'mutex-heap-cost (\d+) sizeof (\d+)', out)
        if not m:
            raise Fail('mutex_heap_cost printed %r' % one_line(out))
        heap['mutex'] = int(m.group(1))
        return 'one rt_mutex_create costs %s bytes of heap (sizeof(struct rt_mutex) %s + the allocator\'s ' \
               'block header)' % (m.group(1), m.group(2))

    run.attempt(fw, 'AgentAudio.h on the board: the probe prints every function\'s address', audio_probe)
    run.attempt(fw, 'heap cost of one rt_mutex (what the toolset keeps: its lock)', mutex_cost)
    # The baseline: the heap right before the agent starts (the probes
    # keep nothing, so it is the boot's unless a BSP thread moved it).
    before = b.free()['used']
    if before != heap['boot']:
        run.figures.append(('upstream-tools: heap used before main_loop_entry (free)', before))
    heap['boot'] = before

    def threads():
        return sorted(set(THREADS.findall(b.run('list thread'))))

    def start_chat(cycle):
        def fn():
            mark = len(b.buf)
            b.send('main_loop_entry\r')
            b.expect(r'Agent chat:[^\n]*\n', 20, 'main_loop_entry opens the chat')
            b.expect(re.escape(chat_prompt), 5, 'the chat prompt')
            m = re.search(r'agent started: used (\d+)', b.since(mark))
            if m and cycle == 1:
                run.figures.append(('upstream-tools: heap used after main_loop_entry (library log)', int(m.group(1))))
            return 'chat open%s' % ('; agent started: used %s (library log)' % m.group(1) if m else '')
        return fn

    def setup(cycle):
        def fn():
            mark = run.server.mark()
            seen_before = len([ln for ln in broker.seen() if ln == '%s %s' % (TOPIC_OUT, PUBLISHED)])
            reply, secs = run.chat('mqttsetup: subscribe to %s, publish to %s, watch temp' % (TOPIC_IN, TOPIC_OUT),
                                   r'MQTT set up:', 90)
            answers = run.server.answers(mark)
            scen = [s for (s, _, _) in answers]
            if scen != ['mqttsetup-call'] * 3 + ['mqttsetup-answer']:
                raise Fail('expected three tool-call rounds then the answer; the server answered %s' % answers)
            offered = run.server.offered(mark)
            lacking = [t for t in MQTT_TOOLS if not offered or t not in offered[0]]
            if lacking:
                raise Fail('the board did not offer %s (tools: %s)' % (', '.join(lacking), offered[:1]))
            text = ' '.join(reply.split())
            want = ['subscribe ok: topic=%s mode=filter (state=connected)' % TOPIC_IN,
                    'publish ok: topic=%s bytes=%d qos=1 (state=connected)' % (TOPIC_OUT, len(PUBLISHED)),
                    'rule set: topic=%s path=%s %s %g (cooldown' % ((TOPIC_IN,) + RULE)]
            missing = [w for w in want if w not in text]
            if missing:
                raise Fail('the tool results (quoted by the model) lack %s: %s' % (missing, one_line(reply)))
            # paho publishes from its worker thread: the broker is watched.
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                got = len([ln for ln in broker.seen() if ln == '%s %s' % (TOPIC_OUT, PUBLISHED)])
                if got > seen_before:
                    break
                b.quiet(0.3)
            else:
                raise Fail('mosquitto_sub saw no "%s %s" within 15 s of the answer (it saw %s)'
                           % (TOPIC_OUT, PUBLISHED, broker.seen()[-3:]))
            conn = re.findall(r'New client connected from 127\.0\.0\.1:\d+ as rt-thread-agent[^\n]*', broker.log())
            if len(conn) < cycle:
                raise Fail('the broker logged %d connection(s) of rt-thread-agent, expected %d' % (len(conn), cycle))
            return ('answered in %.1f s: mqtt_subscribe, mqtt_publish, mqtt_rule, each result as the C package '
                    'writes it (%%g printed as a number); the broker got "%s" on %s; broker log: %s'
                    % (secs, PUBLISHED, TOPIC_OUT, conn[-1]))
        return fn

    def forward():
        mark = run.server.mark()
        cmark = len(b.buf)
        broker.publish(TOPIC_IN, BELOW)
        # Paced, not asserted here: the board's counters say below that this
        # one arrived and was kept back.
        b.quiet(2)
        broker.publish(TOPIC_IN, ABOVE)
        deadline = time.monotonic() + 40
        req = None
        while time.monotonic() < deadline and req is None:
            for line in run.server.lines()[mark:]:
                m = re.match(r'\[server\] request \d+: .* user=("(?:[^"\\]|\\.)*") tool_results=', line)
                if m and _rust_debug_str(m.group(1)).startswith(FORWARD_PREFIX):
                    req = _rust_debug_str(m.group(1))
                    break
            if req is None:
                b.quiet(0.5)
        if req is None:
            raise Fail('no request whose last user message starts with %r reached the scripted server within 40 s '
                       'of publishing %s then %s to %s' % (FORWARD_PREFIX, BELOW, ABOVE, TOPIC_IN))
        expected = inject_format(upstream_src) % (TOPIC_IN, ABOVE, REASON)
        if req != expected:
            raise Fail('the injected message is %r, expected %r' % (req, expected))
        try:
            b.expect(re.escape(FORWARD_ANSWER), 30, 'the board prints the answer to the forwarded message')
        except Timeout as e:
            raise Fail(str(e))
        log = b.since(cmark)
        delivered = re.search(r'mqtt -> agent: (\d+) message\(s\) delivered for analysis', log)
        if not delivered or delivered.group(1) != '1':
            raise Fail('the board log has no "mqtt -> agent: 1 message(s) delivered for analysis" (%s)'
                       % (delivered.group(0) if delivered else 'none'))
        b.quiet(2)
        forwards = [ln for ln in run.server.lines()[mark:]
                    if re.match(r'\[server\] request \d+: .* user="\[MQTT message forwarded', ln)]
        if len(forwards) != 1:
            raise Fail('%d forwarded messages reached the server, expected 1 (%s suppressed)' % (len(forwards), BELOW))
        return ('%s to %s kept back, %s forwarded: the server got %r; the board printed the scripted answer; log: %s'
                % (BELOW, TOPIC_IN, ABOVE, req.split('\n')[3] if req.count('\n') >= 3 else req,
                   delivered.group(0)))

    def next_question():
        # The user goes on chatting after the agent spoke on its own: the
        # next question must get its own answer before the prompt returns
        # (not the reply of the injected message, which the loop put on the
        # output mailbox while the chat was idle).
        mark = len(b.buf)
        try:
            reply, secs = run.chat(env['QUESTION'], env['ANSWER'], 90)
        except Fail as e:
            late = None
            try:
                late = b.expect(env['ANSWER'], 60, 'the answer to %r' % env['QUESTION'])
            except Timeout:
                pass
            b.quiet(1)
            after_prompt = late is not None and b.buf.rfind(chat_prompt, mark, late.start()) >= 0
            raise Fail('%s%s' % (e, '; the answer streamed in after the prompt had come back: the CLI took the '
                                    'injected message\'s reply, left on the output mailbox, as this question\'s '
                                    '(one reply behind from then on)' if after_prompt else ''))
        return 'answered in %.1f s before the prompt came back' % secs

    def leave():
        b.send('\x04')
        b.expect(r'leaving the agent chat', 10, 'Ctrl-D leaves the chat')
        run.shell_alive('after Ctrl-D')
        return 'shell back (the agent keeps running)'

    def status():
        out = b.run('mqtt_tool status')
        text = out.replace('\n', ' ')
        m = re.search(r'topic=%s want=1 mode=filter registered=1 subscribed=1 rx=(\d+) injected=(\d+) '
                      r'suppressed=(\d+)' % re.escape(TOPIC_IN), text)
        if not m or (m.group(1), m.group(2), m.group(3)) != ('2', '1', '1'):
            raise Fail('mqtt_tool status should show %s with rx=2 injected=1 suppressed=1: %s'
                       % (TOPIC_IN, one_line(out)))
        rule = re.search(r'rules \(forward only when matched\):([^\n]*\n){0,2}', out)
        live = threads()
        if 'mqtt_rx' not in live or not any(re.match(r'mqtt\d+$', t) for t in live):
            raise Fail('the toolset\'s rx thread and paho\'s worker should run; list thread shows %s' % live)
        st = None
        for line in b.run('list thread').splitlines():
            f = line.split()
            if f and re.match(r'mqtt\d+$', f[0]):
                st = line.strip()
        if st:
            run.figures.append(('upstream-tools: paho worker thread (list thread)', ' '.join(st.split())))
        return '%s; threads %s%s' % (m.group(0), ', '.join(live),
                                     ('; ' + one_line(rule.group(0))) if rule else '')

    def stopped_threads(what):
        deadline = time.monotonic() + 15
        live = threads()
        while live and time.monotonic() < deadline:
            b.quiet(0.5)
            live = threads()
        if live:
            raise Fail('%s: still running after 15 s: %s' % (what, ', '.join(live)))

    def clean_disconnect(cycle):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            n = len(re.findall(r'Client rt-thread-agent disconnected\.', broker.log()))
            if n >= cycle:
                break
            time.sleep(0.2)
        else:
            tail = [ln for ln in broker.log().splitlines() if 'rt-thread-agent' in ln][-3:]
            raise Fail('the broker logged no clean DISCONNECT of rt-thread-agent (%s)' % tail)
        will = [ln for ln in broker.seen() if ln.startswith('agent/pub ')]
        if will:
            raise Fail('the broker sent the board\'s last will: %s' % will)

    def paho_down(mark, what):
        # paho's worker logs this once it has sent DISCONNECT and freed its
        # client (asynchronously): waited for before anything else is typed,
        # so that the line does not land inside a command's echo.
        if PAHO_DOWN not in b.since(mark):
            try:
                b.expect(re.escape(PAHO_DOWN), 10, 'paho\'s worker ends (%s)' % what)
            except Timeout as e:
                raise Fail(str(e))
        b.quiet(0.3)

    def disconnect_msh():
        mark = len(b.buf)
        out = b.run('mqtt_tool disconnect', timeout=20)
        if 'disconnect ok: was_connected=1, state=stopped' not in out:
            raise Fail('mqtt_tool disconnect printed %s' % one_line(out))
        paho_down(mark, 'after mqtt_tool disconnect')
        stopped_threads('after mqtt_tool disconnect')
        clean_disconnect(1)
        return 'disconnect ok: was_connected=1, state=stopped; mqtt_rx and paho\'s worker ended; the broker ' \
               'logged a clean DISCONNECT, no last will'

    def cleanup(cycle):
        def fn():
            out = b.run('cleanup_agent_entry', timeout=30)
            b.quiet(1)
            mutexes = b.run('list mutex')
            after = b.free()['used']
            heap['after%d' % cycle] = after
            kept = re.search(r'^\s*%s\s' % LOCK_NAME, mutexes, re.M)
            if not kept:
                raise Fail('list mutex shows no %s after cleanup' % LOCK_NAME)
            diff = after - heap['boot']
            if cycle == 1:
                run.figures.append(('upstream-tools: heap used after mqtt_tool disconnect and cleanup_agent_entry '
                                    '(free)', '%d (boot %+d)' % (after, diff)))
                if 'mutex' not in heap:
                    raise Fail('no rt_mutex cost measured (mutex_heap_cost failed): heap %+d bytes from boot' % diff)
                if diff != heap['mutex']:
                    raise Fail('heap used %d after cleanup, boot %d: %+d bytes, but the one rt_mutex the toolset '
                               'keeps (%s) costs %d' % (after, heap['boot'], diff, LOCK_NAME, heap['mutex']))
                return ('heap used %d, boot %d: %+d bytes = one rt_mutex (%s, never deleted by design); cleanup: %s'
                        % (after, heap['boot'], diff, LOCK_NAME, one_line(out) or 'ok'))
            run.figures.append(('upstream-tools: heap used after the second cycle (mqtt_disconnect by the model, '
                                'cleanup_agent_entry)', '%d (boot %+d)' % (after, diff)))
            if after != heap.get('after1'):
                raise Fail('heap used %d after the second cycle, %s after the first: the cycle leaks %+d bytes'
                           % (after, heap.get('after1'), after - (heap.get('after1') or 0)))
            return 'heap used %d: exactly as after the first cycle (boot %+d: the toolset\'s lock)' % (after, diff)
        return fn

    def bye():
        state['bye'] = len(b.buf)
        mark = run.server.mark()
        reply, secs = run.chat('mqttbye: close the MQTT connection', r'MQTT closed:', 60)
        scen = [s for (s, _, _) in run.server.answers(mark)]
        if scen != ['mqttbye-call', 'mqttbye-answer']:
            raise Fail('expected the mqtt_disconnect call then the answer; the server answered %s' % scen)
        if 'disconnect ok: was_connected=1, state=stopped' not in ' '.join(reply.split()):
            raise Fail('mqtt_disconnect\'s result (quoted by the model) is not "disconnect ok: was_connected=1, '
                       'state=stopped": %s' % one_line(reply))
        return 'answered in %.1f s: disconnect ok: was_connected=1, state=stopped' % secs

    def after_bye():
        paho_down(state.get('bye', 0), 'after mqtt_disconnect')
        stopped_threads('after mqtt_disconnect')
        clean_disconnect(2)
        return 'mqtt_rx and paho\'s worker ended; the broker logged a clean DISCONNECT, no last will'

    # Cycle 1: the model subscribes, publishes and sets the rule; the test's
    # messages; the agent answers the forwarded one on its own; the MSH
    # command disconnects; cleanup; the heap.
    if not run.attempt(fw, 'cycle 1: main_loop_entry', start_chat(1)):
        return
    if not run.attempt(fw, 'cycle 1: the model calls mqtt_subscribe, mqtt_publish, mqtt_rule; the broker gets '
                       'the publish', setup(1)):
        return
    run.attempt(fw, 'cycle 1: %s kept back, %s crosses the rule: the agent answers on its own' % (BELOW, ABOVE),
                forward)
    run.attempt(fw, 'cycle 1: the next question typed gets its own answer', next_question)
    if not run.attempt(fw, 'cycle 1: Ctrl-D', leave):
        return
    run.attempt(fw, 'cycle 1: mqtt_tool status counts the two messages', status)
    if not run.attempt(fw, 'cycle 1: mqtt_tool disconnect while connected', disconnect_msh):
        return
    if not run.attempt(fw, 'cycle 1: cleanup_agent_entry, the heap back but the toolset\'s lock', cleanup(1)):
        return
    # Cycle 2: the same set-up again, the model disconnects; nothing more
    # may stay.
    if not run.attempt(fw, 'cycle 2: main_loop_entry', start_chat(2)):
        return
    if not run.attempt(fw, 'cycle 2: the model sets up again (the client restarts); the broker gets the publish',
                       setup(2)):
        return
    if not run.attempt(fw, 'cycle 2: the model calls mqtt_disconnect', bye):
        return
    run.attempt(fw, 'cycle 2: Ctrl-D', leave)
    run.attempt(fw, 'cycle 2: the client stopped cleanly', after_bye)
    run.attempt(fw, 'cycle 2: cleanup_agent_entry, the heap as after cycle 1', cleanup(2))


def flash_rows(map_path):
    """The firmware's flash figures (rtthread.map): the package as the
    other firmwares count it, and the C package's toolset, paho-mqtt and
    the audio glue apart."""
    import mapsize
    name = 'upstream-tools firmware: '
    try:
        rows = [(name + w, v) for w, v in mapsize.rows(map_path)]
        parts = (('flash of which the C package\'s MQTT toolset (src/tools/tool_mqtt/*.c)',
                  lambda sec, obj: '%s/src/tools/tool_mqtt/' % AGENT_DIR in obj),
                 ('flash of which the audio glue (glue/agent_audio.c)',
                  lambda sec, obj: obj.endswith('%s/glue/agent_audio.o' % AGENT_DIR)),
                 ('flash paho-mqtt (dependency)', lambda sec, obj: '/%s/' % PAHOMQTT_DIR in obj))
        s = mapsize.sizes(map_path, parts)
        for g, _ in parts:
            v = s[g]
            rows.append((name + g, '%d bytes (text %d, rodata %d, data %d; bss %d)'
                         % (v['text'] + v['rodata'] + v['data'], v['text'], v['rodata'], v['data'], v['bss'])))
        return rows
    except (OSError, SystemExit) as e:
        return [(name + 'flash', 'unavailable: %s' % e)]

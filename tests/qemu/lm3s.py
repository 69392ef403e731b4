"""The lm3s board of the real-firmware check (issue 31): RT-Thread's
bsp/lm3s8962 on QEMU's lm3s6965evb (Cortex-M3, 256 KB flash, 64 KB SRAM).
Std lib only; used by tests/qemu/layout.py.

What the BSP needs on that machine is done here, to the check's own copy of
the BSP and of RT-Thread (never to RTT_ROOT), by small text edits that fail
loudly when the text they expect is not there:

- `*(.bss.*)` inside `.bss` of lm3s_rom.ld: the BSP compiles with
  -fdata-sections, and without it the heap (from __bss_end) overlaps lwIP's
  and the kernel's zero-initialised variables;
- the NIC registered after lwIP's tcpip thread: rt_hw_luminaryif_init()
  moves from rtthread_startup() into the init thread, after lwip_sys_init();
- the link declared up once the NIC is registered: QEMU's stellaris_enet
  has no PHY, so nothing else ever says so;
- the soft-timer thread started in rtthread_startup() (the BSP's
  configuration has RT_USING_TIMER_SOFT, its startup never started it,
  and the SysTick then failed a kernel assertion at a fixed uptime: see
  patch_bsp);
- lwIP's MEMP_OVERFLOW_CHECK 0 (the port's lwipopts.h sets 1 whatever the
  configuration says; the lm3s board has its own RT-Thread copy, so the A9
  firmwares keep theirs);
- C built with -O2 (rtconfig.py's BUILD 'release'; 'debug' is -O0, and
  the firmware then overflows the 256 KB flash by about 10 KB);
- the rest is configuration (OVERRIDES below): DFS off
  (rt_hw_sdcard_init() spins on QEMU's SSI, which has no card), the IDLE
  thread's stack 512, lwIP 2.1.2 with a pbuf pool of 2 and SNMP off, the
  package with the old feature set (CLI channel, no TLS).

What the check deliberately keeps as the BSP ships it, because the issue's
library bugs show with it: no RT_USING_COMPONENTS_INIT (so nothing
initialises ulog, which the package selects: bug 1), RT_CONSOLE_DEVICE_NAME
"uart" while the console is "uart1" (bug 2), RT-Thread's small
rt_vsnprintf (bug 3), RT_NAME_MAX 12 (bug 4).
"""
import os
import re
import sys

BSP = os.path.join('bsp', 'lm3s8962')
# The firmware scons links (rtconfig.py: TARGET, -Map=...).
ELF = 'rtthread-lm3s.elf'
MAP = 'rtthread-lm3s.map'
# lm3s6965evb: flash and SRAM.
FLASH_BYTES = 256 * 1024
RAM_BYTES = 64 * 1024

# The RT-Thread copy's file patched for this board (the tree sync puts the
# original back first: the patch is made from it at every run; SCons sees
# the same content and rebuilds nothing).
LWIPOPTS = os.path.join('components', 'net', 'lwip', 'port', 'lwipopts.h')


def die(msg):
    sys.stderr.write('qemu check (lm3s): error: %s\n' % msg)
    sys.exit(1)


def _edit(path, fn, src=None):
    """Write fn(text) to `path`, text read from `src` (the unpatched
    template) or from `path` itself; the file is written only when its
    content changes (SCons and cargo see no change otherwise)."""
    with open(src or path) as f:
        text = fn(f.read())
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, 'w') as f:
        f.write(text)


def _once(text, pattern, repl, what, path, flags=0):
    """Replace the one match of `pattern`; already done (`repl`'s marker
    present) is fine; anything else stops the check."""
    new, n = re.subn(pattern, repl, text, count=1, flags=flags)
    if n != 1:
        die('%s: %s: the text this edit expects is not there (another RT-Thread version?)' % (path, what))
    return new


MARK = 'tests/qemu (issue 31)'
# The load run's edits (issue 37), on its firmware only.
SOAK_MARK = 'tests/qemu (issue 37)'


def patch_tree(rtt):
    """The RT-Thread copy: lwIP's MEMP_OVERFLOW_CHECK 0, and lwIP's TCP
    sanity checks off: with a pbuf pool of 2 (1500-byte pbufs) the port's
    TCP_WND (RT_LWIP_TCP_WND, 8196) is more than the pool holds, which
    lwIP 2.1.2's init.c refuses at compile time (#error) unless told."""
    path = os.path.join(rtt, LWIPOPTS)

    def fn(t):
        if MARK in t:
            return t
        return _once(t, r'#define MEMP_OVERFLOW_CHECK\s+1\n',
                     '#define MEMP_OVERFLOW_CHECK         0 /* %s: 1 costs RAM the lm3s board has not */\n'
                     '#define LWIP_DISABLE_TCP_SANITY_CHECKS 1 /* %s: a pbuf pool of 2, TCP_WND 8196 */\n'
                     % (MARK, MARK),
                     'MEMP_OVERFLOW_CHECK 0', path)
    _edit(path, fn)


def patch_bsp(template, bsp, soak=False):
    """The BSP copy: linker script, NIC after lwIP, link up; each file made
    from the template's (the unpatched BSP's) text. soak: the load run's
    firmware (issue 37): DFS with a RAM file system at "/" instead of the
    SD card (see SOAK_RAMFS_BYTES)."""
    def tpl(path):
        return os.path.join(template, os.path.relpath(path, bsp))
    ld = os.path.join(bsp, 'lm3s_rom.ld')

    def ld_fn(t):
        if MARK in t:
            return t
        return _once(t, r'(\n([ \t]*)\*\(\.bss\)\n)', r'\1\2*(.bss.*)  /* %s: -fdata-sections */\n' % MARK,
                     '*(.bss.*) in .bss', ld)
    _edit(ld, ld_fn, tpl(ld))

    startup = os.path.join(bsp, 'applications', 'startup.c')

    def startup_fn(t):
        if MARK in t:
            return t
        t = _once(t, r'\n[ \t]*/\* register ethernetif device \*/\n[ \t]*rt_hw_luminaryif_init\(\);\n',
                  '\n    /* %s: the NIC is registered by the init thread, after lwip_sys_init() */\n' % MARK,
                  'rt_hw_luminaryif_init() out of rtthread_startup()', startup)
        # The soft-timer thread the BSP's configuration asks for
        # (RT_USING_TIMER_SOFT) but its rtthread_startup() never starts:
        # without it the soft-timer list and semaphore stay zero, and the
        # SysTick's rt_timer_check() takes the zeroed list's NULL for a
        # timer whose timeout is the word at flash 0x14 (the BusFault
        # vector: 111552 ticks, 18 min 35 s, in the load run's firmware),
        # and at that tick releases the never-made semaphore: the kernel's
        # assertion in rt_sem_release, in the interrupt, and the board
        # hangs. Started where RT-Thread's own rtthread_startup
        # (components.c) starts it.
        t = _once(t, r'(\n([ \t]*)/\* init idle thread \*/\n)',
                  r'\n#ifdef RT_USING_TIMER_SOFT /* %s: the BSP never starts it */\n'
                  r'\2rt_system_timer_thread_init();\n'
                  r'#endif\n\1' % SOAK_MARK,
                  'rt_system_timer_thread_init() before rt_thread_idle_init()', startup)
        if soak:
            # No SD card: the RAM file system needs no block device, and
            # rt_hw_sdcard_init() spins on QEMU's SSI.
            t = _once(t, r'\n#ifdef RT_USING_DFS\n([ \t]*/\* init sd card device \*/\n[ \t]*rt_hw_sdcard_init\(\);\n)',
                      r'\n#if defined(RT_USING_DFS) && defined(RT_USING_DFS_ELMFAT) /* %s */\n\1' % SOAK_MARK,
                      'rt_hw_sdcard_init() only with elm FAT', startup)
        return t
    _edit(startup, startup_fn, tpl(startup))

    app = os.path.join(bsp, 'applications', 'application.c')

    def app_fn(t):
        if MARK in t:
            return t
        if soak:
            # The load run's schedule file on a RAM file system at "/"
            # (its pool a static array: the heap's figures stay the
            # library's), mounted where the BSP would mount the card;
            # elm's header only with elm.
            t = _once(t, r'\n#include <dfs_elm.h>\n',
                      '\n#ifdef RT_USING_DFS_ELMFAT /* %s */\n#include <dfs_elm.h>\n#endif\n' % SOAK_MARK,
                      'dfs_elm.h only with elm FAT', app)
            t = _once(t, r'(\n([ \t]*)dfs_init\(\);\n)',
                      r'\1#ifdef RT_USING_DFS_RAMFS /* %s: "/" on a RAM file system */\n'
                      r'\2{\n'
                      r'\2    extern int dfs_ramfs_init(void);\n'
                      r'\2    extern struct dfs_ramfs *dfs_ramfs_create(rt_uint8_t *pool, rt_size_t size);\n'
                      r'\2    static rt_uint8_t ramfs_pool[%d];\n'
                      r'\2    dfs_ramfs_init();\n'
                      r'\2    if (dfs_mount(RT_NULL, "/", "ram", 0, dfs_ramfs_create(ramfs_pool, sizeof(ramfs_pool))) == 0)\n'
                      r'\2        rt_kprintf("RAM file system of %%d bytes mounted at /\\n", (int)sizeof(ramfs_pool));\n'
                      r'\2    else\n'
                      r'\2        rt_kprintf("RAM file system: mount failed\\n");\n'
                      r'\2}\n'
                      r'#endif\n' % (SOAK_MARK, SOAK_RAMFS_BYTES),
                      'a RAM file system mounted after dfs_init()', app)
        return _once(t, r'(\n([ \t]*)lwip_sys_init\(\);\n)',
                     r"\1\2{ /* %s: the NIC after lwIP's tcpip thread */\n"
                     r'\2    extern int rt_hw_luminaryif_init(void);\n'
                     r'\2    rt_hw_luminaryif_init();\n'
                     r'\2}\n' % MARK,
                     'rt_hw_luminaryif_init() after lwip_sys_init()', app)
    _edit(app, app_fn, tpl(app))

    # C optimised: the BSP's rtconfig.py builds C with -O0 (BUILD 'debug'),
    # and lwIP alone then takes 105 KB: the firmware overflows the 256 KB
    # flash by about 10 KB. 'release' is -O2.
    rc = os.path.join(bsp, 'rtconfig.py')

    def rc_fn(t):
        if MARK in t:
            return t
        return _once(t, r"\nBUILD = 'debug'\n", "\nBUILD = 'release'  # %s: -O0 does not fit 256 KB\n" % MARK,
                     "BUILD = 'release'", rc)
    _edit(rc, rc_fn, tpl(rc))

    nic = os.path.join(bsp, 'drivers', 'luminaryif.c')

    def nic_fn(t):
        if MARK in t:
            return t
        return _once(t, r'(\n([ \t]*)result = eth_device_init\(&\(luminaryif_dev->parent\), "E0"\);\n)',
                     r"\1\2/* %s: QEMU's stellaris_enet has no PHY: the link is up */\n"
                     r'\2if (result == RT_EOK)\n'
                     r'\2    eth_device_linkchange(&(luminaryif_dev->parent), RT_TRUE);\n' % MARK,
                     'the link declared up after eth_device_init()', nic)
    _edit(nic, nic_fn, tpl(nic))


# The load run's firmware (issue 37): the schedule keeps its entries in a
# file (PKG_AGENT_SCHEDULE depends on RT_USING_DFS, and the glue stops the
# build without DFS_USING_POSIX). This board's card needs the SSI, which
# QEMU's machine does not give, so that firmware has DFS v1 with a RAM file
# system at "/" (a static pool of this many bytes: the schedule file, its
# .tmp while it is replaced, ramfs's own entries), elm FAT and devfs off.
SOAK_RAMFS_BYTES = 1536
# What the load run's firmware turns on of MUST_STAY_OFF.
SOAK_TURNS_ON = ('RT_USING_DFS',)

# The request deadline and the answer-text cap of the lm3s firmwares (see
# overrides); drive.py reads the values back from each BSP's rtconfig.h.
REQUEST_TIMEOUT_MS = 30000
MAX_CONTENT_LEN = 65536


# The small-board profile (PKG_AGENT_PROFILE_SMALL, issue 31): the C glue
# that gives a hand-written rtconfig.h its defaults, as
# `#define NAME AGENT_SMALL_OR(small, normal)` under `#ifndef NAME` (the
# path inside the package; tests/scons checks that packages/Kconfig has the
# same pairs).
GLUE_CONFIG = os.path.join('glue', 'agent_board_config.c')


def glue_defaults(agent_dir):
    """{option: (small-profile default, default)} of every PKG_AGENT_*
    option the C glue defaults when rtconfig.h does not define it (equal
    when the profile does not change it), read from the package's
    glue/agent_board_config.c."""
    path = os.path.join(agent_dir, GLUE_CONFIG)
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        die('%s: %s (the glue\'s defaults of the small profile)' % (path, e))
    out = {}
    for m in re.finditer(r'^#ifndef\s+(PKG_AGENT_\w+)\s*\n#define\s+\1\s+(.+?)\s*$', text, re.M):
        v = m.group(2)
        s = re.match(r'AGENT_SMALL_OR\((\d+),\s*(\d+)\)$', v)
        if s:
            out[m.group(1)] = (int(s.group(1)), int(s.group(2)))
        elif re.match(r'\d+$', v):
            out[m.group(1)] = (int(v), int(v))
    return out


def profile_options(agent_dir):
    """{option: value} the small profile sets: the glue's AGENT_SMALL_OR
    pairs (the profile's options a hand-written rtconfig.h leaves out)."""
    opts = {k: s for k, (s, n) in glue_defaults(agent_dir).items() if s != n}
    if len(opts) < 8:
        die('%s: only %d options with a small-profile default (AGENT_SMALL_OR); the check expects the 8 of '
            'docs/small-boards.md' % (os.path.join(agent_dir, GLUE_CONFIG), len(opts)))
    return opts


# .config overrides of the lm3s firmware (None: off). The package with the
# old feature set, the agent's settings as the A9 CLI firmware has them.
def overrides(tls_none, tls_others, prebuilt='', name_max='', profile='', agent_dir='', soak=False):
    """prebuilt: PKG_AGENT_PREBUILT_LIB (the second firmware links the
    first one's library); name_max: RT_NAME_MAX instead of the BSP's 12 (8,
    as many BSPs have it); profile 'small': PKG_AGENT_PROFILE_SMALL, and
    none of the options the profile sets (agent_dir: the package, whose
    glue names them): the firmware gets the glue's small-profile values, as
    a hand-written rtconfig.h that defines only PKG_AGENT_PROFILE_SMALL
    does (`layout.py strip-profile` takes them out of the generated
    rtconfig.h). The request deadline stays: the profile does not set it."""
    o = {
        # The board.
        'RT_USING_DFS': None,
        'IDLE_THREAD_STACK_SIZE': '512',
        # lwIP 2.1.2, tuned for 64 KB.
        'RT_USING_LWIP141': None,
        'RT_USING_LWIP212': 'y',
        'RT_LWIP_SNMP': None,
        'RT_LWIP_PBUF_NUM': '2',
        # The package and its dependencies.
        'PKG_USING_CJSON': 'y',
        'PKG_USING_WEBCLIENT': 'y',
        'WEBCLIENT_NOT_USE_TLS': 'y',
        'WEBCLIENT_USING_MBED_TLS': None,
        'PKG_USING_AGENT': 'y',
        # An IP literal: restrict=on gives the guest no DNS.
        'PKG_AGENT_API_URL': '"http://10.0.2.100/v1/chat/completions"',
        'PKG_AGENT_API_KEY': '"sk-qemu-check"',
        'PKG_AGENT_MODEL_NAME': '"scripted-arith"',
        'PKG_AGENT_HTTP_TIMEOUT_MS': '15000',
        # The stall step (drive.py) waits for the request deadline: 30 s
        # instead of the menu's 120 s, still above a normal request here
        # (the 10 s first byte, the 429's 2 s wait).
        'PKG_AGENT_REQUEST_TIMEOUT_MS': str(REQUEST_TIMEOUT_MS),
        # A cap, not a buffer (memory grows with what arrives): the menu's
        # largest, above this board's heap, so an answer larger than the
        # free heap meets the library's out-of-memory path, not the cap
        # (the default 8192 would cut it first).
        'PKG_AGENT_MAX_CONTENT_LEN': str(MAX_CONTENT_LEN),
        'PKG_AGENT_CLI_CHANNEL': 'y',
        'PKG_AGENT_DEBUG_CHANNEL': None,
        'PKG_AGENT_WEBNET_CHANNEL': None,
        'PKG_AGENT_MULTIMODAL_DISABLE': 'y',
        'PKG_AGENT_PREBUILT_LIB': '"%s"' % prebuilt,
    }
    if soak:
        # DFS v1 and a RAM file system (SOAK_RAMFS_BYTES); the schedule
        # itself is set by layout.py.
        o.update({
            'RT_USING_DFS': 'y',
            'DFS_USING_POSIX': 'y',
            # No working directory: the shell's prompt would read it (a
            # lock dfs_init() makes) before the init thread has run
            # dfs_init(), and its code is flash this board has not.
            'DFS_USING_WORKDIR': None,
            'RT_USING_DFS_V1': 'y',
            'RT_USING_DFS_ELMFAT': None,
            'RT_USING_DFS_DEVFS': None,
            'RT_USING_DFS_RAMFS': 'y',
            'DFS_FD_MAX': '4',
            'DFS_FILESYSTEMS_MAX': '1',
        })
    if name_max:
        o['RT_NAME_MAX'] = str(int(name_max))
    if profile == 'small':
        o['PKG_AGENT_PROFILE_SMALL'] = 'y'
        # The profile's own cap (2048): an answer larger than the heap is
        # cut with a note before memory runs out (drive.py checks that).
        for k in profile_options(agent_dir):
            o.pop(k, None)
    elif profile:
        die('unknown profile %r' % profile)
    if tls_none:
        o[tls_none] = 'y'
        for s in tls_others:
            o[s] = None
    return o


# Symbols of the stock .config recomputed by Kconfig from the choices above
# (written back by `scons --pyconfig-silent`): dropped, not overridden.
DROP = ('RT_USING_LWIP_VER_NUM',)
# What the check keeps from the BSP on purpose (see the docstring): `check`
# fails when something turned them on.
MUST_STAY_OFF = ('RT_USING_COMPONENTS_INIT', 'RT_KLIBC_USING_VSNPRINTF_STANDARD', 'RT_USING_DFS',
                 'RT_USING_SAL', 'RT_USING_POSIX_STDIO')

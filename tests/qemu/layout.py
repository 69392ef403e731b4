#!/usr/bin/env python3
"""Lays out an RT-Thread BSP with this package the way RT-Thread's env tool
would, and writes its .config; used by tests/qemu/run.sh (std lib only).

  layout.py tree   RTT_ROOT WORK_RTT [--board a9|lm3s]
                                               copy of the RT-Thread tree
                                               (lm3s: bsp/lm3s8962 as the
                                               template, lwIP's port patched:
                                               tests/qemu/lm3s.py)
  layout.py bsp    WORK_RTT NAME REPO CJSON WEBCLIENT [--webnet WEBNET]
                   [--mbedtls MBEDTLS --user-ca PEM] [--board a9|lm3s]
                   [--pahomqtt PAHOMQTT --upstream-agent UPSTREAM]
                   [--soak-tool C_FILE: the load run's tool put into
                    the package's copy and registered there]
                                               bsp/NAME from qemu-vexpress-a9,
                                               packages/ laid out (WebNet too
                                               with --webnet; the mbedtls
                                               package with --mbedtls, PEM
                                               put into its certs/ folder;
                                               --pahomqtt: paho-mqtt, the C
                                               package's MQTT toolset and
                                               tool_func.c from UPSTREAM
                                               over the package's copy,
                                               tests/qemu/upstream_tools.py)
  layout.py config BSP_DIR --channel cli|debug|webnet --posix-stdio on|off
                   [--prebuilt LIB] [--web-token TOKEN] [--mcp-token TOKEN]
                   [--mcp-servers URLS] [--tls-url URL] [--mqtt-broker URL]
                   [--abilities] [--soak [--soak-web TOKEN]]
                                               .config overrides (--mcp-token:
                                               the MCP server on, with that
                                               bearer token; --mcp-servers:
                                               the MCP client on, with that
                                               PKG_AGENT_MCP_SERVERS;
                                               --tls-url: HTTPS through
                                               mbedTLS, that
                                               PKG_AGENT_API_URL;
                                               --mqtt-broker: the MQTT
                                               toolset, paho-mqtt and the
                                               audio driver on, that
                                               broker URL; --abilities:
                                               the notes, the schedule
                                               and the summary on;
                                               --soak: the load run's
                                               settings, tests/qemu/soak.py)
                   [--board lm3s: the lm3s firmware's .config,
                    tests/qemu/lm3s.py; --channel cli --posix-stdio off;
                    --name-max N: RT_NAME_MAX N; --profile small:
                    PKG_AGENT_PROFILE_SMALL, none of its options]
  layout.py check  BSP_DIR (the same options as config)
                                               rtconfig.h has what we asked
  layout.py strip-profile BSP_DIR              rtconfig.h without the options
                                               PKG_AGENT_PROFILE_SMALL sets,
                                               as a hand-written one (the
                                               glue's defaults apply)

RTT_ROOT itself is never written to: everything happens in the copy.
"""
import argparse
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True  # nothing written into the repo
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lm3s  # noqa: E402
import upstream_tools  # noqa: E402

TEMPLATE_BSP = os.path.join('bsp', 'qemu-vexpress-a9')
# Package folders as the env tool names them (<name>-<version>).
AGENT_DIR = 'Agent-latest'
CJSON_DIR = 'cJSON-v1.7.17'
WEBCLIENT_DIR = 'webclient-v2.3.0'
WEBNET_DIR = 'webnet-v2.0.3'
MBEDTLS_DIR = 'mbedtls-v2.28.1'
# What the mbedtls package's SConscript writes into its own folder at every
# build: kept as the build left them (else every run would rewrite them and
# SCons would rebuild what depends on them).
MBEDTLS_GENERATED = (os.path.join('ports', 'src', 'tls_certificate.c'),
                     os.path.join('mbedtls', 'include', 'mbedtls', 'config.h'))
# The test root CA's file name in the package's certs/ folder (the
# PKG_USING_MBEDTLS_USER_CERTS route: the SConscript appends every PEM file
# of certs/ to mbedtls_root_certificate).
USER_CA_NAME = 'qemu-test-root-ca.pem'
# The TLS firmware's request deadline and read timeout (short, so that a
# fault ends fast): tests/qemu/drive.py waits against the same figures.
TLS_REQUEST_TIMEOUT_MS = 20000
TLS_HTTP_TIMEOUT_MS = 8000
# PKG_AGENT_TLS_SEED_FILE of the TLS firmwares (tests/qemu/drive.py
# TLS_SEED_FILE says the same): the Kconfig's default.
TLS_SEED_FILE = '/.agent_seed'
# MBEDTLS_SSL_MAX_CONTENT_LEN of the TLS firmware: a whole TLS record as
# servers send them (16384; the index entry's default is 3584).
TLS_MAX_CONTENT_LEN = 16384
# The abilities firmware's files (issue 28; the Kconfig defaults, named so
# that tests/qemu/abilities.py reads the same paths from the image).
ABILITIES_NOTES_FILE = '/agent_notes.txt'
ABILITIES_NOTES_MAX = 2048
ABILITIES_SCHEDULE_FILE = '/agent_sched.txt'
# The load run's firmware (issue 37, tests/qemu/soak.py): the request
# deadline answers the scripted server's 20 s stall with an error reply, and
# the read timeout stays below it (the stall sends an SSE comment every 2 s,
# so only the deadline ends it).
SOAK_REQUEST_TIMEOUT_MS = 12000
SOAK_HTTP_TIMEOUT_MS = 8000
# Where the load run's tool goes in the work dir's copy of the package (the
# SConscript compiles every .c under src/tools/), and the line added to
# that copy's tool_func.c after "your tools go here".
SOAK_TOOL_PATH = os.path.join('src', 'tools', 'soak', 'tool_board_mem.c')
SOAK_TOOLS_MARK = '/* ========== your tools go here ========== */'
SOAK_TOOLS_CALL = ('    { extern void soak_tools_register(void); soak_tools_register(); }'
                   ' /* tests/qemu (issue 37): the load run\'s board_mem tool */\n')
# Never copied from the repo into the package folder.
SKIP_NAMES = {'.git', 'target', '__pycache__', 'corpus', 'artifacts'}
SKIP_SUFFIX = ('.o', '.pyc')


def die(msg):
    sys.stderr.write('qemu check: error: %s\n' % msg)
    sys.exit(1)


def same_content(a, b):
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
    except OSError:
        return False
    with open(a, 'rb') as fa, open(b, 'rb') as fb:
        return fa.read() == fb.read()


def sync_dir(src, dst, skip_top=(), keep=(), overlay=None):
    """Make dst a copy of src: files whose content changed are copied (with
    a new mtime, so cargo and SCons rebuild exactly what changed), removed
    files deleted. Build outputs (*.o) in dst are left alone, and so are the
    files named in `keep` (paths relative to dst) once they exist.
    overlay: {path relative to dst: text} written instead of (or besides)
    src's file of that path, only when the content differs (the load run's
    tool and its registration, in the work dir's copy only)."""
    os.makedirs(dst, exist_ok=True)
    keep = {os.path.normpath(k) for k in keep}
    overlay = {os.path.normpath(k): v for k, v in (overlay or {}).items()}
    wanted = set()
    for rel, text in overlay.items():
        wanted.add(rel)
        parts = rel.split(os.sep)
        for i in range(1, len(parts)):
            wanted.add(os.path.join(*parts[:i]))
        os.makedirs(os.path.dirname(os.path.join(dst, rel)) or dst, exist_ok=True)
        write_if_changed(os.path.join(dst, rel), text)
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        dirs[:] = [d for d in dirs if d not in SKIP_NAMES and not (rel == '.' and d in skip_top)]
        for d in dirs:
            os.makedirs(os.path.join(dst, rel, d), exist_ok=True)
            wanted.add(os.path.normpath(os.path.join(rel, d)))
        for f in files:
            if f.endswith(SKIP_SUFFIX) or (rel == '.' and f in skip_top):
                continue
            s = os.path.join(root, f)
            d = os.path.normpath(os.path.join(dst, rel, f))
            wanted.add(os.path.normpath(os.path.join(rel, f)))
            if os.path.normpath(os.path.join(rel, f)) in overlay:
                continue
            if os.path.islink(s):
                s = os.path.realpath(s)
                if not os.path.isfile(s):
                    continue
            if same_content(s, d) or (os.path.normpath(os.path.join(rel, f)) in keep and os.path.exists(d)):
                continue
            # A fresh mtime, not the source's: cargo decides staleness by
            # mtime, and sources of another commit can be older than the
            # last build.
            shutil.copyfile(s, d)
            shutil.copymode(s, d)
    for root, dirs, files in os.walk(dst, topdown=False):
        rel = os.path.relpath(root, dst)
        top = os.path.normpath(rel).split(os.sep)[0]
        if top in skip_top or top in SKIP_NAMES:
            continue
        for f in files:
            if rel == '.' and f in skip_top:
                continue
            p = os.path.normpath(os.path.join(rel, f))
            if p not in wanted and not f.endswith(SKIP_SUFFIX):
                os.remove(os.path.join(root, f))
        for d in dirs:
            p = os.path.normpath(os.path.join(rel, d))
            full = os.path.join(root, d)
            if p not in wanted and d not in SKIP_NAMES and not (rel == '.' and d in skip_top) \
                    and not os.listdir(full):
                os.rmdir(full)


def cmd_tree(a):
    src = os.path.abspath(a.rtt_root)
    template_bsp = lm3s.BSP if a.board == 'lm3s' else TEMPLATE_BSP
    for need in ('src', 'include', 'components', 'libcpu', 'tools', 'Kconfig', template_bsp):
        if not os.path.exists(os.path.join(src, need)):
            die('RTT_ROOT=%s has no %s: it must be an RT-Thread 5.x source tree (see tests/qemu/README.md)'
                % (src, need))
    if not os.path.isdir(os.path.join(src, 'examples')):
        die('RTT_ROOT=%s has no examples/: `scons --pyconfig-silent` reads examples/Kconfig' % src)
    dst = os.path.abspath(a.work_rtt)
    # All of the tree but the BSPs (a full tree has hundreds of them); the
    # template BSP is copied by `bsp`.
    skip = [n for n in os.listdir(src) if n in ('bsp', 'documentation', '.git', '.github')]
    sync_dir(src, dst, skip_top=skip)
    # The lm3s board's tree patches lwIP's port (its own copy of RT-Thread:
    # the A9 firmwares' tree is another one).
    if a.board == 'lm3s':
        lm3s.patch_tree(dst)
    os.makedirs(os.path.join(dst, 'bsp'), exist_ok=True)
    sync_dir(os.path.join(src, template_bsp), os.path.join(dst, 'bsp', '.template'))


CJSON_KCONFIG = '''
menuconfig PKG_USING_CJSON
    bool "cJSON: Ultralightweight JSON parser in ANSI C"
    default n

if PKG_USING_CJSON
    config PKG_CJSON_PATH
        string
        default "/packages/iot/cJSON"

    config PKG_CJSON_VER
        string
        default "v1.7.17"
endif
'''

WEBCLIENT_KCONFIG = '''
menuconfig PKG_USING_WEBCLIENT
    bool "WebClient: A HTTP/HTTPS Client for RT-Thread"
    default n
    select SAL_USING_POSIX if RT_USING_SAL

if PKG_USING_WEBCLIENT
    config PKG_WEBCLIENT_PATH
        string
        default "/packages/iot/webclient"

    config WEBCLIENT_DEBUG
        bool "Enable debug log output"
        default n

    config WEBCLIENT_USING_SAMPLES
        bool "Enable webclient GET/POST samples"
        default n

    config WEBCLIENT_USING_FILE_DOWMLOAD
        bool "Enable file download feature support"
        select RT_USING_DFS
        default n

    config WEBCLIENT_USING_SAL_TLS
        bool
        default n

    choice
        prompt "Select TLS mode"
        default WEBCLIENT_NOT_USE_TLS

        config WEBCLIENT_NOT_USE_TLS
            bool "Not support"

        config WEBCLIENT_USING_MBED_TLS
            bool "MbedTLS support"
            select PKG_USING_MBEDTLS
    endchoice

    config PKG_WEBCLIENT_VER
        string
        default "v2.3.0"
endif
'''

# WebNet's index entry (RT-Thread/packages, iot/webnet; the package ships
# none): the symbols its sources read (webnet.c: WEBNET_PORT, WEBNET_ROOT,
# WEBNET_CONN_MAX; wn_request.c/wn_module.c: WEBNET_CACHE_LEVEL; SConscript:
# WEBNET_USING_<module>), with the index's defaults. Only the modules the
# agent needs are offered; the agent's Kconfig selects WEBNET_USING_CGI.
WEBNET_KCONFIG = '''
menuconfig PKG_USING_WEBNET
    bool "WebNet: A HTTP Server for RT-Thread"
    default n

if PKG_USING_WEBNET
    config PKG_WEBNET_PATH
        string
        default "/packages/iot/webnet"

    config WEBNET_PORT
        int "Server listen port"
        default 80
        range 0 65535

    config WEBNET_CONN_MAX
        int "Maximum number of server connections"
        default 16
        range 1 100

    config WEBNET_ROOT
        string "Server root directory"
        default "/webnet"

    config WEBNET_USING_CGI
        bool "CGI: Enable Common Gateway Interface support"
        default n

    config WEBNET_USING_LOG
        bool "LOG: Enable output log support"
        default n

    config WEBNET_CACHE_LEVEL
        int "Cache level (0: off)"
        default 0

    config PKG_WEBNET_VER
        string
        default "v2.0.3"
endif
'''

# The mbedtls package's index entry (RT-Thread/packages, security/mbedtls;
# the package ships none), written here from what the package reads: its
# SConscript (PKG_USING_MBEDTLS for the group; PKG_USING_MBEDTLS_USER_CERTS,
# _USE_ALL_CERTS, _EXAMPLE and one PKG_USING_MBEDTLS_<NAME>_ROOT_CA per file
# of certs/default/ for the generated ports/src/tls_certificate.c) and
# ports/inc/tls_config.h, which includes <rtthread.h> and so rtconfig.h:
# PKG_USING_MBEDTLS_DEBUG, and the mbedTLS options the index's menu sets
# in rtconfig.h and tls_config.h leaves commented out
# (MBEDTLS_AES_ROM_TABLES, MBEDTLS_ECP_WINDOW_SIZE,
# MBEDTLS_SSL_MAX_CONTENT_LEN; mbedtls/ssl.h then derives
# MBEDTLS_SSL_IN_CONTENT_LEN and _OUT_CONTENT_LEN from it). The index's
# menu offers 3584 bytes as the fragment length (the package README's
# figure); the agent's menu asks for 16384, and the TLS firmware sets it.
MBEDTLS_KCONFIG = '''
menuconfig PKG_USING_MBEDTLS
    bool "mbedtls package"
    default n

if PKG_USING_MBEDTLS
    config PKG_MBEDTLS_PATH
        string
        default "/packages/security/mbedtls"

    menu "Select Root Certificate"
        config PKG_USING_MBEDTLS_USE_ALL_CERTS
            bool "every root CA of certs/default"
            default n

        config PKG_USING_MBEDTLS_USER_CERTS
            bool "the root CAs put in certs/"
            default n

        config PKG_USING_MBEDTLS_THAWTE_ROOT_CA
            bool "Thawte root CA"
            default n

        config PKG_USING_MBEDTLS_VERSIGN_PBULIC_ROOT_CA
            bool "Verisign Public root CA"
            default n

        config PKG_USING_MBEDTLS_VERSIGN_UNIVERSAL_ROOT_CA
            bool "Verisign Universal root CA"
            default n

        config PKG_USING_MBEDTLS_GEOTRUST_ROOT_CA
            bool "Geotrust root CA"
            default n

        config PKG_USING_MBEDTLS_DIGICERT_ROOT_CA
            bool "Digicert root CA"
            default n

        config PKG_USING_MBEDTLS_GODADDY_ROOT_CA
            bool "Godaddy root CA"
            default n

        config PKG_USING_MBEDTLS_COMODOR_ROOT_CA
            bool "Comodor root CA"
            default n

        config PKG_USING_MBEDTLS_DST_ROOT_CA
            bool "DigitalSignatureTrust root CA"
            default n

        config PKG_USING_MBEDTLS_CLOBALSIGN_ROOT_CA
            bool "GlobalSign root CA"
            default n

        config PKG_USING_MBEDTLS_ENTRUST_ROOT_CA
            bool "Entrust root CA"
            default n

        config PKG_USING_MBEDTLS_CERTUM_TRUSTED_NETWORK_ROOT_CA
            bool "Certum Trusted Network root CA"
            default n

        config PKG_USING_MBEDTLS_AMAZON_ROOT_CA
            bool "Amazon root CA"
            default n
    endmenu

    config MBEDTLS_AES_ROM_TABLES
        bool "MBEDTLS_AES_ROM_TABLES"
        default y

    config MBEDTLS_ECP_WINDOW_SIZE
        int "MBEDTLS_ECP_WINDOW_SIZE"
        default 2

    config MBEDTLS_SSL_MAX_CONTENT_LEN
        int "MBEDTLS_SSL_MAX_CONTENT_LEN"
        default 3584

    config PKG_USING_MBEDTLS_EXAMPLE
        bool "the package example"
        default n

    config PKG_USING_MBEDTLS_DEBUG
        bool "debug output"
        default n

    config PKG_MBEDTLS_VER
        string
        default "v2.28.1"
endif
'''

PACKAGES_SCONSCRIPT = '''import os
from building import *

objs = []
cwd  = GetCurrentDir()

for item in sorted(os.listdir(cwd)):
    if os.path.isfile(os.path.join(cwd, item, 'SConscript')):
        objs = objs + SConscript(os.path.join(item, 'SConscript'))

Return('objs')
'''


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, 'w') as f:
        f.write(text)


def cmd_bsp(a):
    rtt = os.path.abspath(a.work_rtt)
    bsp = os.path.join(rtt, 'bsp', a.name)
    template = os.path.join(rtt, 'bsp', '.template')
    # Keep build outputs across runs: only sources are synced.
    sync_dir(template, bsp, skip_top=['packages', 'build', 'rtthread.elf', 'rtthread.bin', 'rtthread.map',
                                      '.config', '.config.old', 'rtconfig.h', '.sconsign.dblite', 'sd.bin',
                                      'cconfig.h', 'drivers', lm3s.ELF, lm3s.MAP])
    # drivers/ gets automac.h written by rtconfig.py: sync without deleting it.
    _sync_keep(os.path.join(template, 'drivers'), os.path.join(bsp, 'drivers'))
    for f in ('.config', 'rtconfig.h'):
        if not os.path.exists(os.path.join(bsp, f)):
            shutil.copy2(os.path.join(template, f), os.path.join(bsp, f))
    # The BSP's stock .config, untouched, for `config` to start from.
    shutil.copy2(os.path.join(template, '.config'), os.path.join(bsp, '.config.stock'))
    if a.board == 'lm3s':
        # What the board needs on QEMU's lm3s6965evb, to this copy only.
        lm3s.patch_bsp(template, bsp, soak=bool(a.soak_tool))

    pkgs = os.path.join(bsp, 'packages')
    os.makedirs(pkgs, exist_ok=True)
    sources = [(a.repo, AGENT_DIR, 'Cargo.toml'), (a.cjson, CJSON_DIR, 'cJSON.c'),
               (a.webclient, WEBCLIENT_DIR, os.path.join('src', 'webclient.c'))]
    if a.webnet:
        sources.append((a.webnet, WEBNET_DIR, os.path.join('src', 'webnet.c')))
    if a.mbedtls:
        sources.append((a.mbedtls, MBEDTLS_DIR, os.path.join('ports', 'inc', 'tls_config.h')))
    for src, name, marker in sources:
        if not os.path.isfile(os.path.join(src, marker)):
            die('%s has no %s' % (src, marker))
        sync_dir(os.path.abspath(src), os.path.join(pkgs, name),
                 keep=MBEDTLS_GENERATED if name == MBEDTLS_DIR else (),
                 overlay=soak_overlay(src, a.soak_tool) if name == AGENT_DIR and a.soak_tool else None)
    if a.pahomqtt:
        # issue 29: paho-mqtt, and the C package's tool files over the
        # package's copy (tests/qemu/upstream_tools.py).
        if not a.upstream_agent:
            die('--pahomqtt needs --upstream-agent (the C package\'s files)')
        upstream_tools.lay_out(bsp, a.pahomqtt, a.upstream_agent, sync_dir)
    if a.mbedtls:
        # The private-CA route of the package: a PEM root in its certs/
        # folder, built in with PKG_USING_MBEDTLS_USER_CERTS.
        if not a.user_ca:
            die('--mbedtls needs --user-ca (the test root CA)')
        with open(a.user_ca) as f:
            pem = f.read()
        if not pem.startswith('-----BEGIN CERTIFICATE'):
            die('%s is not a PEM certificate' % a.user_ca)
        write_if_changed(os.path.join(pkgs, MBEDTLS_DIR, 'certs', USER_CA_NAME), pem)
    # What the env tool writes: packages/SConscript building every package,
    # packages/Kconfig sourcing the index entries (webclient and cJSON ship
    # none; the package index normally provides them: minimal ones here).
    write_if_changed(os.path.join(pkgs, 'SConscript'), PACKAGES_SCONSCRIPT)
    write_if_changed(os.path.join(pkgs, 'Kconfig'),
                     'menu "RT-Thread online packages (laid out by tests/qemu/run.sh)"\n'
                     + CJSON_KCONFIG + WEBCLIENT_KCONFIG + (WEBNET_KCONFIG if a.webnet else '')
                     + (MBEDTLS_KCONFIG if a.mbedtls else '')
                     + (upstream_tools.kconfig() if a.pahomqtt else '')
                     + '\nsource "$PKGS_DIR/%s/packages/Kconfig"\nendmenu\n' % AGENT_DIR)
    print(bsp)


def soak_overlay(agent_src, tool):
    """The load run's files in the work dir's copy of the package: its tool
    (tests/qemu/soak/tool_board_mem.c) and the package's tool_func.c with
    one call registering it. The package itself is not changed."""
    with open(tool) as f:
        tool_text = f.read()
    path = os.path.join(agent_src, 'src', 'tool_func.c')
    with open(path) as f:
        func = f.read()
    at = func.find(SOAK_TOOLS_MARK)
    if at < 0:
        die('%s has no "%s" line: the load run cannot register its tool there' % (path, SOAK_TOOLS_MARK))
    at = func.index('\n', at) + 1
    return {SOAK_TOOL_PATH: tool_text, os.path.join('src', 'tool_func.c'): func[:at] + SOAK_TOOLS_CALL + func[at:]}


def _sync_keep(src, dst):
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for f in files:
            s, d = os.path.join(root, f), os.path.join(dst, rel, f)
            if not os.path.exists(d) or int(os.stat(s).st_mtime) != int(os.stat(d).st_mtime):
                shutil.copy2(s, d)


def agent_kconfig_tls_choice(bsp):
    """(none_symbol, other_symbols) of the package's TLS choice, if it has one."""
    path = os.path.join(bsp, 'packages', AGENT_DIR, 'packages', 'Kconfig')
    with open(path) as f:
        text = f.read()
    for m in re.finditer(r'^\s*choice\b(.*?)^\s*endchoice\b', text, re.S | re.M):
        syms = re.findall(r'^\s*config\s+(\w+)', m.group(1), re.M)
        if any('TLS' in s for s in syms):
            none = [s for s in syms if re.search(r'TLS_(NONE|NO|NOT|DISABLE|OFF)\b|NO_TLS|PLAIN|HTTP_ONLY', s)]
            if not none:
                die('packages/Kconfig has a TLS choice (%s) but no "none" entry this script knows' % syms)
            return none[0], [s for s in syms if s != none[0]]
    return None, []


def overrides(a):
    if a.board == 'lm3s':
        o = lm3s.overrides(*agent_kconfig_tls_choice(a.bsp), prebuilt=a.prebuilt, name_max=a.name_max,
                           profile=a.profile, agent_dir=os.path.join(a.bsp, 'packages', AGENT_DIR), soak=a.soak)
        if a.soak:
            o.update({
                'PKG_AGENT_SCHEDULE': 'y',
                'PKG_AGENT_SCHEDULE_FILE': '"%s"' % ABILITIES_SCHEDULE_FILE,
                'PKG_AGENT_REQUEST_TIMEOUT_MS': str(SOAK_REQUEST_TIMEOUT_MS),
                'PKG_AGENT_HTTP_TIMEOUT_MS': str(SOAK_HTTP_TIMEOUT_MS),
            })
        return o
    o = {
        'BSP_DRV_EMAC': 'y',
        'RT_USING_LWIP': 'y',
        'RT_USING_SAL': 'y',
        'SAL_USING_POSIX': 'y',
        'RT_USING_NETDEV': 'y',
        'RT_USING_ULOG': 'y',
        'ULOG_LINE_BUF_SIZE': '512',
        # The SD card path (tests/qemu/sdcard.py, `run.sh --persist`): DFS
        # with elm-chan's FAT and the MMC/SD stack, under which the BSP's
        # drv_sdio.c drives QEMU's PL181 and applications/mnt.c mounts "sd"
        # at "/" (formatting it first when it holds no file system). The
        # stock .config has all three on already: named here so that
        # `layout.py check` fails if a Kconfig change ever drops one.
        'RT_USING_DFS': 'y',
        'RT_USING_DFS_ELMFAT': 'y',
        'RT_USING_SDIO': 'y',
        'RT_KLIBC_USING_VSNPRINTF_STANDARD': 'y',
        'RT_USING_POSIX_STDIO': 'y' if a.posix_stdio == 'on' else None,
        'PKG_USING_CJSON': 'y',
        'PKG_USING_WEBCLIENT': 'y',
        'WEBCLIENT_NOT_USE_TLS': 'y',
        'WEBCLIENT_USING_MBED_TLS': None,
        'PKG_USING_AGENT': 'y',
        'PKG_AGENT_API_URL': '"http://10.0.2.100/v1/chat/completions"',
        'PKG_AGENT_API_KEY': '"sk-qemu-check"',
        'PKG_AGENT_MODEL_NAME': '"scripted-arith"',
        'PKG_AGENT_HTTP_TIMEOUT_MS': '15000',
        'PKG_AGENT_CLI_CHANNEL': 'y' if a.channel == 'cli' else None,
        'PKG_AGENT_DEBUG_CHANNEL': 'y' if a.channel == 'debug' else None,
        'PKG_AGENT_WEBNET_CHANNEL': 'y' if a.channel == 'webnet' else None,
        'PKG_AGENT_MULTIMODAL_DISABLE': 'y',
        'PKG_AGENT_PREBUILT_LIB': '"%s"' % (a.prebuilt or ''),
    }
    if a.channel == 'webnet':
        # The real WebNet package (built from WEBNET_SRC) with its CGI
        # module, on the BSP's lwIP, SAL (select) and DFS (wn_module.c and
        # wn_module_cgi.c include dfs_posix.h with RT_USING_DFS: the legacy
        # header, RT_USING_LEGACY is on in the stock BSP).
        o.update({
            'PKG_USING_WEBNET': 'y',
            'WEBNET_USING_CGI': 'y',
            'WEBNET_PORT': '80',
            'WEBNET_ROOT': '"/webnet"',
            'RT_USING_DFS': 'y',
            'RT_USING_LEGACY': 'y',
            # webnet.c: "#error The lwIP tcpip thread stack size
            # (RT_LWIP_TCPTHREAD_STACKSIZE) must more than 1408"; the BSP
            # has lwIP's default, 1024.
            'RT_LWIP_TCPTHREAD_STACKSIZE': '2048',
            'PKG_AGENT_WEB_TOKEN': '"%s"' % a.web_token,
            # agent_config web-token <t> at run time (issue 30): the driver
            # changes the token on the console and back. About 1 KB of
            # flash in this firmware's table; the CLI and MCP firmwares
            # keep it off (agent-mcp minus agent-cli stays the MCP cost).
            'PKG_AGENT_MSH_EXTRAS': 'y',
        })
    if a.mcp_token:
        # The MCP server on SAL's BSD sockets over lwIP (both on above).
        # lwIP's port (components/net/lwip/port/lwipopts.h) defines
        # LWIP_SO_RCVTIMEO and LWIP_SO_SNDTIMEO 1 unless told otherwise, and
        # lwip_accept/lwip_recvfrom return EWOULDBLOCK after SO_RCVTIMEO:
        # that is how the server's thread sees a stop request, so nothing
        # here may turn them off. PKG_AGENT_MCP_PORT, _PATH, _MAX_BODY,
        # _MAX_SESSIONS keep their defaults (8000, /mcp, 4096, 4): the
        # driver's checks are written against them.
        o.update({
            'PKG_AGENT_MCP_SERVER': 'y',
            'PKG_AGENT_MCP_TOKEN': '"%s"' % a.mcp_token,
            'PKG_AGENT_MCP_PORT': '8000',
            'PKG_AGENT_MCP_MAX_BODY': '4096',
            'PKG_AGENT_MCP_MAX_SESSIONS': '4',
        })
    if a.mcp_servers:
        # The MCP client: the remote servers' tools offered next to the
        # board's own. The URL names a guest-side address that the driver's
        # second guestfwd relays to the scripted SDK server on 127.0.0.1;
        # PKG_AGENT_MCP_MAX_TOOLS and _MAX_RESPONSE keep their defaults (16,
        # 16384), more than the scripted server's three tools need.
        o.update({
            'PKG_AGENT_MCP_CLIENT': 'y',
            'PKG_AGENT_MCP_SERVERS': '"%s"' % a.mcp_servers,
        })
    if a.abilities:
        # issue 28's optional parts on the SD card (`run.sh --abilities`,
        # tests/qemu/abilities.py): the notes tools, the scheduled prompts
        # and the summary of trimmed turns (kept in the notes file), each
        # off by default. Both files in "/" (the BSP mounts the card there;
        # with its -DO_DIRECTORY=0 no folder can be made on the board).
        # The notes need DFS's POSIX file API: the stock .config has it on,
        # named so that `layout.py check` fails if it is ever dropped.
        o.update({
            'DFS_USING_POSIX': 'y',
            'PKG_AGENT_NOTES': 'y',
            'PKG_AGENT_NOTES_FILE': '"%s"' % ABILITIES_NOTES_FILE,
            'PKG_AGENT_NOTES_MAX': str(ABILITIES_NOTES_MAX),
            'PKG_AGENT_SCHEDULE': 'y',
            'PKG_AGENT_SCHEDULE_FILE': '"%s"' % ABILITIES_SCHEDULE_FILE,
            'PKG_AGENT_SUMMARY': 'y',
        })
    if a.soak:
        # issue 37's load run (tests/qemu/soak.py): the CLI channel with
        # the MCP server (--mcp-token), the notes and the schedule on the
        # SD card, a request deadline below the scripted server's 20 s
        # stall (and a read timeout below that), and lwIP's tcpip thread
        # at the 2048 bytes the MCP server's help asks for.
        o.update({
            'DFS_USING_POSIX': 'y',
            'PKG_AGENT_NOTES': 'y',
            'PKG_AGENT_NOTES_FILE': '"%s"' % ABILITIES_NOTES_FILE,
            'PKG_AGENT_NOTES_MAX': str(ABILITIES_NOTES_MAX),
            'PKG_AGENT_SCHEDULE': 'y',
            'PKG_AGENT_SCHEDULE_FILE': '"%s"' % ABILITIES_SCHEDULE_FILE,
            'PKG_AGENT_REQUEST_TIMEOUT_MS': str(SOAK_REQUEST_TIMEOUT_MS),
            'PKG_AGENT_HTTP_TIMEOUT_MS': str(SOAK_HTTP_TIMEOUT_MS),
            'RT_LWIP_TCPTHREAD_STACKSIZE': '2048',
        })
        if a.soak_web:
            # The WebNet page next to the CLI channel (the shared
            # conversation, each reply to the channel that sent its
            # message): the real WebNet package with its CGI module, as
            # the WebNet firmware has it.
            o.update({
                'PKG_AGENT_ALSO_WEBNET_CHANNEL': 'y',
                'PKG_USING_WEBNET': 'y',
                'WEBNET_USING_CGI': 'y',
                'WEBNET_PORT': '80',
                'WEBNET_ROOT': '"/webnet"',
                'RT_USING_DFS': 'y',
                'RT_USING_LEGACY': 'y',
                'PKG_AGENT_WEB_TOKEN': '"%s"' % a.soak_web,
            })
    if a.mqtt_broker:
        # issue 29: the C package's MQTT toolset on paho-mqtt, and its
        # audio driver (tests/qemu/upstream_tools.py).
        o.update(upstream_tools.overrides(a.mqtt_broker))
    if a.posix_stdio == 'off':
        o['RT_USING_POSIX_TERMIOS'] = None  # it selects RT_USING_POSIX_STDIO
    if a.channel == 'debug':
        # agent_send_message gives up sooner than the 30 s default, so the
        # stalled-request step can type cleanup_agent_entry while the
        # request is still in flight.
        o['PKG_AGENT_REPLY_TIMEOUT_MS'] = '10000'
    none, others = agent_kconfig_tls_choice(a.bsp)
    if a.tls_url:
        # HTTPS as a new user sets it up: the package's mbedTLS choice (it
        # selects PKG_USING_MBEDTLS and the DigiCert and GlobalSign roots),
        # webclient's "MbedTLS support", the test root CA through the
        # mbedtls package's user-certs route, whole 16 KB records, and a
        # short deadline so that every fault ends fast.
        if 'PKG_AGENT_TLS_MBEDTLS' not in others:
            die('packages/Kconfig has no PKG_AGENT_TLS_MBEDTLS in its TLS choice (%s)' % (others,))
        o.update({
            'PKG_AGENT_TLS_MBEDTLS': 'y',
            'WEBCLIENT_NOT_USE_TLS': None,
            'WEBCLIENT_USING_MBED_TLS': 'y',
            'PKG_USING_MBEDTLS': 'y',
            'PKG_USING_MBEDTLS_USER_CERTS': 'y',
            'PKG_USING_MBEDTLS_DIGICERT_ROOT_CA': 'y',
            'PKG_USING_MBEDTLS_CLOBALSIGN_ROOT_CA': 'y',
            'PKG_USING_MBEDTLS_USE_ALL_CERTS': None,
            'PKG_USING_MBEDTLS_EXAMPLE': None,
            'PKG_USING_MBEDTLS_DEBUG': None,
            'MBEDTLS_SSL_MAX_CONTENT_LEN': str(TLS_MAX_CONTENT_LEN),
            'PKG_AGENT_API_URL': '"%s"' % a.tls_url,
            'PKG_AGENT_REQUEST_TIMEOUT_MS': str(TLS_REQUEST_TIMEOUT_MS),
            'PKG_AGENT_HTTP_TIMEOUT_MS': str(TLS_HTTP_TIMEOUT_MS),
            # The recommended mbedTLS configuration (the default), or the
            # package's own (--mbedtls-config package: built for its flash).
            'PKG_AGENT_TLS_LEAN_MBEDTLS': 'y' if a.mbedtls_config == 'lean' else None,
            # No hardware RNG on this board: the entropy seed file, at its
            # default path, on the SD card the BSP mounts at "/" (the seed
            # step boots on one; without a card it is missing and cannot be
            # written, as a board whose file system is not there). Named so
            # that `layout.py check` fails if a Kconfig change drops it.
            'DFS_USING_POSIX': 'y',
            'PKG_AGENT_TLS_SEED_FILE': '"%s"' % TLS_SEED_FILE,
        })
        if none:
            o[none] = None
        for s in others:
            if s != 'PKG_AGENT_TLS_MBEDTLS':
                o[s] = None
    elif none:
        o[none] = 'y'
        for s in others:
            o[s] = None
    return o


def cmd_config(a):
    bsp = a.bsp
    with open(os.path.join(bsp, '.config.stock')) as f:
        lines = f.read().splitlines()
    o = overrides(a)
    drop = lm3s.DROP if a.board == 'lm3s' else ()
    if a.board == 'lm3s' and a.profile:
        # Nothing of the options the profile sets from an earlier .config.
        drop = tuple(drop) + tuple(lm3s.profile_options(os.path.join(bsp, 'packages', AGENT_DIR)))
    pat = re.compile(r'^(?:# )?CONFIG_(\w+)(?:=| is not set)')
    out = []
    for line in lines:
        m = pat.match(line)
        if m and (m.group(1) in o or m.group(1) in drop):
            continue
        out.append(line)
    for k, v in o.items():
        out.append('CONFIG_%s=%s' % (k, v) if v is not None else '# CONFIG_%s is not set' % k)
    with open(os.path.join(bsp, '.config'), 'w') as f:
        f.write('\n'.join(out) + '\n')


def cmd_strip_profile(a):
    """After `scons --pyconfig-silent`, for a firmware with
    PKG_AGENT_PROFILE_SMALL: rtconfig.h without the options the profile
    sets (Kconfig writes its defaults there), as a hand-written rtconfig.h
    that defines only PKG_AGENT_PROFILE_SMALL: the glue then gives them its
    small-profile values (glue/agent_board_config.c, AGENT_SMALL_OR).
    `scons` alone does not write rtconfig.h again."""
    path = os.path.join(a.bsp, 'rtconfig.h')
    with open(path) as f:
        h = f.read()
    if not re.search(r'^#define\s+PKG_AGENT_PROFILE_SMALL\b', h, re.M):
        die('%s does not define PKG_AGENT_PROFILE_SMALL (the Kconfig refused it?)' % path)
    opts = lm3s.profile_options(os.path.join(a.bsp, 'packages', AGENT_DIR))
    gone = []
    for k in sorted(opts):
        h, n = re.subn(r'^#define[ \t]+%s\b[^\n]*\n' % re.escape(k), '', h, flags=re.M)
        if n:
            gone.append(k)
    write_if_changed(path, h)
    print('rtconfig.h: PKG_AGENT_PROFILE_SMALL without %s (the glue\'s small-profile defaults: %s)'
          % (', '.join(gone) or 'any of its options (none were there)',
             ', '.join('%s %d' % (k[len('PKG_AGENT_'):], v) for k, v in sorted(opts.items()))))


def cmd_check(a):
    """After `scons --pyconfig-silent`: every option we set must have stuck
    (kconfiglib silently drops what a dependency forbids)."""
    with open(os.path.join(a.bsp, 'rtconfig.h')) as f:
        h = f.read()
    defined = set(re.findall(r'^#define\s+(\w+)', h, re.M))
    values = dict(re.findall(r'^#define[ \t]+(\w+)[ \t]+(.+?)[ \t]*$', h, re.M))
    bad = []
    for k, v in overrides(a).items():
        if k == 'PKG_AGENT_PREBUILT_LIB':
            if v != '""' and values.get(k) != v:
                bad.append('%s should be %s, is %s' % (k, v, values.get(k)))
            continue
        if v is None:
            if k in defined:
                bad.append('%s should be off' % k)
        elif v == 'y':
            if k not in defined:
                bad.append('%s should be on' % k)
        elif values.get(k) != v:
            bad.append('%s should be %s, is %s' % (k, v, values.get(k)))
    if a.board == 'lm3s':
        # What the lm3s check keeps as the BSP ships it (tests/qemu/lm3s.py).
        bad += ['%s should stay off (as bsp/lm3s8962 ships it)' % k for k in lm3s.MUST_STAY_OFF
                if k in defined and not (a.soak and k in lm3s.SOAK_TURNS_ON)]
    if a.board == 'lm3s' and a.profile == 'small':
        # A hand-written rtconfig.h's profile: the options left to the glue.
        bad += ['%s should be left to the small profile (not defined; `layout.py strip-profile`)' % k
                for k in sorted(lm3s.profile_options(os.path.join(a.bsp, 'packages', AGENT_DIR))) if k in defined]
    if bad:
        die('rtconfig.h of %s after `scons --pyconfig-silent` is not what .config asked for:\n  %s\n'
            '(a Kconfig dependency refused it; see %s/.config)' % (a.bsp, '\n  '.join(bad), a.bsp))
    print('rtconfig.h: ok (%s%s%s channel%s%s%s, RT_USING_POSIX_STDIO %s)'
          % ('lm3s8962 BSP, ' if a.board == 'lm3s' else '',
             'PKG_AGENT_PROFILE_SMALL and none of its options, ' if a.profile == 'small' else '', a.channel, ', MCP server' if a.mcp_token else '',
             ', MCP client of %s' % a.mcp_servers if a.mcp_servers else '',
             ', HTTPS (mbedTLS) to %s' % a.tls_url if a.tls_url else '', a.posix_stdio)
          + (' + PKG_AGENT_NOTES (%s), PKG_AGENT_SCHEDULE (%s), PKG_AGENT_SUMMARY'
             % (ABILITIES_NOTES_FILE, ABILITIES_SCHEDULE_FILE) if a.abilities else '')
          + (' + the C package\'s MQTT toolset on paho-mqtt (pipe mode), broker %s, and PKG_AGENT_DRIVER_AUDIO'
             % a.mqtt_broker if a.mqtt_broker else '')
          + (' + the load run\'s settings (schedule%s, request deadline %d ms%s)'
             % (' on a RAM file system' if a.board == 'lm3s' else ', notes, MCP server',
                SOAK_REQUEST_TIMEOUT_MS, ', the WebNet page next to the CLI' if a.soak_web else '')
             if a.soak else ''))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest='cmd', required=True)
    t = sub.add_parser('tree')
    t.add_argument('rtt_root')
    t.add_argument('work_rtt')
    t.add_argument('--board', choices=('a9', 'lm3s'), default='a9')
    b = sub.add_parser('bsp')
    for n in ('work_rtt', 'name', 'repo', 'cjson', 'webclient'):
        b.add_argument(n)
    b.add_argument('--webnet', default='')
    b.add_argument('--mbedtls', default='')
    b.add_argument('--user-ca', default='')
    b.add_argument('--pahomqtt', default='')
    b.add_argument('--upstream-agent', default='')
    b.add_argument('--board', choices=('a9', 'lm3s'), default='a9')
    b.add_argument('--soak-tool', default='', help='the load run\'s tool (tests/qemu/soak/tool_board_mem.c), put '
                   'into the work dir\'s copy of the package and registered from that copy\'s tool_func.c')
    for name in ('config', 'check'):
        c = sub.add_parser(name)
        c.add_argument('bsp')
        c.add_argument('--channel', choices=('cli', 'debug', 'webnet'), required=True)
        c.add_argument('--posix-stdio', choices=('on', 'off'), required=True)
        c.add_argument('--prebuilt', default='')
        c.add_argument('--web-token', default='')
        c.add_argument('--mcp-token', default='')
        c.add_argument('--mcp-servers', default='')
        c.add_argument('--tls-url', default='')
        c.add_argument('--mqtt-broker', default='')
        c.add_argument('--abilities', action='store_true',
                       help='PKG_AGENT_NOTES, PKG_AGENT_SCHEDULE and PKG_AGENT_SUMMARY on (issue 28)')
        c.add_argument('--mbedtls-config', choices=('lean', 'package'), default='lean')
        c.add_argument('--board', choices=('a9', 'lm3s'), default='a9')
        c.add_argument('--name-max', default='', help='lm3s: RT_NAME_MAX instead of the BSP\'s')
        c.add_argument('--profile', choices=('', 'small'), default='',
                       help='lm3s: PKG_AGENT_PROFILE_SMALL, its options left to the glue')
        c.add_argument('--soak', action='store_true', help='issue 37\'s load run (tests/qemu/soak.py): A9: the '
                       'notes, the schedule, the load run\'s deadlines (with --mcp-token: the MCP server); lm3s: '
                       'the schedule on a RAM file system (DFS v1, ramfs)')
        c.add_argument('--soak-web', default='', metavar='TOKEN',
                       help='with --soak: the WebNet page next to the CLI channel '
                       '(PKG_AGENT_ALSO_WEBNET_CHANNEL), with that PKG_AGENT_WEB_TOKEN')
    s = sub.add_parser('strip-profile')
    s.add_argument('bsp')
    a = p.parse_args()
    {'tree': cmd_tree, 'bsp': cmd_bsp, 'config': cmd_config, 'check': cmd_check,
     'strip-profile': cmd_strip_profile}[a.cmd](a)


if __name__ == '__main__':
    main()

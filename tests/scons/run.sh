#!/usr/bin/env bash
# The SConscript tests: the package's real SConscript under real SCons with
# stand-ins for RT-Thread's building module, the boards' rtconfig.py and
# cargo (tests/scons/run_tests.py). Installs scons and kconfiglib when
# missing. Exits non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# apt_install: tests/lib/deps.sh (installs only what is missing).
. "$here/../lib/deps.sh"

# Installs SCons and kconfiglib (Debian's, for /usr/bin/python3) when missing.
install_deps() {
    local pkgs=()
    [ -x /usr/bin/scons ] || pkgs+=(scons)
    /usr/bin/python3 -c 'import kconfiglib' 2>/dev/null || pkgs+=(python3-kconfiglib)
    if [ ${#pkgs[@]} -gt 0 ]; then
        echo "tests/scons: installing ${pkgs[*]}"
        apt_install "${pkgs[@]}"
    fi
}

install_deps
exec /usr/bin/python3 "$here/run_tests.py" "$@"

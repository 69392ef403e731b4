# Installers for what the tests need, each a no-op when already present.
# Sourced by tests/run-all (CI runs as root on a fresh Debian machine).

apt_updated=""
apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing: ${missing[*]}"
    if [ -z "$apt_updated" ]; then
        $sudo apt-get update -qq
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null && return 0
    # Some machine images ship qemu-utils from a newer release (backports)
    # without that release's sources: the distribution's qemu-system-* then
    # conflicts with it, and apt does not downgrade on its own. Take the
    # qemu-utils that matches the distribution's QEMU, then try again.
    local q
    for q in "${missing[@]}"; do
        case "$q" in qemu-system-*) ;; *) continue ;; esac
        local want
        want="$(apt-cache policy "$q" | sed -n 's/^ *Candidate: //p')"
        if [ -n "$want" ] && [ "$want" != "(none)" ] && dpkg -s qemu-utils >/dev/null 2>&1 \
            && [ "$(dpkg-query -W -f='${Version}' qemu-utils)" != "$want" ]; then
            echo "qemu-utils $(dpkg-query -W -f='${Version}' qemu-utils) conflicts with $q $want: installing qemu-utils $want"
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --allow-downgrades \
                "${missing[@]}" "qemu-utils=$want" >/dev/null
            return
        fi
    done
    return 1
}

ensure_host_deps() {
    apt_install gcc libcjson-dev valgrind python3 ca-certificates
}

# What tools/sim needs beyond Rust: gcc and Debian's cJSON to link the host
# library, CA roots for https:// endpoints.
ensure_sim_deps() {
    apt_install gcc libcjson-dev ca-certificates
}

# libclang for tests/decls.rs (bindgen loads it at run time; the
# metapackage pulls the distribution's default version and its builtin
# headers). The real-header part of that test also needs newlib's ARM headers.
ensure_libclang() {
    apt_install libclang-dev
}

ensure_arm_newlib() {
    apt_install gcc-arm-none-eabi libnewlib-arm-none-eabi
}

ensure_cbindgen() {
    command -v cbindgen >/dev/null 2>&1 && return 0
    echo "installing cbindgen (build-time tool for the ABI check; not linked)"
    cargo install --locked --quiet cbindgen
}

ensure_cargo_fuzz() {
    command -v cargo-fuzz >/dev/null 2>&1 && return 0
    echo "installing cargo-fuzz (runs the fuzz target; not linked)"
    cargo install --locked --quiet cargo-fuzz
}

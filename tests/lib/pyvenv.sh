# Python virtualenvs for the tests that drive the library with real Python
# tools (Selenium for the browser test, the official MCP SDK for the MCP
# tests). Sourced; needs tests/lib/deps.sh.
#
#   py_venv DIR MODULE PACKAGE...
#
# makes DIR (once; again when MODULE cannot be imported from it), installs
# exactly PACKAGE... from PyPI with --no-deps (so the list is the whole
# dependency set, reviewed here, nothing pulled in unseen), puts our certifi
# shim in it and fails unless every installed distribution is permissively
# licensed (tests/lib/check_py_licences.py). The shim stands in for certifi
# (MPL-2.0), which Selenium imports: it points at Debian's CA bundle, as
# Debian's own python3-certifi does.
py_venv() {
    local dir=$1 module=$2
    shift 2
    apt_install python3-venv ca-certificates
    if ! "$dir/bin/python" -c "import $module" 2>/dev/null; then
        echo "installing into $dir: $*"
        rm -rf "$dir"
        python3 -m venv "$dir"
        "$dir/bin/pip" install --quiet --no-deps "$@"
        local site
        site=$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
        cp -r tests/lib/certifi_shim/certifi "$site/"
        "$dir/bin/python" -c "import $module"
    fi
    "$dir/bin/python" tests/lib/check_py_licences.py
}

#!/usr/bin/env bash
# The browser test of the WebNet channel's page (tests/browser/run.py):
# installs Debian's chromium and chromium-driver and, in a virtualenv under
# target/, Selenium (Apache-2.0) from PyPI when missing, builds the
# simulator and runs the test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. tests/lib/deps.sh
export PATH="$HOME/.cargo/bin:$PATH"
apt_install chromium chromium-driver
venv=target/browser-venv
. tests/browser/venv.sh
cargo build --quiet -p rtt-agent-sim
exec "$venv/bin/python" tests/browser/run.py target/debug/rtt-agent-sim

#!/usr/bin/env bash
# The browser test of the WebNet channel's page (tests/browser/run.py):
# installs Debian's chromium and chromium-driver and, in a virtualenv under
# target/, Selenium (Apache-2.0) from PyPI when missing, builds the
# simulator and runs the test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. tests/lib/deps.sh
export PATH="$HOME/.cargo/bin:$PATH"
. tests/lib/pyvenv.sh
apt_install chromium chromium-driver
venv=target/browser-venv
# Selenium (Apache-2.0) and its whole dependency set, pinned (drives
# chromium; not linked). certifi is left out: tests/lib/pyvenv.sh.
py_venv "$venv" selenium \
    selenium==4.51.0 urllib3==2.8.0 PySocks==1.7.1 trio==0.35.0 trio-websocket==0.12.2 \
    typing_extensions==4.16.0 websocket-client==1.9.2 attrs==26.1.0 h11==0.16.0 \
    idna==3.20 outcome==1.3.0.post0 sniffio==1.3.1 sortedcontainers==2.4.0 wsproto==1.3.2
cargo build --quiet -p rtt-agent-sim
exec "$venv/bin/python" tests/browser/run.py target/debug/rtt-agent-sim

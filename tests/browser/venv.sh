# Selenium (Apache-2.0) and its whole dependency set, pinned, in
# target/browser-venv (drives chromium; not linked). certifi is left out:
# tests/lib/pyvenv.sh puts a shim in its place and checks every licence.
# Sourced by the browser test and by the real-firmware check's browser
# step, so both use the one venv made the one way; prints nothing when the
# venv is ready.
# shellcheck shell=bash
. tests/lib/deps.sh
. tests/lib/pyvenv.sh
py_venv target/browser-venv selenium \
    selenium==4.51.0 urllib3==2.8.0 PySocks==1.7.1 trio==0.35.0 trio-websocket==0.12.2 \
    typing_extensions==4.16.0 websocket-client==1.9.2 attrs==26.1.0 h11==0.16.0 \
    idna==3.20 outcome==1.3.0.post0 sniffio==1.3.1 sortedcontainers==2.4.0 wsproto==1.3.2

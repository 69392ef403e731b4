#!/usr/bin/env python3
"""The WebNet channel's page in a real browser.

Starts the host simulator with the WebNet channel (`rtt-agent-sim --web`,
the built-in scripted arithmetic model) and drives Debian's chromium
(headless, through chromium-driver and Selenium) at a phone's size:

- the page (served from the library's flash, GET /cgi-bin/agent) loads;
- a message sent from the form is answered: more than one `delta` event
  arrives before `final`, the tool calls and their results are shown, and
  the answer is the right number;
- the chat asks for the token (a wrong one is refused), keeps it for the
  session and then answers;
- the settings form is refused without the token and with a wrong one, and
  with the token it saves a new model and loads it back, the key masked;
- a screenshot is saved under target/ and its path printed.

    python3 tests/browser/run.py <path to rtt-agent-sim>

Or against a page already served (a board's WebNet, e.g. the real firmware
in QEMU through a hostfwd: tests/qemu/run.sh --webnet --browser); nothing is
started or stopped then:

    python3 tests/browser/run.py --url http://127.0.0.1:PORT/cgi-bin/agent \
        --token TOKEN --key API_KEY [--screenshot PATH]

TOKEN is the board's PKG_AGENT_WEB_TOKEN, API_KEY its configured key (the
page must show it masked, never in clear).
"""
import argparse
import os
import re
import subprocess
import sys
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOKEN = "browser-test-token"
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def start_sim(binary):
    sim = subprocess.Popen([binary, "--web", "--web-token", TOKEN], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = []
    url = [None]
    found = threading.Event()

    def read():
        for raw in sim.stdout:
            line = raw.decode("utf-8", "replace")
            lines.append(line)
            m = re.search(r"WebNet channel: (http://127\.0\.0\.1:\d+/cgi-bin/agent)", line)
            if m:
                url[0] = m.group(1)
                found.set()

    threading.Thread(target=read, daemon=True).start()
    if not found.wait(60):
        sim.kill()
        sys.exit("the simulator did not print its WebNet address:\n" + "".join(lines))
    return sim, url[0], lines


def main():
    p = argparse.ArgumentParser(usage=__doc__)
    p.add_argument("sim", nargs="?", help="the rtt-agent-sim binary (started with --web)")
    p.add_argument("--url", help="the page's address, served already (the simulator is not started)")
    p.add_argument("--token", default=TOKEN, help="the configuration token (with --url)")
    p.add_argument("--key", help="the API key the board has (with --url): shown masked only")
    p.add_argument("--screenshot", default=os.path.join(ROOT, "target", "browser-webnet-page.png"))
    args = p.parse_args()
    if bool(args.sim) == bool(args.url):
        sys.exit(__doc__)
    if args.url and not args.key:
        sys.exit("--url needs --key (the board's API key, to check it is never shown)")
    token = args.token
    sim, sim_log = None, []
    if args.sim:
        sim, url, sim_log = start_sim(args.sim)
    else:
        url = args.url
    print("page:", url)
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=390,844"):
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    try:
        driver.set_page_load_timeout(30)
        driver.get(url)
        check(driver.title == "RT-Thread agent", "the page loads (title %r)" % driver.title)
        wait = WebDriverWait(driver, 30)

        box = driver.find_element(By.ID, "msg")
        box.send_keys("(2+3)*4")
        driver.find_element(By.ID, "send").click()
        # No token yet: the chat is refused and the page asks for it.
        login = driver.find_element(By.ID, "login")
        wait.until(lambda d: login.is_displayed())
        lnote = driver.find_element(By.ID, "lnote")
        check("token" in lnote.text, "without the token the page asks for it: %r" % lnote.text)

        def log_in(value):
            driver.execute_script("document.getElementById('lnote').textContent=''")
            driver.find_element(By.ID, "ltoken").send_keys(value)
            driver.find_element(By.ID, "lgo").click()

        log_in("wrong-token-0123456")
        wait.until(lambda d: login.is_displayed() and lnote.text != "")
        check("valid token" in lnote.text, "a wrong token is refused: %r" % lnote.text)
        log_in(token)
        wait.until(lambda d: "done" in d.execute_script("return window.agentEvents"))
        check(not login.is_displayed(), "with the token the message goes through")
        kept = driver.execute_script("return sessionStorage.getItem('agentToken')")
        check(kept == token, "the token is kept for the session")
        events = driver.execute_script("return window.agentEvents")
        final_at = events.index("final") if "final" in events else -1
        deltas_before = events[:final_at].count("delta") if final_at >= 0 else 0
        check(deltas_before > 1, "the reply arrives in pieces: %d delta events before final" % deltas_before)
        check(events.count("tool_call") >= 2, "tool calls arrive as events (%d)" % events.count("tool_call"))
        answers = driver.find_elements(By.CSS_SELECTOR, ".m.a .t")
        answer = answers[-1].text if answers else ""
        check("20" in answer, "the answer is shown: %r" % answer)
        calls = driver.find_elements(By.CSS_SELECTOR, ".m.a details.tc summary")
        shown = [c.text for c in calls]
        check(any("add" in s for s in shown) and any("mul" in s for s in shown),
              "the tool calls are shown: %r" % shown)
        results = driver.find_elements(By.CSS_SELECTOR, ".m.a details.tr summary")
        check(any("2 + 3 = 5" in r.text for r in results), "the tool results are shown: %r"
              % [r.text for r in results])
        check(len(driver.find_elements(By.CSS_SELECTOR, ".m.a details")) > len(calls),
              "the reasoning is shown")

        driver.find_element(By.ID, "gear").click()
        note = driver.find_element(By.ID, "note")

        def attempt(token, model):
            driver.execute_script("document.getElementById('note').textContent=''")
            for field, value in (("token", token), ("modelName", model)):
                el = driver.find_element(By.ID, field)
                el.clear()
                el.send_keys(value)
            driver.find_element(By.ID, "save").click()
            wait.until(lambda d: note.text != "")
            return note.text

        said = attempt("", "browser-model")
        check(said.startswith("refused") and "token" in said, "saving without the token is refused: %r" % said)
        said = attempt("wrong-token", "browser-model")
        check(said.startswith("refused"), "saving with a wrong token is refused: %r" % said)
        said = attempt(token, "browser-model")
        check(said == "Configuration updated successfully", "saving with the token works: %r" % said)
        driver.find_element(By.ID, "modelName").clear()
        driver.execute_script("document.getElementById('note').textContent=''")
        driver.find_element(By.ID, "load").click()
        wait.until(lambda d: note.text != "")
        model = driver.find_element(By.ID, "modelName").get_attribute("value")
        key_hint = driver.find_element(By.ID, "apiKey").get_attribute("placeholder")
        check(model == "browser-model", "loading shows the new model: %r" % model)
        clear = args.key if args.url else "simulator"
        check("characters" in key_hint and clear not in key_hint,
              "loading shows the key masked: %r" % key_hint)

        shot = args.screenshot
        os.makedirs(os.path.dirname(shot), exist_ok=True)
        driver.save_screenshot(shot)
        print("screenshot:", shot)
    finally:
        driver.quit()
        if sim:
            try:
                sim.stdin.write(b"exit\n")
                sim.stdin.flush()
                sim.wait(20)
            except Exception:
                sim.kill()
    if sim:
        log = "".join(sim_log)
        check("cleanup done" in log, "the simulator stopped the agent cleanly")
    if failures:
        print("".join(sim_log[-40:]))
        sys.exit("browser test: %d check(s) failed" % len(failures))
    print("browser test: all checks passed")


if __name__ == "__main__":
    main()

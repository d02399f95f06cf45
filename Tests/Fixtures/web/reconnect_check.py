"""The pages' live stream across what happens to a daemon left running for days, in a real browser
(Debian's chromium + chromium-driver, headless, driven by Selenium): a page that fell behind, a
daemon restarted with a strap less, and one that refuses the page's token for a while. Prints one
line per check ("ok …") and a line for each restart the Swift test is to carry out ("restart …":
what follows waits on the pages, which show when it happened); exits non-zero on the first failure.

usage: reconnect_check.py BASE_URL READ_TOKEN CONTROL_TOKEN
"""
import json
import sys
import urllib.request

from pages import chromium, ok, wait
from selenium.webdriver.common.by import By

BASE, READ, CONTROL = sys.argv[1:4]
STRAPS = ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02", "C0:FF:EE:00:00:03"]

# Every EventSource a page opens, in order, so the checks can see a stream closed and another
# opened, and each wait the page sets before opening one again (the page's own code is what
# decides; this only records).
RECORDER = """
(() => {
  const Original = window.EventSource;
  window.__sources = [];
  window.EventSource = class extends Original {
    constructor(...args) { super(...args); window.__sources.push(this); }
  };
  window.__reopenDelays = [];
  const originalSetTimeout = window.setTimeout;
  window.setTimeout = function (handler, delay, ...rest) {
    if (typeof handler === "function" && handler.name === "open") window.__reopenDelays.push(delay);
    return originalSetTimeout.call(window, handler, delay, ...rest);
  };
})();
"""


def api(method, path, body=None):
    request = urllib.request.Request(
        BASE + path, method=method, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + CONTROL, "Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request, timeout=60))


def restart(what):
    print("restart " + what, flush=True)


def sources():
    return driver.execute_script("return window.__sources.map((s) => s.readyState)")


def reopen_delays():
    return driver.execute_script("return window.__reopenDelays")


def link():
    return driver.find_element(By.ID, "link").text


def tiles():
    return sorted(driver.execute_script(
        "return Array.from(document.querySelectorAll('.tile')).map((t) => t.dataset.address)"))


def current():
    """The dashboard's strap on show (its row is marked current)."""
    return driver.execute_script(
        "const row = document.querySelector('#sensors tr[aria-current=\"true\"]'); return row && row.dataset.address")


def rows():
    return sorted(driver.execute_script(
        "return Array.from(document.querySelectorAll('#sensors tr')).map((r) => r.dataset.address)"))


driver = chromium()
try:
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    # The dashboard opened on the second strap: it stays the one shown across reconnections.
    driver.get(BASE + "/?sensor=" + STRAPS[1] + "&token=" + READ)
    dashboard = driver.current_window_handle
    wait("three sensors on the dashboard, the second shown", lambda: rows() == STRAPS and current() == STRAPS[1])
    # A session that ends leaves nothing behind in the page (a class a day, for days).
    session = api("POST", "/v1/sessions", {"sensors": [STRAPS[0]]})
    wait("the session on the dashboard", lambda: driver.execute_script("return sessions.size") == 1)
    api("POST", "/v1/sessions/%s/stop" % session["id"])
    wait("the ended session gone from the dashboard's memory", lambda: driver.execute_script(
        "return sessions.size === 0 && alphaHistory.size === 0"))
    ok("an ended session leaves nothing in the dashboard's memory")
    driver.switch_to.new_window("tab")
    board = driver.current_window_handle
    # Each tab is a target of its own: the recorder goes into this one too.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    driver.get(BASE + "/board?token=" + READ)
    wait("three tiles", lambda: tiles() == STRAPS)
    wait("the board live", lambda: link() == "live")
    ok("board and dashboard follow three straps")

    # The daemon dropped messages the page did not read in time: the page cannot know what it
    # missed (a strap gone, a session ended), so it takes a fresh stream and its snapshot.
    assert sources() == [1], sources()
    driver.execute_script(
        "window.__sources[0].dispatchEvent(new MessageEvent('dropped', {data: '{\"kind\":\"dropped\",\"count\":3}'}))")
    wait("a second stream, the first closed", lambda: sources() == [2, 1])
    wait("the board live again", lambda: link() == "live" and tiles() == STRAPS)
    ok("dropped messages: the page took a fresh stream and its snapshot")

    # Restarted without the third strap: the browser reconnects by itself, and the snapshot
    # replaces what the pages knew (no tile, no row left over from before).
    restart("without-third-strap")
    wait("the board on two tiles", lambda: link() == "live" and tiles() == STRAPS[:2], timeout=90)
    ok("restarted without a strap: the board shows what the daemon has now")
    driver.switch_to.window(dashboard)
    wait("the dashboard on two sensors", lambda: rows() == STRAPS[:2], timeout=90)
    assert current() == STRAPS[1], current()
    ok("restarted without a strap: so does the dashboard, still showing the strap it was opened on")
    driver.switch_to.window(board)

    # Restarted refusing the page's token: the browser gives up on the 401 for good (EventSource
    # does on any HTTP error); the page tries again, waiting longer each time.
    earlier = len(reopen_delays())
    restart("refusing-the-token")
    wait("the browser to give up on the refused stream", lambda: link() != "live" and sources()[-1] == 2, timeout=90)
    opened = len(sources())
    wait("the page to try again by itself", lambda: len(sources()) > opened, timeout=30)
    ok("refused: the page tries again by itself")
    # Each wait is jittered within the upper half of a window that doubles: 0.5–1 s, 1–2 s, 2–4 s.
    wait("three waits after refusals", lambda: len(reopen_delays()) >= earlier + 3, timeout=60)
    delays = reopen_delays()[earlier:earlier + 3]
    for index, delay in enumerate(delays):
        window = 1000 * 2 ** index
        assert window / 2 <= delay <= window, "wait %d of %r is outside %d–%d ms" % (index + 1, delays, window / 2, window)
    ok("refused: the page waits longer each time (%s ms)" % ", ".join("%.0f" % delay for delay in delays))
    restart("accepting-the-token")
    wait("the board live again", lambda: link() == "live" and tiles() == STRAPS[:2], timeout=90)
    ok("the token accepted again: the board reconnected by itself")
finally:
    driver.quit()

"""Checks the daemon's pages in a real browser: Debian's chromium + chromium-driver, headless,
driven by Selenium. Prints one line per check ("ok …"), writes a screenshot of each page into
SCREENSHOTS, exits non-zero on the first failure.

usage: browser_check.py BASE_URL READ_TOKEN CONTROL_TOKEN SCREENSHOTS
"""
import json
import os
import struct
import sys
import time
import urllib.error
import urllib.request
import zlib

from pages import chromium, ok, wait
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

BASE, READ, CONTROL, SHOTS = sys.argv[1:5]
# The second strap's name: markup, as anyone in radio range may advertise.
HOSTILE = "<img src=x onerror=window.hacked=1>"
STRAPS = ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02", "C0:FF:EE:00:00:03"]


def api(path, token=CONTROL):
    request = urllib.request.Request(BASE + path, headers={"Authorization": "Bearer " + token})
    return json.load(urllib.request.urlopen(request, timeout=60))


def read(function, attempts=50):
    """Reads from the page, again if the element was re-rendered in between (the pages re-render
    on every live message)."""
    for attempt in range(attempts):
        try:
            return function()
        except Exception:
            if attempt == attempts - 1:
                raise
            time.sleep(0.1)


def no_script_ran(where):
    """The hostile name ran nothing and made no element: the page shows it as text only."""
    hacked, images = driver.execute_script("return [window.hacked === undefined ? null : window.hacked, document.getElementsByTagName('img').length]")
    assert hacked is None and images == 0, "%s: script ran (%r) or markup was made (%d img)" % (where, hacked, images)


def top_left_alpha(png):
    """The alpha of pixel (0, 0) of an 8-bit RGBA PNG (any filter leaves pixel 0 of row 0 as is)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    position, data, colour_type = 8, b"", None
    while position < len(png):
        length, kind = struct.unpack(">I4s", png[position:position + 8])
        body = png[position + 8:position + 8 + length]
        if kind == b"IHDR":
            colour_type = body[9]
        elif kind == b"IDAT":
            data += body
        position += 12 + length
    assert colour_type == 6, "not an RGBA screenshot"
    return zlib.decompress(data)[4]


driver = chromium()
try:
    os.makedirs(SHOTS, exist_ok=True)

    # A page load without a token on TCP is refused.
    try:
        urllib.request.urlopen(BASE + "/", timeout=60)
        raise AssertionError("the dashboard loaded without a token")
    except urllib.error.HTTPError as error:
        assert error.code == 401, error.code
    ok("no token: 401")

    # Dashboard: simulated heart rates that change over time.
    driver.get(BASE + "/?token=" + CONTROL)
    wait("three sensors", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#sensors tr")) == 3)
    first = read(lambda: driver.find_element(By.CSS_SELECTOR, "#sensors tr td:nth-child(4)").text)
    wait("the heart rate to change", lambda: driver.find_element(By.CSS_SELECTOR, "#sensors tr td:nth-child(4)").text not in ("", "–", first))
    ok("dashboard heart rate changes: %s → %s" % (first, read(lambda: driver.find_element(By.CSS_SELECTOR, "#sensors tr td:nth-child(4)").text)))

    # A strap advertising markup as its name: shown as text in the table and the start choices.
    wait("the hostile name as text", lambda: HOSTILE in [b.text for b in driver.find_elements(By.CSS_SELECTOR, "#sensors button.pick")])
    assert HOSTILE in read(lambda: [o.text for o in driver.find_elements(By.CSS_SELECTOR, "#start-sensor option")])
    no_script_ran("the dashboard")
    ok("dashboard shows the hostile name as text")
    # Every page and asset comes with the headers that forbid inline script and keep the token.
    for path in ["/", "/board", "/overlay", "/live.js", "/dashboard.js", "/board.js", "/overlay.js", "/app.css", "/v1/health"]:
        reply = urllib.request.urlopen(urllib.request.Request(BASE + path, headers={"Authorization": "Bearer " + READ}), timeout=60)
        policy = reply.headers.get("Content-Security-Policy") or ""
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy, (path, policy)
        assert reply.headers.get("X-Content-Type-Options") == "nosniff", path
        assert reply.headers.get("Referrer-Policy") == "no-referrer", path
    ok("security headers on every page, asset and API answer")

    # Start, pause, resume and stop from the page; the API follows.
    read(lambda: Select(driver.find_element(By.ID, "start-sensor")).select_by_value(STRAPS[0]))
    read(lambda: driver.find_element(By.ID, "start-button").click())
    session = wait("a session in the API", lambda: [s for s in api("/v1/sessions")["sessions"] if STRAPS[0] in s["sensors"]])[0]
    assert session["state"] == "running"
    ok("started from the page: " + session["id"])
    wait("the live panel", lambda: driver.find_element(By.ID, "live").is_displayed())
    wait("pause enabled", lambda: driver.find_element(By.ID, "pause").is_enabled())
    driver.find_element(By.ID, "pause").click()
    wait("paused in the API", lambda: api("/v1/sessions/" + session["id"])["state"] == "paused")
    ok("paused from the page")
    wait("resume enabled", lambda: driver.find_element(By.ID, "resume").is_enabled())
    driver.find_element(By.ID, "resume").click()
    wait("running in the API", lambda: api("/v1/sessions/" + session["id"])["state"] == "running")
    ok("resumed from the page")
    points = wait("chart points", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#chart circle")) >= 3 and len(driver.find_elements(By.CSS_SELECTOR, "#chart circle")))
    ok("chart has %d points" % points)

    def zones_agree():
        shown = driver.find_element(By.ID, "zone-label").get_attribute("data-zone")
        zone = api("/v1/sessions/" + session["id"]).get("zone")
        return zone is not None and shown == str(zone["index"])
    wait("the page's zone to match the API's", zones_agree)
    ok("zone shown = API zone (" + read(lambda: driver.find_element(By.ID, "zone-label").text) + ")")
    # DFA α1: once the session has 2 minutes of beats (24 s at speed 5), the figure, and the chart
    # with its two threshold lines; the API's session carries the same window.
    shown = wait("an α1 value", lambda: driver.find_element(By.ID, "alpha1").text not in ("", "–") and driver.find_element(By.ID, "alpha1").text, timeout=90)
    float(shown.rstrip("?"))
    assert read(lambda: driver.find_element(By.ID, "artefacts").text).endswith(" %")
    wait("the α1 chart", lambda: driver.find_element(By.ID, "alpha1-section").is_displayed())
    lines = read(lambda: sorted(line.get_attribute("data-alpha1") for line in driver.find_elements(By.CSS_SELECTOR, "#alpha1-chart line.threshold")))
    assert lines == ["0.5", "0.75"], lines
    wait("α1 points", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#alpha1-chart circle")) >= 1)
    window = api("/v1/sessions/" + session["id"]).get("alpha1")
    assert window is not None and window["beats"] >= 100 and "artefactPercent" in window, window
    ok("α1 shown (%s), chart with threshold lines at 0.75 and 0.5" % shown)
    driver.save_screenshot(os.path.join(SHOTS, "dashboard.png"))
    # On a phone: one column, nothing wider than the screen.
    driver.set_window_size(390, 844)
    wait("the phone layout", lambda: driver.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth + 1"))
    driver.save_screenshot(os.path.join(SHOTS, "dashboard-phone.png"))
    ok("phone width: no horizontal scrolling")
    driver.set_window_size(1280, 900)
    driver.find_element(By.ID, "stop").click()
    wait("ended in the API", lambda: api("/v1/sessions/" + session["id"])["state"] == "ended")
    ok("stopped from the page")

    # Class board: three tiles that follow the stream; a dropout greys one, and it recovers.
    driver.get(BASE + "/board?token=" + READ)
    wait("three tiles", lambda: len(driver.find_elements(By.CSS_SELECTOR, ".tile")) == 3)
    # In one script: the tiles re-render on every live message, so element by element a loaded
    # machine can see them replaced between two reads (a stale element every time).
    names = read(lambda: driver.execute_script(
        "return Array.from(document.querySelectorAll('.tile')).map(t => t.querySelector('h2').innerText)"))
    assert names == ["Alice", HOSTILE, "Carol"], names
    no_script_ran("the board")
    ok("board shows the hostile name as text")

    def tile(address):
        return driver.find_element(By.CSS_SELECTOR, '.tile[data-address="%s"]' % address)
    before = read(lambda: tile(STRAPS[1]).find_element(By.CSS_SELECTOR, ".hr").text)
    wait("a tile's heart rate to change", lambda: tile(STRAPS[1]).find_element(By.CSS_SELECTOR, ".hr").text not in ("--", before))
    api_rate = {s["address"]: s["heartRate"] for s in api("/v1/sensors", READ)["sensors"]}
    ok("board tiles %s follow the stream (API now %s)" % (names, api_rate))
    # Greyed and saying why, read in one script: on a loaded machine the dropout (15 s at the
    # daemon's 10x) can end between two reads.
    wait("the dropout to grey a tile with 'signal lost'", lambda: driver.execute_script(
        "const t = arguments[0]; return t.classList.contains('lost')"
        " && getComputedStyle(t.querySelector('.bpm'), '::after').content.includes('signal lost')",
        tile(STRAPS[2])))
    driver.save_screenshot(os.path.join(SHOTS, "board-signal-lost.png"))
    ok("dropout: tile greyed with 'signal lost'")
    wait("the tile to recover", lambda: "lost" not in tile(STRAPS[2]).get_attribute("class"))
    driver.save_screenshot(os.path.join(SHOTS, "board.png"))
    ok("the tile recovered")

    # One athlete recording two straps is one tile, showing the session's first strap; the
    # session's end gives each strap its own tile again.
    body = json.dumps({"sensors": [STRAPS[1], STRAPS[0]]}).encode()
    request = urllib.request.Request(BASE + "/v1/sessions", data=body, method="POST", headers={
        "Authorization": "Bearer " + CONTROL, "Content-Type": "application/json"})
    pair = json.load(urllib.request.urlopen(request, timeout=60))
    wait("one tile for the two-strap session", lambda: driver.execute_script(
        "return Array.from(document.querySelectorAll('.tile')).map(t => [t.dataset.address, t.dataset.session])")
        == [[STRAPS[1], pair["id"]], [STRAPS[2], ""]])
    ok("one athlete, two straps: one tile (%s)" % pair["id"])
    request = urllib.request.Request(BASE + "/v1/sessions/%s/stop" % pair["id"], data=b"", method="POST",
                                     headers={"Authorization": "Bearer " + CONTROL})
    urllib.request.urlopen(request, timeout=60).read()
    wait("a tile per strap again", lambda: len(driver.find_elements(By.CSS_SELECTOR, ".tile")) == 3)

    # Overlay: transparent background, large digits.
    driver.get(BASE + "/overlay?sensor=%s&size=120&zone=1&token=%s" % (STRAPS[0], READ))
    wait("digits on the overlay", lambda: driver.find_element(By.ID, "hr").text.isdigit())
    backgrounds = driver.execute_script(
        "return [getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.body).backgroundColor]")
    assert backgrounds == ["rgba(0, 0, 0, 0)", "rgba(0, 0, 0, 0)"], backgrounds
    driver.execute_cdp_cmd("Emulation.setDefaultBackgroundColorOverride", {"color": {"r": 0, "g": 0, "b": 0, "a": 0}})
    png = driver.get_screenshot_as_png()
    with open(os.path.join(SHOTS, "overlay.png"), "wb") as out:
        out.write(png)
    assert top_left_alpha(png) == 0, "the overlay's screenshot is not transparent"
    ok("overlay transparent, showing %s bpm" % read(lambda: driver.find_element(By.ID, "hr").text))
    driver.get(BASE + "/overlay?sensor=%s&token=%s" % (STRAPS[1], READ))
    wait("digits for the hostile strap", lambda: driver.find_element(By.ID, "hr").text.isdigit())
    no_script_ran("the overlay")

    # The daemon restarts (the test stops it and starts it again): the page notices, reconnects by
    # itself, and follows the stream again — nothing to reload, nothing polled.
    driver.get(BASE + "/board?token=" + READ)
    wait("three tiles", lambda: len(driver.find_elements(By.CSS_SELECTOR, ".tile")) == 3)
    wait("the board to be live", lambda: driver.find_element(By.ID, "link").text == "live")
    print("restart-daemon", flush=True)
    wait("the board to notice the restart", lambda: driver.find_element(By.ID, "link").text != "live")
    wait("the board to reconnect", lambda: driver.find_element(By.ID, "link").text == "live")
    before = read(lambda: tile(STRAPS[0]).find_element(By.CSS_SELECTOR, ".hr").text)
    wait("heart rates after the restart", lambda: tile(STRAPS[0]).find_element(By.CSS_SELECTOR, ".hr").text not in ("--", before))
    ok("reconnected by itself after the daemon restarted")
finally:
    driver.quit()

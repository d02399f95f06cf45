"""Lays every page out at the sizes people use and fails on what does not fit: the dashboard (one
session running, one workout stored), a workout opened on it, the class board and the overlay, at
1280 × 800, 1400 × 1000, 1920 × 1080 and a 390 × 844 phone, the board also on a 3840 × 2160 TV; each
in a viewport of exactly that size (Chromium's device metrics), in Debian's chromium driven by
Selenium. Prints "ok layout PAGE WxH" or "FAIL layout PAGE WxH: …" per page and size, writes
PAGE-WxH.png into SCREENSHOTS (the dashboard and the workout whole, the board and the overlay as
the screen shows them), exits non-zero when any failed.

usage: layout_check.py BASE_URL READ_TOKEN CONTROL_TOKEN SCREENSHOTS
"""
import base64
import json
import os
import sys
import time
import urllib.request

from pages import chromium, ok, wait
from selenium.webdriver.common.by import By

BASE, READ, CONTROL, SHOTS = sys.argv[1:5]
STRAP = "C0:FF:EE:00:00:01"
SIZES = [(1280, 800), (1400, 1000), (1920, 1080), (390, 844)]
TV = (3840, 2160)


def api(method, path, body=None):
    request = urllib.request.Request(BASE + path, method=method, headers={"Authorization": "Bearer " + CONTROL})
    if body is not None:
        request.data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    return json.load(urllib.request.urlopen(request, timeout=60))


# What does not fit, as the page measures it: a list of sentences, empty when all is well.
# arguments[0]: the CSS selector of the page's cards (each element must lie inside its card);
# arguments[1]: the screen's width (a phone's window grows to what overflows it).
PROBLEMS = """
const problems = [];
const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
  + (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
const px = (v) => Math.round(v);
const root = document.documentElement;
const width = arguments[1];
if (root.scrollWidth > width) problems.push(`the page is ${root.scrollWidth} px wide on a ${width} px screen`);

// Every element inside its card (an SVG's own drawing is clipped by it: the SVG is what counts);
// in a card that clips (a board tile), also above and below.
for (const card of [...document.querySelectorAll(arguments[0])].filter(shown)) {
  const box = card.getBoundingClientRect();
  const clips = getComputedStyle(card).overflow !== 'visible';
  if (box.left < -1 || box.right > width + 1) problems.push(`${name(card)} spans ${px(box.left)}–${px(box.right)} px of a ${width} px screen`);
  const wider = [...card.querySelectorAll('*')].filter((e) => !e.closest('svg') || e.tagName.toLowerCase() === 'svg').filter(shown)
    .filter((e) => { const r = e.getBoundingClientRect();
      return r.left < box.left - 1 || r.right > box.right + 1 || (clips && (r.top < box.top - 1 || r.bottom > box.bottom + 1)); });
  // The outermost only: its children stick out with it.
  for (const e of wider.filter((e) => !wider.includes(e.parentElement))) {
    const r = e.getBoundingClientRect();
    problems.push(`${name(e)} spans ${px(r.left)}–${px(r.right)} × ${px(r.top)}–${px(r.bottom)} px, outside its card ${name(card)} `
      + `(${px(box.left)}–${px(box.right)} × ${px(box.top)}–${px(box.bottom)} px)`);
  }
}

// Table cells at least as wide as their longest word: no word broken over lines or cut off. A
// name from the radio (class "name") may break inside a "word" longer than 20 characters: anyone
// may advertise one, and it must not widen the page.
const words = (element) => {
  const found = [];
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode());) {
    for (const match of node.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0);
      found.push({ word: match[0], node, width: rects.reduce((sum, r) => sum + r.width, 0),
        lines: new Set(rects.map((r) => Math.round(r.top))).size, top: rects.length ? Math.round(rects[0].top) : 0 });
    }
  }
  return found;
};
for (const cell of [...document.querySelectorAll('td, th')].filter(shown)) {
  const style = getComputedStyle(cell);
  const inside = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const found = words(cell);
  for (const w of found) {
    const radioName = w.node.parentElement.closest('.name') && w.word.length > 20;
    if (!radioName && (w.lines > 1 || w.width > inside + 1)) {
      problems.push(`"${w.word}" (${px(w.width)} px) in a ${px(inside)} px cell of ${name(cell.closest('table'))}${w.lines > 1 ? ', broken over ' + w.lines + ' lines' : ''}`);
    }
  }
  // A name of several words on as many lines: wrapped word by word.
  const lines = new Set(found.map((w) => w.top)).size;
  if (found.length > 1 && lines === found.length) problems.push(`"${cell.textContent}" wraps word by word in a ${px(inside)} px cell`);
}

// Dates: compact (no seconds, at most 24 characters: "Nov 24, 2025, 11:57 AM" at most) and on one line.
for (const time of [...document.querySelectorAll('time')].filter(shown)) {
  const text = time.textContent;
  const lines = new Set(words(time).map((w) => w.top)).size;
  if (/\\d:\\d\\d:\\d\\d/.test(text) || text.length > 24 || lines > 1) problems.push(`the date "${text}" is not compact on one line (${lines} lines)`);
}

// Charts: the drawing fills the chart, and the chart at least 60 % of the room its card gives it.
for (const svg of [...document.querySelectorAll('svg.chart')].filter(shown)) {
  const box = svg.getBoundingClientRect();
  const drawn = [...svg.children].map((e) => e.getBoundingClientRect()).filter((r) => r.height > 0);
  const top = Math.min(...drawn.map((r) => r.top)), bottom = Math.max(...drawn.map((r) => r.bottom));
  const height = drawn.length ? bottom - top : 0;
  if (height < 0.75 * box.height) problems.push(`${name(svg)} draws in ${px(height)} px of its ${px(box.height)} px`);
  const parent = svg.parentElement, style = getComputedStyle(parent);
  const siblings = [...parent.children].filter((e) => e !== svg && shown(e)).reduce((sum, e) => {
    const s = getComputedStyle(e);
    return sum + e.getBoundingClientRect().height + parseFloat(s.marginTop) + parseFloat(s.marginBottom);
  }, 0);
  const room = parent.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom) - siblings;
  if (box.height < 0.6 * room) problems.push(`${name(svg)} is ${px(box.height)} px high with ${px(room)} px free in ${name(parent)}`);
  if (box.height < 160) problems.push(`${name(svg)} is only ${px(box.height)} px high`);
}
return problems;
"""

# The board's tiles use the screen: together at least 30 % of the window below the header, names
# at least a tenth of the digits' size.
BOARD = """
const tiles = [...document.querySelectorAll('.tile')];
const below = innerWidth * (innerHeight - document.querySelector('header').getBoundingClientRect().bottom);
const area = tiles.reduce((sum, t) => sum + t.getBoundingClientRect().width * t.getBoundingClientRect().height, 0);
const problems = [];
if (area < 0.3 * below) problems.push(`the tiles cover ${Math.round(100 * area / below)} % of the window below the header`);
for (const tile of tiles) {
  const digits = parseFloat(getComputedStyle(tile.querySelector('.bpm')).fontSize);
  const name = parseFloat(getComputedStyle(tile.querySelector('h2')).fontSize);
  if (name < digits / 10) problems.push(`names of ${name} px beside digits of ${digits} px`);
}
return problems;
"""

# The dashboard's dates are <time> elements (the checks above hold them compact), one per workout.
DATES = """
const rows = document.querySelectorAll('#workout-list tr').length, dates = document.querySelectorAll('#workout-list time').length;
return rows === dates ? [] : [`${dates} dates as <time> in ${rows} workouts`];
"""

driver = chromium("1920,1080", "--hide-scrollbars")
failures = []


def size(width, height):
    """A viewport of exactly this size; a phone's is a mobile one (its viewport meta applies)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def screenshot(page, width, height, whole):
    """The screen, or with `whole` the whole page at the screen's width."""
    path = os.path.join(SHOTS, "%s-%dx%d.png" % (page, width, height))
    if whole:
        full = driver.execute_script("return document.documentElement.scrollHeight")
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": max(full, height), "scale": 1}})
        with open(path, "wb") as out:
            out.write(base64.b64decode(shot["data"]))
    else:
        driver.save_screenshot(path)


def check(page, width, height, cards, extra=None, whole=False):
    screen = driver.execute_script("return [document.documentElement.clientWidth, visualViewport.height]")
    assert screen == [width, height], screen
    problems = driver.execute_script(PROBLEMS, cards, width) + (driver.execute_script(extra) if extra else [])
    screenshot(page, width, height, whole)
    if problems:
        failures.append(page)
        print("FAIL layout %s %dx%d: %s" % (page, width, height, "; ".join(dict.fromkeys(problems))), flush=True)
    else:
        ok("layout %s %dx%d" % (page, width, height))


try:
    os.makedirs(SHOTS, exist_ok=True)
    # A stored workout, and a session running on the same strap.
    stored = api("POST", "/v1/sessions", {"sensors": [STRAP], "activity": "cycling"})
    time.sleep(3)
    api("POST", "/v1/sessions/%s/stop" % stored["id"])
    wait("the stored workout", lambda: any(w["id"] == stored["id"] and not w.get("active")
                                           for w in api("GET", "/v1/workouts")["workouts"]))
    api("POST", "/v1/sessions", {"sensors": [STRAP], "activity": "running"})
    shown = {"alpha1": False}

    def dashboard():
        driver.get(BASE + "/?token=" + CONTROL)
        wait("the running session", lambda: driver.find_element(By.ID, "live").is_displayed())
        wait("a chart of the last minutes", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#chart circle")) >= 10)
        # DFA α1 needs 2 minutes of beats (24 s at speed 5): waited for once, shown at once after.
        wait("the α1 chart", lambda: driver.find_element(By.ID, "alpha1-section").is_displayed(),
             timeout=30 if shown["alpha1"] else 90)
        shown["alpha1"] = True
        wait("two workouts", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#workout-list tr")) >= 2)

    def workout():
        # A workout's own address: the dashboard with that workout open.
        driver.get(BASE + "/?workout=%s&token=%s" % (stored["id"], CONTROL))
        wait("the workout's chart", lambda: driver.find_element(By.ID, "workout-detail").is_displayed()
             and len(driver.find_elements(By.CSS_SELECTOR, "#workout-chart circle")) >= 3, timeout=30)
        # Each heart rate says how it came: the simulated strap's through its link.
        linked = driver.find_elements(By.CSS_SELECTOR, '#workout-chart circle[data-via="connection"]')
        every = driver.find_elements(By.CSS_SELECTOR, "#workout-chart circle")
        if len(linked) != len(every) or "through a link" not in driver.find_element(By.ID, "workout-via").text:
            raise AssertionError("the workout view does not say how its heart rates came: %d of %d linked, %r"
                                 % (len(linked), len(every), driver.find_element(By.ID, "workout-via").text))
        wait("the workout list", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#workout-list tr")) >= 2)
        wait("a chart of the last minutes", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#chart circle")) >= 3)

    def board():
        driver.get(BASE + "/board?token=" + READ)
        wait("three tiles with heart rates", lambda: len(driver.find_elements(By.CSS_SELECTOR, ".tile")) == 3
             and "--" not in [t.text for t in driver.find_elements(By.CSS_SELECTOR, ".tile .hr")])

    def overlay():
        driver.get(BASE + "/overlay?sensor=%s&size=120&zone=1&token=%s" % (STRAP, READ))
        wait("digits on the overlay", lambda: driver.find_element(By.ID, "hr").text.isdigit())

    pages = [("dashboard", dashboard, "header, main > section", DATES, True, SIZES),
             ("workout", workout, "header, main > section", DATES, True, SIZES),
             ("board", board, "header, .tile", BOARD, False, SIZES + [TV]),
             ("overlay", overlay, "body", None, False, SIZES)]
    for page, load, cards, extra, whole, sizes in pages:
        for width, height in sizes:
            size(width, height)
            try:
                load()
            except AssertionError as error:
                failures.append(page)
                print("FAIL layout %s %dx%d: %s" % (page, width, height, error), flush=True)
                continue
            check(page, width, height, cards, extra, whole)
finally:
    driver.quit()
sys.exit(1 if failures else 0)

"""The class board with a whole class: 60 straps (14 linked, 46 followed through their broadcast,
one of which has gone quiet) on a 1080p screen, in Debian's chromium driven by Selenium. Prints
one line per check ("ok …"), writes board-60.png into SCREENSHOTS, exits non-zero on the first
failure.

usage: board_sixty.py BASE_URL READ_TOKEN SCREENSHOTS QUIET_ADDRESS
"""
import json
import os
import sys
import time
import urllib.request

from pages import chromium, ok, wait
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

BASE, READ, SHOTS, QUIET = sys.argv[1:5]


def api(path):
    request = urllib.request.Request(BASE + path, headers={"Authorization": "Bearer " + READ})
    return json.load(urllib.request.urlopen(request, timeout=60))


# The page's own view of its tiles, read in one script so a re-render cannot split it.
SNAPSHOT = """
const colourOf = (css) => {
  const probe = document.createElement('div');
  probe.style.background = css;
  document.body.append(probe);
  const computed = getComputedStyle(probe).backgroundColor;
  probe.remove();
  return computed;
};
const rects = [...document.querySelectorAll('.tile')].map((tile) => {
  const box = tile.getBoundingClientRect();
  return {address: tile.dataset.address, via: tile.dataset.via, classes: tile.className,
    hr: tile.querySelector('.hr').textContent, badge: (tile.querySelector('.via') || {}).textContent || null,
    facts: tile.querySelector('.facts').textContent, background: getComputedStyle(tile).backgroundColor,
    zone: tile.dataset.zone, zoneColour: colourOf(zoneColour(tile.dataset.zone ? Number(tile.dataset.zone) : null)),
    top: box.top, bottom: box.bottom, left: box.left, right: box.right, width: box.width, height: box.height,
    digits: parseFloat(getComputedStyle(tile.querySelector('.hr')).fontSize),
    name: parseFloat(getComputedStyle(tile.querySelector('h2')).fontSize)};
});
return {tiles: rects, width: innerWidth, height: innerHeight,
  scrollHeight: document.scrollingElement.scrollHeight, scrollWidth: document.scrollingElement.scrollWidth};
"""

driver = chromium("1920,1080")
try:
    os.makedirs(SHOTS, exist_ok=True)
    # Exactly a 1080p screen, whatever the window decorations.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1920, "height": 1080, "deviceScaleFactor": 1, "mobile": False})
    driver.get(BASE + "/board?token=" + READ)
    wait("60 tiles", lambda: len(driver.find_elements(By.CSS_SELECTOR, ".tile")) == 60, timeout=90)
    # Every strap but the quiet one shows a heart rate; the quiet one says how long it has been silent.
    def settled():
        page = driver.execute_script(SNAPSHOT)
        figures = [t for t in page["tiles"] if t["address"] != QUIET]
        quiet = [t for t in page["tiles"] if t["address"] == QUIET]
        return page if all(t["hr"].isdigit() for t in figures) and quiet and "stale" in quiet[0]["classes"] else None
    page = wait("every heart rate, and the quiet strap stale", settled, timeout=90)
    tiles = page["tiles"]
    assert (page["width"], page["height"]) == (1920, 1080), (page["width"], page["height"])
    assert page["scrollHeight"] <= page["height"] and page["scrollWidth"] <= page["width"], page
    outside = [t["address"] for t in tiles if t["top"] < 0 or t["left"] < 0 or t["bottom"] > 1080 or t["right"] > 1920]
    assert not outside, "tiles outside the screen: %s" % outside
    ok("60 tiles fit 1920x1080 without scrolling (tiles %d x %d px)" % (tiles[0]["width"], tiles[0]["height"]))
    smallest_digits = min(t["digits"] for t in tiles)
    smallest_name = min(t["name"] for t in tiles)
    # Readable across a gym: digits at least 48 px (about 13 mm on a 43-inch 1080p screen), names 14 px.
    assert smallest_digits >= 48 and smallest_name >= 14, (smallest_digits, smallest_name)
    ok("readable: heart rate %d px, names %d px" % (smallest_digits, smallest_name))
    linked = [t for t in tiles if t["via"] == "connection"]
    broadcast = [t for t in tiles if t["via"] == "advertisement"]
    assert len(linked) == 14 and len(broadcast) == 46, (len(linked), len(broadcast))
    assert all(t["badge"] == "link" for t in linked) and all(t["badge"] == "broadcast" for t in broadcast)
    ok("mode badges: 14 link, 46 broadcast")
    quiet = next(t for t in tiles if t["address"] == QUIET)
    assert quiet["facts"].startswith("no data for ") and int(quiet["facts"].split()[3]) >= 5, quiet["facts"]
    fresh = [t for t in tiles if t["address"] != QUIET and "stale" in t["classes"]]
    assert not fresh, "tiles stale while their straps send: %s" % [t["address"] for t in fresh]
    ok("stale data shown: %s" % quiet["facts"])
    # Ordered and coloured as before: by address, coloured by zone (grey only without a zone).
    addresses = [t["address"] for t in tiles]
    assert addresses == sorted(addresses), addresses
    coloured = [t for t in tiles if t["zone"]]
    wrong = [(t["address"], t["zone"], t["background"]) for t in coloured if t["background"] != t["zoneColour"]]
    assert not wrong, "tiles not in their zone's colour: %s" % wrong
    assert len(coloured) >= 55, "%d tiles with a zone" % len(coloured)
    driver.save_screenshot(os.path.join(SHOTS, "board-60.png"))
    ok("fixed order by address, %d tiles coloured by zone; screenshot board-60.png" % len(coloured))
    Select(driver.find_element(By.ID, "order")).select_by_value("hr")
    def by_heart_rate():
        rates = [int(t["hr"]) if t["hr"].isdigit() else 0 for t in driver.execute_script(SNAPSHOT)["tiles"]]
        return rates if rates == sorted(rates, reverse=True) else None
    rates = wait("the heart-rate order", by_heart_rate)
    ok("ordered by heart rate: %d … %d" % (rates[0], rates[-1]))
    sensors = {s["address"]: s for s in api("/v1/sensors")["sensors"]}
    assert sum(1 for s in sensors.values() if s.get("via") == "advertisement") == 46, sensors
    ok("the API agrees: 46 sensors via advertisement")
finally:
    driver.quit()

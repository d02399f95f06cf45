"""The overlay without a strap named: it follows the first strap that streams, and when that strap
is forgotten (an unconfigured strap goes: `"state":"gone"`), it lets it go and follows the next
one that streams. Prints "ok …" lines, exits non-zero on the first failure.

usage: overlay_check.py BASE_URL READ_TOKEN CONTROL_TOKEN STRAP STRAP
"""
import sys
import urllib.request

from pages import chromium, ok, wait
from selenium.webdriver.common.by import By

BASE, READ, CONTROL = sys.argv[1:4]
STRAPS = sys.argv[4:6]

driver = chromium()
try:
    driver.get(BASE + "/overlay?token=" + READ)
    wait("digits on the overlay", lambda: driver.find_element(By.ID, "hr").text.isdigit())
    first = driver.execute_script("return followed")
    assert first in STRAPS, first
    ok("overlay follows %s" % first)
    forget = urllib.request.Request(
        BASE + "/v1/sensors/" + first, method="DELETE", headers={"Authorization": "Bearer " + CONTROL})
    assert urllib.request.urlopen(forget, timeout=60).status == 204
    other = [strap for strap in STRAPS if strap != first][0]
    wait("the overlay to follow the other strap", lambda: driver.execute_script("return followed") == other)
    wait("the other strap's digits", lambda: driver.find_element(By.ID, "hr").text.isdigit())
    ok("overlay let %s go and follows %s" % (first, other))
finally:
    driver.quit()

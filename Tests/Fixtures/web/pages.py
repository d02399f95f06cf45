"""What the browser checks share: waiting on a page that re-renders, and the "ok …" lines the
Swift tests read."""
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def wait(what, condition, timeout=60):
    """Returns the first truthy value of `condition`, asked every 0.2 s (a re-rendering page may
    raise in between); fails after `timeout` seconds, a bound rather than a guess."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception:  # the page may be re-rendering
            pass
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)


def ok(message):
    print("ok " + message, flush=True)


def chromium(size="1280,900", *extra):
    """Debian's chromium, headless, through Debian's chromedriver, in a window of `size`."""
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=" + size,
                     "--disable-dev-shm-usage", *extra]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)

"""A real headless Chromium for tests (Debian's ``chromium`` + ``chromium-driver``, driven by Selenium).

Never downloads a browser or a driver: the driver is /usr/bin/chromedriver (or ``CHROMEDRIVER``),
the browser /usr/bin/chromium (or ``CHROMIUM``). :func:`chromium_missing` says why a test must skip.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"


def chromium_missing() -> str | None:
    """None when a headless browser test can run here, else the reason."""
    if not Path(CHROMIUM).is_file():
        return f"chromium not installed ({CHROMIUM}); apt-get install chromium chromium-driver (.ci/run does)"
    if not Path(CHROMEDRIVER).is_file():
        return f"chromedriver not installed ({CHROMEDRIVER}); apt-get install chromium-driver (.ci/run does)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is missing (pip install -e '.[dev]')"
    return None


def start_chromium(width: int = 1280, height: int = 900):
    """A headless Chromium with a fresh profile; the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="mvx-chromium-")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--allow-file-access-from-files", f"--user-data-dir={profile}",
                 f"--window-size={width},{height}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    driver._mvx_profile = profile  # removed by quit_chromium
    return driver


def quit_chromium(driver) -> None:
    try:
        driver.quit()
    finally:
        shutil.rmtree(getattr(driver, "_mvx_profile", ""), ignore_errors=True)


def full_screenshot(driver, path: str | Path, max_height: int = 4000) -> Path:
    """A PNG of the whole page (the window is stretched to the document's height, capped)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    h = driver.execute_script("return document.documentElement.scrollHeight")
    w = driver.get_window_size()["width"]
    driver.set_window_size(w, min(max_height, max(600, int(h) + 120)))
    driver.save_screenshot(str(path))
    return path

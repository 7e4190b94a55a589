"""Headless Chromium for the page tests: Debian's ``chromium`` and ``chromium-driver`` driven by
Selenium (``.ci/run`` installs both). :func:`browser` skips the calling test, with the reason, when
either is missing; nothing else about a page test may skip."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
DRIVER = ("chromedriver", "chromium-driver")


def _which(names) -> str | None:
    for name in names:
        found = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
        if found:
            return found
    return None


@contextmanager
def browser(width: int = 1280, height: int = 900):
    """A headless Chromium WebDriver that records the console (``console_errors(driver)``)."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    binary, driver_path = _which(CHROMIUM), _which(DRIVER)
    if binary is None or driver_path is None:
        pytest.skip("headless Chromium not available (apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--allow-file-access-from-files"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def open_file(driver, path: Path) -> None:
    """Load a local page and wait, bounded (30 s), until it has finished loading: on a loaded
    machine (the suite runs one test file per core) ``get`` can return while it is still loading."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(Path(path).resolve().as_uri())
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")


def console_errors(driver) -> list[str]:
    """The console's SEVERE entries since the last call (a page that loads cleanly has none)."""
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]

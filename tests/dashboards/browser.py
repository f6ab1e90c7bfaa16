"""Headless Chromium (Playwright) against the live server, with the data the browser tests
open and a page wrapper that records console errors (fixtures and helpers, not tests)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.dashboards.data import load

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs a loop

SHOTS = Path("/tmp/shots")
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture
def data(tmp_path, monkeypatch):
    """The dashboard bundle, ingested in-process: no task is queued to a worker."""
    from ingest import queue
    from perfdb.alerting import queue as alerting_queue

    monkeypatch.setattr(queue, "ingest_upload", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "regressions_check", lambda **k: None)
    return load(tmp_path)


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


class Watched:
    """A page that records console errors, failed requests and how plotly.js loaded."""

    def __init__(self, browser, width: int, height: int = 900):
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.plotly_status: list[int] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("response", self._response)

    def _console(self, message) -> None:
        # A failed request is reported by _response with its URL; the console line has none.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.errors.append(message.text)

    def _response(self, response) -> None:
        if response.url.endswith("/static/vendor/plotly/plotly-perfdb.min.js"):
            self.plotly_status.append(response.status)
        elif response.status >= 400 and not response.url.endswith("favicon.ico"):
            self.errors.append(f"{response.status} {response.url}")

    def open(self, url: str, charts: int = 1) -> None:
        self.page.goto(url)
        # A locator, not wait_for_function: polling a JS predicate needs eval, which the CSP
        # refuses, and the across-kernels chart is drawn after its figure is fetched.
        self.page.locator(".js-plotly-plot .main-svg").nth(charts - 1).wait_for(state="attached")

    def title(self, chart_id: str) -> str:
        return self.page.locator(f"#{chart_id}-plot .gtitle").first.text_content() or ""

    def close(self) -> None:
        self.page.close()

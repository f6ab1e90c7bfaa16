"""Headless Chromium (Playwright) against the live server: where the browser is, how it is
started, and a page wrapper that records console errors (helpers, not tests; the ``browser``
and ``data`` fixtures are in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

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

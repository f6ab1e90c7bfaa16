"""The overview and a summary page in headless Chromium: a culprit build's regression must be
visible (build and size) and the pages must load without a console error."""

from __future__ import annotations

import pytest

from perfdb.alerting import summaries
from tests.dashboards.browser.chromium import SHOTS
from tests.perfdb.alerting.builds import o1_regression

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def regression(tmp_path, monkeypatch):
    """2.4.20+O(1) about 15 % slower than stock in two set-ups, ingested and checked in this
    process: no task is queued to a worker."""
    from ingest import queue
    from perfdb.alerting import queue as alerting_queue

    monkeypatch.setattr(queue, "ingest_upload", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "regressions_check", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "notify_upload", lambda **k: None)
    o1_regression(tmp_path)
    return summaries.summaries_page()[1][0]


def test_the_overview_and_the_summary_show_the_culprit_and_its_size(
    live_server,
    browser,
    regression,
):
    SHOTS.mkdir(exist_ok=True)
    size = f"{regression.worst.change_pct:.1f} %"
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    expect = pytest.importorskip("playwright.sync_api").expect
    page.goto(live_server.url + "/")
    first = page.locator("#regressed .regressed li").first
    assert first.is_visible()
    assert "2.4.20+O(1)" in first.inner_text() and size in first.inner_text()
    page.screenshot(path=str(SHOTS / "overview-regressed.png"), full_page=True)

    first.get_by_role("link", name="2.4.20+O(1)").click()
    page.wait_for_url(f"**/alerts/summaries/{regression.key.slug}/")
    title = page.locator("#summary-title")
    assert "2.4.20+O(1)" in title.inner_text() and size in title.inner_text()
    assert page.locator("#summary-alerts tbody tr").count() == 4
    report = page.locator("#summary-report")
    assert report.is_visible() and "VolanoMark.throughput (msg/s)" in report.inner_text()
    copy = page.locator("button[data-copy]")
    copy.click()
    expect(copy).not_to_have_text("Copy")  # it says what it did: copied, or selected
    page.screenshot(path=str(SHOTS / "summary.png"), full_page=True)
    assert errors == []
    page.close()

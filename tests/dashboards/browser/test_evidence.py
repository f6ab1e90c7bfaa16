"""The evidence pages in real Chromium: profile diff, attribution waterfall, reference hold,
claims. Each page draws, shows its key number and logs no console error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dashboards.browser.chromium import SHOTS, Watched

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _in_process(monkeypatch):
    """Bundles are ingested in-process: a Celery worker left by another test must not take
    the upload (or its follow-up work) first."""
    from ingest import queue
    from perfdb.alerting import queue as alerting_queue

    monkeypatch.setattr(queue, "ingest_upload", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "regressions_check", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "notify_upload", lambda **k: None)


def _shot(page: Watched, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def test_profile_diff_page(live_server, browser, data):
    base, new = data.run("2.4.20"), data.run("2.5.25")
    for width, height in ((1280, 900), (390, 844)):
        page = Watched(browser, width, height)
        page.open(f"{live_server.url}/profile-diff/?base={base.pk}&new={new.pk}")
        assert page.page.locator("#profile-diff-rows tbody tr").count() >= 5
        assert (
            "scheduler" in page.title("fig-profile-diff").lower()
            or page.page.locator("#fig-profile-diff-plot .bars").count()
        )
        assert "points" in page.page.locator("#diff-scheduler").text_content()
        _shot(page, f"profile-diff-{width}")
        assert page.errors == []
        page.close()


def test_profile_diff_reached_from_kernel_time(live_server, browser, data):
    page = Watched(browser, 1280)
    page.open(f"{live_server.url}/kernel-time/", charts=2)
    page.page.click("#profile-diff-link")
    page.page.wait_for_selector("#fig-profile-diff-plot .main-svg")
    assert page.page.locator("#profile-diff-rows").count() == 1
    assert page.errors == []
    page.close()


def test_attribution_waterfall_on_the_compare_page(live_server, browser, tmp_path):
    from perfdb.models import Run
    from tests.dashboards.evidence_data import load_stack

    upload = load_stack(tmp_path)
    stock = Run.objects.get(pk__in=upload.run_ids, patch_set__name="")
    stack = Run.objects.get(pk__in=upload.run_ids, patch_set__name="p1+p2+p3")
    for width, height in ((1280, 900), (390, 844)):
        page = Watched(browser, width, height)
        page.open(f"{live_server.url}/compare/?base={stock.pk}&new={stack.pk}", charts=2)
        assert page.page.locator("#fig-attribution-plot .main-svg").count() >= 1
        assert "p2 moved it" in page.page.locator("#attribution-message").text_content()
        _shot(page, f"attribution-{width}")
        assert page.errors == []
        page.close()


def test_claims_page_lists_002_contradictions(live_server, browser, tmp_path):
    from ingest.demo import bundle_from_folder, demo_folders
    from tests.dashboards.data import ingest

    folder = next(f for f in demo_folders() if f.name == "002-anand-2003-specjappserver")
    path = tmp_path / "sjas.tar.gz"
    path.write_bytes(bundle_from_folder(folder))
    ingest(path)
    for width, height in ((1280, 900), (390, 844)):
        page = Watched(browser, width, height)
        page.page.goto(f"{live_server.url}/claims/")
        first = page.page.locator("#claims tbody tr").first
        assert "Contradicted" in first.text_content() or "contradicted" in first.text_content()
        assert page.page.locator("#claims tr.claim-contradicted").count() == 6
        assert "4.7 %" in page.page.locator("#claims").text_content()
        _shot(page, f"claims-{width}")
        assert page.errors == []
        page.close()


def test_alert_held_by_the_reference(live_server, browser, tmp_path, monkeypatch):
    from ingest import queue
    from perfdb.alerting import queue as alerting_queue
    from tests.dashboards.evidence_data import reference_candidate, reference_history

    monkeypatch.setattr(queue, "ingest_upload", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "regressions_check", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "notify_upload", lambda **k: None)
    reference_history(tmp_path)
    alert = reference_candidate(tmp_path, (90.0, 90.4))
    for width, height in ((1280, 900), (390, 844)):
        page = Watched(browser, width, height)
        page.open(f"{live_server.url}/alerts/{alert.pk}/", charts=2)
        assert (
            "Shared with the reference 2.4.20"
            in page.page.locator("#reference-hold").text_content()
        )
        assert page.page.locator("#reference-chart .main-svg").count() >= 1
        _shot(page, f"reference-{width}")
        assert page.errors == []
        page.close()

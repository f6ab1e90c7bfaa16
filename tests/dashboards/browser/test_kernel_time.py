"""The kernel-time page and the profile diff at 1440 and 800 px in headless Chromium: a panel
per setup with bars labelled by build, idle apart from the busy functions, and no table cell
broken inside a number. Screenshots go to /tmp/shots/ for a person to look at."""

from __future__ import annotations

import pytest

from perfdb.models import Run
from tests.dashboards.browser.chromium import SHOTS, Watched
from tests.dashboards.kernel_time_data import add_rooms_5

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1440, 800)


@pytest.fixture
def two_setups(data, tmp_path):
    return {run.kernel.version: run.pk for run in Run.objects.filter(pk__in=add_rooms_5(tmp_path))}


def ticks(page: Watched, chart_id: str, axis: str) -> list[str]:
    return page.page.locator(f"#{chart_id}-plot .{axis}tick text").all_text_contents()


def unbroken(page: Watched, selector: str) -> list[str]:
    """The texts of the cells that take more than one line."""
    script = """els => els.filter(e => {
        const r = document.createRange(); r.selectNodeContents(e);
        return r.getClientRects().length > 1;
    }).map(e => e.textContent)"""
    return page.page.locator(selector).evaluate_all(script)


@pytest.mark.parametrize("width", WIDTHS)
def test_kernel_time_draws_a_panel_per_setup_labelled_by_build(
    live_server,
    browser,
    two_setups,
    width,
):
    SHOTS.mkdir(exist_ok=True)
    page = Watched(browser, width, 1000)
    page.open(f"{live_server.url}/kernel-time/", 2)
    plot = page.page.locator("#fig-kernel-time-plot")
    assert plot.locator(".cartesianlayer .subplot").count() == 2
    titles = plot.locator(".annotation-text").all_text_contents()
    assert titles == ["rooms=5 · 2 runs", "rooms=10 · 4 runs"]
    labels = ticks(page, "fig-kernel-time", "x")
    assert "2.5.25+pri_preempt" in labels and "2.4.20" in labels
    assert max(len(label) for label in labels) <= len("2.5.25+pri_preempt")
    legend = page.page.locator("#fig-functions-plot .legendtext").all_text_contents()
    assert legend[-2:] == ["other", "idle"] and "default_idle" not in legend
    page.page.screenshot(path=str(SHOTS / f"kernel-time-panels-{width}.png"), full_page=True)
    assert page.errors == []
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_profile_diff_lists_idle_apart_and_never_breaks_a_number(
    live_server,
    browser,
    two_setups,
    width,
):
    base, new = two_setups["2.4.20"], two_setups["2.5.25"]  # 2.5.25+pri_preempt
    page = Watched(browser, width, 1000)
    page.open(f"{live_server.url}/profile-diff/?base={base}&new={new}")
    busy = page.page.locator("#profile-diff-rows tbody td:first-child").all_text_contents()
    idle = page.page.locator("#profile-diff-idle-rows tbody td:first-child").all_text_contents()
    assert "default_idle" in idle and "default_idle" not in busy
    assert busy[1] == "send_sig_info"  # 002 Tables 5-6: -15.18 points, the first busy mover
    assert "57.32 % → 97.63 %" in (page.page.locator("#diff-idle").text_content() or "")
    bars = ticks(page, "fig-profile-diff", "y")
    assert "default_idle" not in bars
    assert unbroken(page, "td.num") == []  # headers break at their <br> only
    page.page.screenshot(path=str(SHOTS / f"profile-diff-{width}.png"), full_page=True)
    assert page.errors == []
    page.close()

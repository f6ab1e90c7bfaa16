"""The scope charts' setup controls in a real browser: picking thresholds or setups, and
"show all", change the URL (the permalink) and what is drawn."""

from __future__ import annotations

import re

import pytest

from dashboards.page_data import kernel_time, wakeups
from perfdb.models import Setup
from tests.dashboards.browser.chromium import Watched

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def charts(page: Watched) -> list[str]:
    return page.page.locator(".js-chart").evaluate_all("els => els.map(e => e.id)")


def test_wakeups_show_all_and_pick_a_threshold(live_server, browser, data, monkeypatch):
    monkeypatch.setattr(wakeups, "WAKEUPS_MAX_SETUPS", 3)  # one threshold of 001's grid
    page = Watched(browser, 1280)
    page.open(f"{live_server.url}/wakeups/", 2)
    assert charts(page) == ["fig-bars-plot", "fig-heatmap_40-plot"]
    page.page.click("#show-all-thresholds")
    page.page.wait_for_url(re.compile(r"thresholds=all"))
    page.page.locator(".js-plotly-plot .main-svg").nth(2).wait_for(state="attached")
    assert charts(page) == ["fig-bars-plot", "fig-heatmap_0-plot", "fig-heatmap_40-plot"]
    page.page.select_option("select[name=thresholds]", ["0"])
    page.page.wait_for_url(re.compile(r"thresholds=0(&|$)"))
    page.page.locator(".js-plotly-plot .main-svg").nth(1).wait_for(state="attached")
    assert charts(page) == ["fig-bars-plot", "fig-heatmap_0-plot"]
    assert "thresholds=0" in (page.page.locator(".permalink a").first.text_content() or "")
    assert page.errors == []
    page.close()


def test_kernel_time_pick_setups(live_server, browser, data, monkeypatch):
    monkeypatch.setattr(kernel_time, "KERNEL_TIME_MAX_SETUPS", 1)
    base = Setup.objects.get(params={"rooms": 10, "messages": 1000}).pk
    rooms5 = Setup.objects.get(params={"rooms": 5, "messages": 1000}).pk
    page = Watched(browser, 1280)
    page.open(f"{live_server.url}/kernel-time/", 2)
    assert page.page.locator("#setups-drawn").text_content().startswith("Drawing 1 of 9")
    page.page.select_option("select[name=setups]", [str(base), str(rooms5)])
    page.page.wait_for_url(re.compile(rf"setups={min(base, rooms5)}&setups={max(base, rooms5)}"))
    page.page.locator(".js-plotly-plot .main-svg").nth(1).wait_for(state="attached")
    assert (page.page.locator("#setups-drawn").text_content() or "").startswith("Drawing 2 of 9")
    page.page.click("#default-setups")
    page.page.wait_for_url(re.compile(r"/kernel-time/\?(?!.*setups=)"))
    assert page.errors == []
    page.close()

"""The pages in a real browser (headless Chromium via Playwright) against a live server.

Data goes through the real ingest pipeline. Each page must draw its Plotly charts from the
app's own partial plotly.js bundle (static/vendor/plotly/) with no console error; changing a
picker must change the URL (the permalink) and the chart. One screenshot per page at 1280 px
and at 390 px goes to /tmp/shots/ for a person to look at.
"""

from __future__ import annotations

import os
import re

import pytest

from perfdb.models import Metric
from tests.dashboards.browser.chromium import SHOTS, Watched

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs a loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


PAGES = [
    ("kernels", "/kernels/", 1),
    ("scaling", "/scaling/", 1),
    ("kernel-time", "/kernel-time/", 2),
    ("wakeups", "/wakeups/", 3),
    ("activity", "/activity/", 1),
]


@pytest.mark.parametrize("name, path, charts", PAGES)
def test_each_page_draws_its_charts_without_errors(live_server, browser, data, name, path, charts):
    SHOTS.mkdir(exist_ok=True)
    for width, height in ((1280, 900), (390, 844)):
        page = Watched(browser, width, height)
        page.open(live_server.url + path, charts)
        assert page.plotly_status == [200], "plotly.js must come from the app"
        assert page.page.locator(".js-plotly-plot .main-svg").count() >= charts
        assert page.page.locator(".modebar-btn[data-title*='png' i]").count() >= 1
        page.page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
        assert page.errors == []
        page.close()


def test_compare_page_draws_and_links_runs(live_server, browser, data):
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    for width, height in ((1280, 900), (390, 844)):
        page = Watched(browser, width, height)
        page.open(f"{live_server.url}/compare/?base={base.pk}&new={new.pk}")
        assert page.page.locator("#compare-rows td.change.good").count() >= 1
        page.page.screenshot(path=str(SHOTS / f"compare-{width}.png"), full_page=True)
        chart = page.page.locator("#fig-compare-plot")
        chart.screenshot(path=str(SHOTS / f"compare-chart-{width}.png"))
        assert page.errors == []
        page.close()


def test_changing_the_metric_changes_the_url_and_the_chart(live_server, browser, data):
    page = Watched(browser, 1280)
    page.open(f"{live_server.url}/kernels/")
    assert "throughput" in page.title("fig-kernels")
    elapsed = Metric.objects.get(name="elapsed")
    page.page.select_option("select[name=metric]", str(elapsed.pk))
    page.page.wait_for_url(re.compile(rf"metric={elapsed.pk}"))
    page.page.wait_for_selector(".js-plotly-plot .main-svg")
    assert "elapsed" in page.title("fig-kernels")
    assert "baseline=" not in page.page.url  # the baseline of the old series is dropped
    assert page.errors == []
    page.close()


def test_relative_switch_and_the_top_n_picker(live_server, browser, data):
    base1 = data.run("2.4.20")
    page = Watched(browser, 1280)
    page.open(f"{live_server.url}/kernels/")
    page.page.select_option("select[name=baseline]", str(base1.pk))
    page.page.wait_for_url(re.compile(rf"baseline={base1.pk}"))
    page.page.wait_for_selector(".js-plotly-plot .main-svg")
    axis = page.page.locator("#fig-kernels-plot .ytitle").text_content()
    assert "Base1 = 100" in axis

    page.open(f"{live_server.url}/kernel-time/?top=3")
    before = page.page.locator("#fig-functions-plot .legendtext").count()
    page.page.select_option("select[name=top]", "10")
    page.page.wait_for_url(re.compile(r"top=10"))
    page.page.wait_for_selector("#fig-functions-plot .main-svg")
    after = page.page.locator("#fig-functions-plot .legendtext").count()
    # Three busy functions, "other" and "idle"; then all five of data.py's busy functions.
    assert (before, after) == (5, 7)
    assert page.errors == []
    page.close()


def test_activity_overlays_runs_picked_by_checkbox(live_server, browser, data):
    a, b = data.run("2.4.20"), data.run("2.5.25")
    page = Watched(browser, 1280)
    page.open(f"{live_server.url}/activity/?runs={a.pk}")
    traces = page.page.locator("#fig-vmstat-plot .legendtext").count()
    page.page.check(f"input[name=runs][value='{b.pk}']")
    page.page.wait_for_url(re.compile(rf"runs={a.pk}.*runs={b.pk}|runs={b.pk}.*runs={a.pk}"))
    page.page.wait_for_selector("#fig-vmstat-plot .main-svg")
    assert page.page.locator("#fig-vmstat-plot .legendtext").count() == 2 * traces
    assert page.errors == []
    page.close()


def test_clicking_a_point_opens_its_run(live_server, browser, data):
    run = data.run("2.4.20")
    page = Watched(browser, 1280)
    page.open(f"{live_server.url}/kernels/")
    page.page.evaluate(
        "id => document.getElementById('fig-kernels-plot')"
        ".emit('plotly_click', {points: [{customdata: id}]})",
        run.pk,
    )
    page.page.wait_for_url(re.compile(rf"/runs/{run.pk}/$"))
    assert page.page.locator("h1").text_content().startswith(f"Run {run.pk}")
    page.close()


def test_overview_page_has_no_errors(live_server, browser, data):
    SHOTS.mkdir(exist_ok=True)
    for width, height in ((1280, 900), (390, 844)):
        page = Watched(browser, width, height)
        page.page.goto(live_server.url + "/")
        assert page.page.locator("#latest tbody tr").count() == 1  # one workload x hardware
        page.page.screenshot(path=str(SHOTS / f"overview-{width}.png"), full_page=True)
        assert page.errors == []
        page.close()

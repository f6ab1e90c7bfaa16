"""The compare page and the links between pages in Chromium: a compare picked without typing
a run id, rows filtered by name, the links of run and alert pages, names in URLs."""

from __future__ import annotations

import pytest

from perfdb.models import Metric
from tests.dashboards.browser.chromium import SHOTS, Watched
from tests.factories import make_alert

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_compare_is_picked_from_builds_and_recent_runs_without_typing(live_server, browser, data):
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    page = Watched(browser, 1280)
    page.page.goto(f"{live_server.url}/compare/")
    assert page.page.locator("#pick-show").is_hidden()  # the script picks on change
    scope = page.page.locator("#pick-scope option").nth(1).get_attribute("value")
    with page.page.expect_navigation():
        page.page.select_option("#pick-scope", scope)
    with page.page.expect_navigation():
        page.page.select_option("#pick-setup", str(base.setup_id))
    builds = page.page.locator("#pick-builds")
    builds.locator('tr[data-text="2.5.25"] input[data-side="base"]').check()
    # the filter box narrows the list to the patched build
    page.page.fill("#pick-filter", "pri_pre")
    assert builds.locator("tbody tr:visible").count() == 1
    builds.locator('tr[data-text="2.5.25+pri_preempt"] input[data-side="new"]').check()
    assert page.page.input_value("#side-base") == str(base.pk)
    assert page.page.input_value("#side-new") == str(new.pk)
    with page.page.expect_navigation():
        page.page.click("#compare-submit")
    assert page.page.url.endswith(f"/compare/?base={base.pk}&new={new.pk}")  # the permalink
    page.page.locator("#fig-compare-plot .main-svg").first.wait_for(state="attached")
    metrics = page.page.locator("#compare-rows tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.metric)"
    )
    assert metrics[0] == "throughput"
    SHOTS.mkdir(exist_ok=True)
    page.page.screenshot(path=str(SHOTS / "compare-picked-1280.png"), full_page=True)
    # a recent run added to a side moves it off the other side
    recent = page.page.locator("#pick-recent")
    recent.locator(f'input[data-side="base"][value="{new.pk}"]').check()
    assert page.page.input_value("#side-new") == ""
    assert not recent.locator(f'input[data-side="new"][value="{new.pk}"]').is_checked()
    page.page.click("#compare-submit")
    assert "Pick at least one candidate" in page.page.text_content("#pick-message")
    assert page.errors == []
    page.close()


def test_rows_filter_by_metric_name(live_server, browser, data):
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    page = Watched(browser, 390, 844)
    page.open(f"{live_server.url}/compare/?base={base.pk}&new={new.pk}")
    page.page.fill("#rows-filter", "vmstat cs")
    visible = page.page.locator("#compare-rows tbody tr:visible")
    assert visible.count() == 1 and visible.get_attribute("data-metric") == "vmstat_cs_mean"
    page.page.fill("#rows-filter", "")
    assert page.page.locator("#compare-rows tbody tr:visible").count() > 10
    assert page.errors == []
    page.close()


def test_from_an_alert_to_its_chart_runs_compare_and_neighbours(live_server, browser, data):
    throughput = Metric.objects.get(name="throughput")
    stock, patched = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    older = make_alert(data.run("2.4.20"), throughput)
    alert = make_alert(patched, throughput, "untriaged", "improvement", 7.9)
    alert.baseline_runs.set([stock])
    page = Watched(browser, 1280)
    page.page.goto(f"{live_server.url}/alerts/{alert.pk}/")
    with page.page.expect_navigation():
        page.page.click("#alert-older")
    assert page.page.url.endswith(f"/alerts/{older.pk}/")
    page.page.go_back()
    with page.page.expect_navigation():
        page.page.click("#alert-compare")
    assert page.page.url.endswith(f"/compare/?base={stock.pk}&new={patched.pk}")
    link = page.page.locator(f'#compare-rows a[href="/alerts/{alert.pk}/"]')
    assert link.count() == 1  # the row's "alert N" is a link back
    page.page.goto(f"{live_server.url}/alerts/{alert.pk}/")
    page.page.click("#alert-series")
    page.page.locator("#fig-kernels-plot .main-svg").first.wait_for(state="attached")
    assert f"setup={patched.setup_id}" in page.page.url
    assert f"metric={throughput.pk}" in page.page.url
    # the candidate's run page lists the alert and compares with the alert's baseline
    page.page.goto(f"{live_server.url}/runs/{patched.pk}/")
    assert page.page.locator(f'#run-alerts a[href="/alerts/{alert.pk}/"]').count() == 1
    href = page.page.get_attribute("#run-compare", "href")
    assert href == f"/compare/?base={stock.pk}&new={patched.pk}"
    assert page.errors == []
    page.close()


def test_names_in_urls(live_server, browser, data):
    stock = data.run("2.5.25")
    page = Watched(browser, 1280)
    page.open(f"{live_server.url}/kernels/?setup={stock.setup_id}&metric=elapsed")
    assert (
        page.page.locator('select[name="metric"] option[selected]')
        .text_content()
        .startswith("elapsed")
    )
    page.page.goto(
        f"{live_server.url}/compare/?setup=VolanoMark/P8/UP/rooms=10,messages=1000"
        "&base_build=2.5.25&new_build=2.5.25%2Bpri_preempt"
    )
    page.page.locator("#fig-compare-plot .main-svg").first.wait_for(state="attached")
    assert page.page.locator('#compare-rows tr[data-metric="throughput"]').count() == 1
    response = page.page.goto(f"{live_server.url}/kernels/?setup={stock.setup_id}&metric=nope")
    assert response is not None and response.status == 400
    assert "no metric 'nope' here" in (page.page.text_content("main") or "")
    page.close()

"""Chart pages in Chromium, kept light: the loading state, tables that wrap between words
only, and the alerts marked on the across-kernels chart."""

from __future__ import annotations

import re

import pytest

from perfdb.models import Metric
from tests.dashboards.browser.chromium import Watched
from tests.factories import MetricFactory, make_alert

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# For each cell: its text, and how many lines the text takes (distinct tops of its line boxes).
LINES = """cells => cells.filter(c => c.textContent.trim()).map(c => {
  const range = document.createRange();
  range.selectNodeContents(c);
  const tops = new Set([...range.getClientRects()].filter(r => r.width > 0)
                       .map(r => Math.round(r.top)));
  return [c.textContent.trim(), tops.size];
})"""


def test_the_chart_box_shows_a_loading_note_at_its_height_until_drawn(live_server, browser, data):
    page = Watched(browser, 1280)
    held = []
    page.page.route("**/kernels/figure/**", lambda route: held.append(route))
    page.page.goto(f"{live_server.url}/kernels/")
    loading = page.page.locator("#fig-kernels-plot .chart-loading")
    loading.wait_for(state="visible")
    assert "Loading the chart" in loading.text_content()
    caption = page.page.locator(".chart-box .downloads")
    before = caption.bounding_box()
    assert page.page.locator("#fig-kernels-plot").bounding_box()["height"] >= 420
    while not held:
        page.page.wait_for_timeout(50)
    held[0].continue_()
    page.page.locator("#fig-kernels-plot .main-svg").first.wait_for(state="attached")
    assert page.page.locator("#fig-kernels-plot .chart-loading").count() == 0
    assert page.page.get_attribute("#fig-kernels-plot", "aria-busy") == "false"
    assert abs(caption.bounding_box()["y"] - before["y"]) <= 2, "the page jumped"
    assert page.errors == []
    page.close()


def pieces(text: str) -> int:
    """Where a cell may wrap: between words, after a hyphen or a slash ("2.3.99-" "pre3")."""
    return len(re.split(r"\s+|(?<=[-/])", text.strip()))


def unbroken(page: Watched, table: str, width: int) -> None:
    """No number or header in ``table`` takes two lines, and no cell breaks inside a word."""
    numbers = page.page.locator(f"{table} td.num, {table} th").evaluate_all(LINES)
    assert numbers, table
    wrapped = [text for text, lines in numbers if lines > 1]
    assert wrapped == [], f"{table} at {width} px"
    for text, lines in page.page.locator(f"{table} td").evaluate_all(LINES):
        assert lines <= pieces(text), f"a word of {text!r} broke at {width} px"


@pytest.mark.parametrize("width", [800, 1440])
def test_no_number_or_word_in_a_wide_table_wraps(live_server, browser, data, width):
    # A metric name as lkp's perf-profile writes them: long, with no space to wrap at.
    long_name = MetricFactory(
        name="perf-profile.calltrace.cycles-pp.entry_SYSCALL_64_after_hwframe.__libc_write",
        unit="%",
        better="lower",
    )
    for kernel, rooms in (("2.5.25", 10), ("2.4.20", 20), ("2.5.25", 5)):
        make_alert(data.run(kernel, rooms=rooms), long_name, change_pct=-6.3)
    page = Watched(browser, width)
    page.page.goto(f"{live_server.url}/alerts/")  # nine columns: the widest table
    unbroken(page, "#alerts", width)
    page.page.goto(f"{live_server.url}/")  # tables in narrow cards
    for text, lines in page.page.locator("main td, main th").evaluate_all(LINES):
        assert lines <= pieces(text), f"a word of {text!r} broke at {width} px"
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    page.open(f"{live_server.url}/compare/?base={base.pk}&new={new.pk}")
    for table in ("#compare-rows", "#attribution-rows"):
        unbroken(page, table, width)
    assert page.errors == []
    page.close()


def test_alerts_are_marked_on_the_chart_and_open_on_click(live_server, browser, data):
    throughput = Metric.objects.get(name="throughput")
    alert = make_alert(data.run("2.5.25"), throughput)
    make_alert(data.run("2.4.20"), throughput, status="pending")
    page = Watched(browser, 1280)
    page.open(f"{live_server.url}/kernels/")  # names no setup: opens on the open regression
    legend = page.page.locator("#fig-kernels-plot .legendtext").all_text_contents()
    assert "alert: open regression" in legend and "alert: pending" in legend
    marks = page.page.locator("#fig-kernels-plot .scatterlayer .trace .point")
    strokes = marks.evaluate_all("ps => ps.map(p => p.style.stroke)")
    assert "rgb(214, 39, 40)" in strokes and "rgb(230, 159, 0)" in strokes
    page.page.evaluate(
        "url => document.getElementById('fig-kernels-plot')"
        ".emit('plotly_click', {points: [{customdata: url}]})",
        f"/alerts/{alert.pk}/",
    )
    page.page.wait_for_url(re.compile(rf"/alerts/{alert.pk}/$"))
    assert page.errors == []
    page.close()

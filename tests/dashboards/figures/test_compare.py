"""The compare chart (dashboards/figures/compare.py): a bar per metric coloured better or
worse by the metric's direction (not significant in grey), its rows kept top to bottom in
the order given, and an empty comparison that says so. No database."""

from __future__ import annotations

import pytest

from dashboards.figures import compare_figure
from dashboards.figures.compare import COLOURS
from dashboards.pure.chartdata import CompareRow, Metric
from tests.dashboards.figures.literals import LATENCY, THROUGHPUT, run


def test_compare_with_no_rows_says_so():
    fig = compare_figure(())
    assert fig["data"] == []
    assert "Nothing to compare" in fig["layout"]["annotations"][0]["text"]


def compare_row(metric: Metric, base: float, cand: float, p: float | None, **kw) -> CompareRow:
    return CompareRow(
        metric, run(1, "2.5.66"), run(2, "2.5.66", ("trytowakeup1",)), base, cand, p, **kw
    )


@pytest.mark.parametrize(
    ("metric", "base", "cand", "p", "threshold", "expected"),
    [
        (THROUGHPUT, 100.0, 104.3, 0.01, None, "better"),
        (THROUGHPUT, 100.0, 95.0, 0.01, None, "worse"),
        (LATENCY, 10.0, 9.0, 0.01, None, "better"),
        (LATENCY, 10.0, 11.0, 0.01, None, "worse"),
        (THROUGHPUT, 100.0, 130.0, 0.2, None, "not significant"),
        (THROUGHPUT, 100.0, 104.3, None, 3.0, "better"),
        (LATENCY, 10.0, 10.2, None, 3.0, "not significant"),
        (THROUGHPUT, 100.0, 130.0, None, None, "not significant"),
    ],
)
def test_compare_colours_follow_the_metric_direction(metric, base, cand, p, threshold, expected):
    fig = compare_figure((compare_row(metric, base, cand, p, threshold_pct=threshold),))
    (trace,) = fig["data"]
    assert trace["name"] == expected
    assert trace["marker"]["color"] == COLOURS[expected]
    assert trace["x"] == pytest.approx([(cand - base) / base * 100])
    assert trace["customdata"] == [2]
    if p is not None:
        assert f"p = {p:.3g}" in trace["hovertext"][0]


def test_compare_keeps_row_order_top_to_bottom():
    rows = (
        compare_row(THROUGHPUT, 100.0, 90.0, 0.01),
        compare_row(LATENCY, 10.0, 9.0, 0.01),
        compare_row(Metric("CPU usage", "%"), 82.0, 83.0, 0.5),
    )
    fig = compare_figure(rows)
    yaxis = fig["layout"]["yaxis"]
    assert yaxis["categoryarray"] == ["VolanoMark throughput", "pipe latency", "CPU usage"]
    assert yaxis["autorange"] == "reversed"

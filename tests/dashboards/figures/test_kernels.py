"""The across-kernels chart and its alert views (dashboards/figures/kernels.py): x in the
kernel order given, a line for stock and one per patch set, error bars and run ids per point,
relative mode as % of a baseline, the plain-dict figure equal to the one Plotly's graph
objects make, an alert's baseline and candidate marked, and alerts ringed in their status's
colour. No database."""

from __future__ import annotations

import json

import pytest

from dashboards.figures import across_kernels_figure, alert_figure, alert_marks, esc
from dashboards.pure.chartdata import AlertMark, Baseline, Metric, Point, Series
from tests.dashboards.figures.literals import (
    HOSTILE,
    KERNELS,
    LATENCY,
    run,
    series,
    series_points,
    trace_named,
)
from tests.dashboards.page_figures import across_kernels_by_graph_objects

# --- across kernels ---------------------------------------------------------------------


def test_across_kernels_x_follows_the_given_kernel_order():
    fig = across_kernels_figure(series())
    xaxis = fig["layout"]["xaxis"]
    assert xaxis["categoryorder"] == "array"
    assert xaxis["categoryarray"] == list(KERNELS)
    stock = trace_named(fig, "stock kernels")
    assert stock["x"] == list(KERNELS)
    task = trace_named(fig, "+task")
    assert task["x"] == ["2.2.12-20", "2.3.28"]


def test_across_kernels_one_trace_per_patch_set_with_stock_first():
    fig = across_kernels_figure(series())
    names = [t["name"] for t in fig["data"]]
    assert names == ["stock kernels", "+task", "+task+sched"]
    assert all(t["mode"] == "lines+markers" for t in fig["data"])


def test_across_kernels_error_bars_are_the_trial_sd_and_customdata_the_run_id():
    points = series_points()
    fig = across_kernels_figure(series(points))
    by_id = {p.run.run_id: p for p in points}
    for trace in fig["data"]:
        assert trace["error_y"]["type"] == "data"
        sds = trace["error_y"]["array"]
        assert sds == [by_id[run_id].sd for run_id in trace["customdata"]]
        assert trace["y"] == [by_id[run_id].value for run_id in trace["customdata"]]


@pytest.mark.parametrize("base_value", [1000.0, 1234.5])
def test_across_kernels_relative_mode_is_percent_of_the_baseline(base_value):
    points = series_points()
    fig = across_kernels_figure(series(points), Baseline(base_value, "Base1"))
    by_id = {p.run.run_id: p for p in points}
    for trace in fig["data"]:
        expected = [by_id[i].value / base_value * 100 for i in trace["customdata"]]
        assert trace["y"] == pytest.approx(expected)
        expected_sd = [
            None if by_id[i].sd is None else by_id[i].sd / base_value * 100
            for i in trace["customdata"]
        ]
        assert trace["error_y"]["array"] == pytest.approx(expected_sd)
    y_title = fig["layout"]["yaxis"]["title"]["text"]
    assert "% of Base1" in y_title and "Base1 = 100" in y_title


def test_across_kernels_hover_names_the_run():
    fig = across_kernels_figure(series())
    hover = trace_named(fig, "+task+sched")["hovertext"][0]
    for part in ("run #22", "2.3.28", "task+sched", "Configuration C", "SMP", "trials: 1"):
        assert part in hover


def test_across_kernels_lines_written_as_plain_dicts_are_what_plotly_made():
    import random

    rng = random.Random(11)
    kernels = tuple(f"2.6.{n}<i>&" for n in range(300))
    many = tuple(
        Point(
            run(n, rng.choice(kernels), rng.choice(((), ("p",), ("p", "<b>q"))), notes=HOSTILE),
            rng.uniform(0, 1e5) if n % 23 else float("nan"),
            sd=rng.choice((None, rng.uniform(0, 50), float("inf"))),
        )
        for n in range(1, 600)
    )
    cases = [(series(), None), (series(), Baseline(1234.5, HOSTILE))]
    cases += [(Series(LATENCY, kernels, many, HOSTILE), b) for b in (None, Baseline(7.0, "b"))]
    for data, baseline in cases:
        plain = across_kernels_figure(data, baseline)
        made = across_kernels_by_graph_objects(data, baseline)
        assert plain == made
        assert json.dumps(plain, sort_keys=True) == json.dumps(made, sort_keys=True)
        assert len(plain["layout"].get("shapes", ())) == (baseline is not None)


@pytest.mark.parametrize("baseline", [None, Baseline(1234.5, HOSTILE)])
def test_across_kernels_layout_written_as_plain_data_is_what_plotly_made(baseline):
    import plotly.graph_objects as go

    from dashboards.figures import _common

    plain = across_kernels_figure(series(), baseline)["layout"]
    fig = go.Figure(layout={**plain, "template": "none", "shapes": []})
    if baseline is not None:
        fig.add_hline(y=100, line={"dash": "dot", "color": "#888888", "width": 1})
    made = _common.to_dict(fig)["layout"]
    assert plain == made
    assert json.dumps(plain, sort_keys=True) == json.dumps(made, sort_keys=True)


# --- alert ------------------------------------------------------------------------------


def test_alert_marks_baseline_and_candidate():
    fig = alert_figure(series(), baseline_run_id=20, candidate_run_id=22)
    baseline = trace_named(fig, "baseline: run #20")
    candidate = trace_named(fig, "candidate: run #22")
    assert baseline["marker"]["symbol"] != candidate["marker"]["symbol"]
    assert (baseline["x"], baseline["y"], baseline["customdata"]) == (["2.3.28"], [1100.0], [20])
    assert (candidate["x"], candidate["y"]) == (["2.3.28"], [900.0])
    notes = [a["text"] for a in fig["layout"]["annotations"]]
    assert notes == ["baseline #20", "candidate #22"]
    assert fig["layout"]["xaxis"]["categoryarray"] == list(KERNELS)


def test_alert_marks_in_relative_mode_use_the_relative_value():
    fig = alert_figure(series(), 0, 5, Baseline(1000.0))
    assert trace_named(fig, "candidate: run #5")["y"] == [pytest.approx(1050.0 / 1000.0 * 100)]


def test_alert_rejects_a_run_outside_the_series():
    with pytest.raises(ValueError, match="#999"):
        alert_figure(series(), 0, 999)


# --- alert marks on the across-kernels chart ------------------------------------------------


def mark(alert_id: int, run_id: int, status: str, direction: str = "regression") -> AlertMark:
    return AlertMark(alert_id, run_id, status, direction, -6.3, f"/alerts/{alert_id}/")


@pytest.mark.parametrize(
    "status, direction, kind, colour",
    [
        ("untriaged", "regression", "open regression", "#D62728"),
        ("investigating", "regression", "open regression", "#D62728"),
        ("acknowledged", "improvement", "improvement", "#2CA02C"),
        ("pending", "regression", "pending", "#E69F00"),
        ("improvement", "improvement", "improvement", "#2CA02C"),
        ("fixed", "regression", "triaged", "#8C8C8C"),
        ("wontfix", "regression", "triaged", "#8C8C8C"),
        ("invalid", "regression", "triaged", "#8C8C8C"),
    ],
)
def test_an_alert_is_marked_in_its_status_colour_on_its_run_point(status, direction, kind, colour):
    (trace,) = alert_marks(series(), [mark(7, 3, status, direction)])
    assert trace["name"] == f"alert: {kind}"
    assert trace["marker"]["color"] == trace["marker"]["line"]["color"] == colour
    # run 3 is the stock point on KERNELS[3] with the value 1030
    assert (trace["x"], trace["y"], trace["customdata"]) == (["2.4.20"], [1030.0], ["/alerts/7/"])
    assert trace["mode"] == "markers" and trace["type"] == "scatter"


def test_a_cleared_alert_is_not_drawn():
    """A pending move the next kernel took back was never an alert to anyone."""
    marks = [mark(1, 3, "cleared"), mark(2, 20, "pending")]
    assert [t["name"] for t in alert_marks(series(), marks)] == ["alert: pending"]


def test_alert_marks_are_one_trace_per_kind_in_legend_order_with_the_hover_a_reader_needs():
    marks = [mark(1, 0, "fixed"), mark(2, 20, "untriaged"), mark(3, 22, "untriaged")]
    traces = alert_marks(series(), marks)
    assert [t["name"] for t in traces] == ["alert: open regression", "alert: triaged"]
    assert traces[0]["x"] == ["2.3.28", "2.3.28"] and traces[0]["y"] == [1100.0, 900.0]
    hover = traces[0]["hovertext"][0]
    assert "alert #2" in hover and "VolanoMark throughput: -6.3 %" in hover
    assert "status: untriaged" in hover and "2.3.28+task, run #20" in hover
    json.dumps(traces)  # JSON-ready as it is


def test_alert_marks_follow_a_relative_chart_and_skip_runs_not_in_the_series():
    traces = alert_marks(series(), [mark(1, 3, "pending"), mark(2, 99, "pending")], Baseline(500.0))
    assert [t["y"] for t in traces] == [[1030.0 / 500.0 * 100]]
    assert alert_marks(series(), []) == []


def test_alert_marks_escape_the_text_they_show():
    hostile = Point(run(5, HOSTILE), 10.0)
    marks = [AlertMark(1, 5, HOSTILE, HOSTILE, 1.0, "/alerts/1/")]
    (trace,) = alert_marks(Series(Metric(HOSTILE, "s"), (HOSTILE,), (hostile,)), marks)
    assert "<script>" not in json.dumps(trace)
    assert trace["x"] == [esc(HOSTILE)]

"""Figure builders: plain data in, JSON-ready Plotly dicts out. No database."""

from __future__ import annotations

import json

import pytest

from dashboards.figures import (
    EMPTY_MESSAGE,
    across_kernels_figure,
    alert_figure,
    alert_marks,
    compare_figure,
    esc,
    kernel_time_figure,
    scaling_figure,
    top_functions_figure,
    vmstat_figure,
    wakeups_figures,
)
from dashboards.figures.compare import COLOURS
from dashboards.pure.chartdata import (
    AlertMark,
    Baseline,
    CompareRow,
    KernelProfile,
    KernelTimeChart,
    KernelTimePoint,
    Metric,
    Point,
    RunInfo,
    ScalingChart,
    ScalingPoint,
    Series,
    VmstatRun,
    WakeupRow,
)
from tests.dashboards.page_figures import across_kernels_by_graph_objects

HOSTILE = "<script>alert(1)</script>&"
THROUGHPUT = Metric("VolanoMark throughput", "msg/s", higher_is_better=True)
LATENCY = Metric("pipe latency", "µs", higher_is_better=False)
# Deliberately not alphabetical: "2.4.20" < "2.3.99-pre3" as strings, not as kernels.
KERNELS = ("2.2.12-20", "2.3.28", "2.3.99-pre3", "2.4.20", "2.4-distro", "2.5.59")


def run(run_id: int, kernel: str = "2.5.59", patches: tuple[str, ...] = (), **kw) -> RunInfo:
    return RunInfo(run_id, kernel, patches, hardware="Configuration C", mode="SMP", **kw)


def series_points() -> tuple[Point, ...]:
    """Stock on every kernel, two patch sets on some; values made up for the test."""
    points = [Point(run(i, k), 1000.0 + 10 * i, sd=float(i)) for i, k in enumerate(KERNELS)]
    points.append(Point(run(20, "2.3.28", ("task",)), 1100.0, sd=5.0))
    points.append(Point(run(21, "2.2.12-20", ("task",)), 1050.0, sd=4.0))
    points.append(Point(run(22, "2.3.28", ("task", "sched")), 900.0, sd=None))
    # Input order shuffled: the builder must place points by the kernel order, not by input.
    return tuple(reversed(points))


def series(points: tuple[Point, ...] | None = None, title: str = "") -> Series:
    return Series(THROUGHPUT, KERNELS, series_points() if points is None else points, title)


def trace_named(fig: dict, name: str) -> dict:
    matches = [t for t in fig["data"] if t.get("name") == name]
    assert len(matches) == 1, [t.get("name") for t in fig["data"]]
    return matches[0]


def all_text(fig: dict) -> str:
    return json.dumps(fig)


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


def test_across_kernels_rejects_a_point_on_an_unlisted_kernel():
    with pytest.raises(ValueError, match="2.6.0"):
        Series(THROUGHPUT, KERNELS, (Point(run(1, "2.6.0"), 1.0),))


# --- empty state, JSON, escaping for every builder ---------------------------------------


def empty_figures() -> list[dict]:
    return [
        across_kernels_figure(series(())),
        scaling_figure(ScalingChart(THROUGHPUT, "rooms", "", ())),
        kernel_time_figure(KernelTimeChart(())),
        top_functions_figure(()),
        wakeups_figures(())["bars"],
        vmstat_figure(()),
    ]


@pytest.mark.parametrize("index", range(6))
def test_empty_input_gives_the_no_runs_annotation(index):
    fig = empty_figures()[index]
    assert fig["data"] == []
    assert [a["text"] for a in fig["layout"]["annotations"]] == [EMPTY_MESSAGE]
    assert EMPTY_MESSAGE.startswith("No runs yet — upload a bundle")


def test_compare_with_no_rows_says_so():
    fig = compare_figure(())
    assert fig["data"] == []
    assert "Nothing to compare" in fig["layout"]["annotations"][0]["text"]


def hostile_figures() -> dict[str, dict]:
    """Every builder fed a kernel, patch, note, param and function name that is HTML."""
    bad = RunInfo(
        7,
        HOSTILE,
        (HOSTILE,),
        hardware=HOSTILE,
        mode="UP",
        n_trials=3,
        params=(("rooms", HOSTILE),),
        notes=HOSTILE,
    )
    metric = Metric(HOSTILE, HOSTILE)
    wake = WakeupRow(bad, 0, -19, 0, 13881.0, 4.42e6, 86.6)
    figs = {
        "across": across_kernels_figure(Series(metric, (HOSTILE,), (Point(bad, 1.0, 0.1),))),
        "alert": alert_figure(Series(metric, (HOSTILE,), (Point(bad, 1.0),)), 7, 7),
        "scaling": scaling_figure(
            ScalingChart(metric, HOSTILE, HOSTILE, (ScalingPoint(bad, 5, 1.0),), HOSTILE)
        ),
        "kernel_time": kernel_time_figure(KernelTimeChart((KernelTimePoint(bad, 60, 30),))),
        "top": top_functions_figure((KernelProfile(bad, ((HOSTILE, 5.0),), 10.0),)),
        "vmstat": vmstat_figure(
            (VmstatRun(bad, ("r", "cs"), ((1, 2), (3, 4)), True, ("", HOSTILE)),)
        ),
        "compare": compare_figure((CompareRow(metric, bad, bad, 1.0, 2.0, 0.01),)),
    }
    for key, fig in wakeups_figures((wake,)).items():
        figs[f"wakeups_{key}"] = fig
    return figs


HOSTILE_KEYS = sorted(hostile_figures())


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_hostile_text_is_escaped_everywhere(key):
    text = all_text(hostile_figures()[key])
    assert "<script>" not in text
    assert "</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&amp;" in text


def test_esc_escapes_ampersand_first():
    assert esc("a<b>&c") == "a&lt;b&gt;&amp;c"
    assert esc("&lt;") == "&amp;lt;"


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_figures_are_json_ready(key):
    fig = hostile_figures()[key]
    assert json.loads(json.dumps(fig, allow_nan=False)) == fig
    assert set(fig) == {"data", "layout"}
    assert fig["layout"]["autosize"] is True


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_every_trace_carries_the_run_id(key):
    for trace in hostile_figures()[key]["data"]:
        ids = trace["customdata"]
        flat = [i for row in ids for i in row] if isinstance(ids[0], list) else ids
        assert set(flat) == {7}


# --- scaling and kernel time ------------------------------------------------------------

# 000 Figure 1 gives only the summary (-19% / -24% from 5 to 25 rooms); these values are
# made up for the test and the expected change is computed from them.
SCALING = (
    ScalingPoint(run(1, "2.2.12-20"), 25, 810.0),
    ScalingPoint(run(2, "2.2.12-20"), 5, 1000.0),
    ScalingPoint(run(3, "2.2.12-20"), 15, 900.0, sd=12.0),
    ScalingPoint(run(4, "2.3.28"), 5, 1010.0),
    ScalingPoint(run(5, "2.3.28"), 25, 760.0),
    ScalingPoint(run(6, "2.3.28", ("task",)), 5, 1090.0),
)


def test_scaling_one_trace_per_build_sorted_by_x_with_change_in_legend():
    fig = scaling_figure(ScalingChart(THROUGHPUT, "rooms", "", SCALING))
    assert len(fig["data"]) == 3
    first = fig["data"][0]
    assert first["x"] == [5, 15, 25]
    assert first["y"] == [1000.0, 900.0, 810.0]
    assert first["error_y"]["array"] == [None, 12.0, None]
    change = (810.0 - 1000.0) / 1000.0 * 100
    assert first["name"].startswith("2.2.12-20: ")
    assert f"{change:+.1f}%" in first["name"]
    second_change = (760.0 - 1010.0) / 1010.0 * 100
    assert f"{second_change:+.1f}%" in fig["data"][1]["name"]
    assert fig["data"][2]["name"] == "2.3.28+task"  # one point: no change to state
    assert fig["layout"]["xaxis"]["title"]["text"] == "rooms"
    assert fig["layout"]["yaxis"]["title"]["text"] == "VolanoMark throughput (msg/s)"


def _scaling_by_graph_objects(chart: ScalingChart) -> dict:
    """The scaling figure as Plotly's validating graph objects made it (before its traces
    were written as plain dicts): what the plain traces must equal, value for value."""
    import plotly.graph_objects as go

    from dashboards.figures import _common, scaling

    figure = scaling_figure(chart)
    fig = go.Figure(layout=figure["layout"])
    for i, (build, points) in enumerate(scaling.by_build(chart.points).items()):
        points = sorted(points, key=lambda p: p.x)
        fig.add_trace(
            go.Scatter(
                x=[p.x for p in points],
                y=[p.value for p in points],
                error_y={"type": "data", "array": [p.sd for p in points], "visible": True},
                mode="lines+markers",
                name=scaling._legend_name(build, points, chart.param),
                line={"color": _common.colour(i)},
                customdata=[p.run.run_id for p in points],
                hovertext=[scaling._scaling_hover(p, chart.param, chart.metric) for p in points],
                hovertemplate=_common.HOVER,
            )
        )
    return _common.to_dict(fig)


def test_scaling_traces_written_as_plain_dicts_are_what_plotly_made():
    import random

    rng = random.Random(5)
    many = tuple(
        ScalingPoint(
            run(n, f"2.6.{n % 13}<b>", ("p",) if n % 5 == 0 else ()),
            rng.choice((1, 2, 4, 8, 16)),
            rng.uniform(0, 1e4) if n % 17 else float("nan"),
            sd=rng.choice((None, rng.uniform(0, 50))),
        )
        for n in range(1, 200)
    )
    for points in (SCALING, many):
        chart = ScalingChart(THROUGHPUT, "rooms", "", points)
        plain = scaling_figure(chart)
        assert plain == _scaling_by_graph_objects(chart)
        assert json.dumps(plain, sort_keys=True) == json.dumps(
            _scaling_by_graph_objects(chart), sort_keys=True
        )


# Kernel time and the top kernel functions: tests/dashboards/figures/test_kernel_time.py.


# --- wakeups (001 Tables 1-2) -----------------------------------------------------------

# (server nice, client nice, msg/s, try_to_wake_up calls, % priority preemptions)
TABLE_1 = (
    (0, 0, 13183, 3.49e6, 28.4),
    (0, -19, 13881, 4.42e6, 86.6),
    (0, 19, 10553, 5.52e6, 10.5),
    (19, 0, 13508, 4.06e6, 82.9),
)
TABLE_2 = (
    (0, 0, 13605, 3.22e6, 0.0),
    (0, -19, 18740, 1.67e6, 0.0),
    (0, 19, 10716, 5.35e6, 0.0),
    (19, 0, 16548, 2.01e6, 0.0),
)


def wakeup_rows() -> tuple[WakeupRow, ...]:
    rows = []
    for threshold, table in ((0, TABLE_1), (40, TABLE_2)):
        for i, (s, c, tput, calls, pct) in enumerate(table):
            info = run(100 + threshold + i, "2.5.25", ("pri_preempt",))
            rows.append(WakeupRow(info, s, c, threshold, tput, calls, pct))
    return tuple(rows)


def test_wakeup_bars_one_trace_per_threshold_per_value():
    figs = wakeups_figures(wakeup_rows())
    assert sorted(figs) == ["bars", "heatmap_0", "heatmap_40"]
    bars = figs["bars"]["data"]
    assert len(bars) == 6  # 3 values x 2 thresholds
    assert [t["name"] for t in bars[:2]] == ["preemption threshold 0", "preemption threshold 40"]
    assert bars[0]["x"] == ["0 / 0", "0 / -19", "0 / +19", "+19 / 0"]
    assert bars[0]["y"] == [row[2] for row in TABLE_1]
    assert bars[3]["y"] == [row[3] for row in TABLE_2]
    assert bars[5]["y"] == [row[4] for row in TABLE_2]
    assert [t["showlegend"] for t in bars] == [True, True, False, False, False, False]


def test_wakeup_heatmap_places_each_value_at_its_nice_pair():
    fig = wakeups_figures(wakeup_rows())["heatmap_40"]
    heat = fig["data"][0]
    assert heat["x"] == ["-19", "0", "+19"]  # client nice
    assert heat["y"] == ["0", "+19"]  # server nice
    for s, c, tput, _, _ in TABLE_2:
        cell = heat["z"][heat["y"].index("0" if s == 0 else f"{s:+d}")]
        assert cell[heat["x"].index("0" if c == 0 else f"{c:+d}")] == tput
    assert heat["z"][1][0] is None  # +19 / -19 is not in this subset: empty, not zero
    all_tput = [row[2] for row in TABLE_1 + TABLE_2]
    assert (heat["zmin"], heat["zmax"]) == (min(all_tput), max(all_tput))


def test_wakeup_heatmap_value_must_be_known():
    with pytest.raises(ValueError):
        wakeups_figures(wakeup_rows(), heatmap_value="msg")


# --- vmstat -----------------------------------------------------------------------------

COLUMNS = ("r", "in", "cs", "us", "sy", "id")
# 002 Table 12 (policy PA), first two rows, with a since-boot row put in front.
SINCE_BOOT = (1, 100, 200, 5, 2, 93)
TABLE_12 = ((14, 6067, 27204, 63, 10, 27), (9, 5868, 29230, 60, 9, 31))
TABLE_13 = ((18, 7788, 6903, 85, 14, 0), (26, 7168, 6686, 84, 11, 6))


@pytest.mark.parametrize("since_boot", [True, False])
def test_vmstat_excludes_the_since_boot_sample(since_boot):
    rows = ((SINCE_BOOT, *TABLE_12)) if since_boot else TABLE_12
    fig = vmstat_figure((VmstatRun(run(1), COLUMNS, rows, first_is_since_boot=since_boot),))
    cs = trace_named(fig, "cs: 2.5.59 #1")
    assert cs["x"] == [1, 2]
    assert cs["y"] == [row[2] for row in TABLE_12]
    x_title = fig["layout"]["xaxis3"]["title"]["text"]  # the bottom subplot's axis
    assert ("since boot" in x_title) == since_boot


def test_vmstat_overlays_runs_in_subplots_per_group():
    runs = (
        VmstatRun(run(1, patches=("PA",)), COLUMNS, TABLE_12, first_is_since_boot=False),
        VmstatRun(run(2, patches=("PC",)), COLUMNS, TABLE_13, first_is_since_boot=False),
    )
    fig = vmstat_figure(runs)
    assert len(fig["data"]) == 2 * len(COLUMNS)
    by_axis: dict[str, set[str]] = {}
    for trace in fig["data"]:
        by_axis.setdefault(trace["yaxis"], set()).add(trace["name"].split(":")[0])
    assert sorted(map(sorted, by_axis.values())) == [["cs", "in"], ["id", "sy", "us"], ["r"]]
    pa, pc = trace_named(fig, "r: 2.5.59+PA #1"), trace_named(fig, "r: 2.5.59+PC #2")
    assert pa["line"]["color"] != pc["line"]["color"]
    assert pc["y"] == [row[0] for row in TABLE_13]


def test_vmstat_rejects_a_row_that_does_not_match_the_header():
    with pytest.raises(ValueError, match="header"):
        vmstat_figure((VmstatRun(run(1), COLUMNS, ((1, 2),), first_is_since_boot=False),))


# --- compare ----------------------------------------------------------------------------


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


def test_numpy_arrays_come_out_as_plain_lists():
    """Plotly 7 stores numpy arrays as base64 typed arrays; the page and json_script need lists."""
    import numpy as np
    import plotly.graph_objects as go

    from dashboards.figures._common import to_dict

    z = np.array([[1.5, 2.0], [np.nan, 4.0]])
    fig = to_dict(go.Figure(go.Heatmap(z=z, x=np.array([1, 2]))))
    assert fig["data"][0]["z"] == [[1.5, 2.0], [None, 4.0]]
    assert fig["data"][0]["x"] == [1, 2]
    json.dumps(fig, allow_nan=False)


def test_a_scaling_line_remembered_from_another_chart_takes_its_place_and_colour_here():
    """Lines are remembered by their points (dashboards/figures/scaling.py): a chart where a
    build was added before them is drawn as if nothing were remembered."""
    from dashboards.figures import scaling

    older = tuple(p for p in SCALING if p.run.build != SCALING[0].run.build)
    scaling_figure(ScalingChart(THROUGHPUT, "rooms", "", older))  # its lines remembered
    chart = ScalingChart(THROUGHPUT, "rooms", "", SCALING)
    remembered = scaling_figure(chart)
    scaling._build_trace.cache_clear()
    assert remembered == scaling_figure(chart) == _scaling_by_graph_objects(chart)
    colours = [trace["line"]["color"] for trace in remembered["data"]]
    assert len(set(colours)) == len(colours) == len(scaling.by_build(SCALING))


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

"""What the builders share (dashboards/figures/_common.py), held for every builder at once:
an empty input draws the no-runs annotation, text from data is escaped wherever it shows,
each figure is JSON-ready (no numpy arrays, no NaN) and every trace carries its run id. A new
builder joins the lists below. No database."""

from __future__ import annotations

import json

import pytest

from dashboards.figures import (
    EMPTY_MESSAGE,
    across_kernels_figure,
    alert_figure,
    compare_figure,
    esc,
    kernel_time_figure,
    scaling_figure,
    top_functions_figure,
    vmstat_figure,
    wakeups_figures,
)
from dashboards.pure.chartdata import (
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
from tests.dashboards.figures.literals import HOSTILE, THROUGHPUT, series


def all_text(fig: dict) -> str:
    return json.dumps(fig)


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

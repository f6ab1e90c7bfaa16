"""The scaling chart (dashboards/figures/scaling.py): a line per build sorted by the
parameter, its % change first to last in the legend, the plain-dict traces equal to the ones
Plotly's graph objects make, and a line remembered from another chart drawn as if new. No
database."""

from __future__ import annotations

import json

from dashboards.figures import scaling_figure
from dashboards.pure.chartdata import ScalingChart, ScalingPoint
from tests.dashboards.figures.literals import THROUGHPUT, run

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

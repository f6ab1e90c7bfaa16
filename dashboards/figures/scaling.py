"""Charts against a numeric workload parameter (rooms, threads, clients): 000 Figures 1, 4,
8, 10, 11, 13."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any, TypeVar

import plotly.graph_objects as go

from dashboards.figures._common import (
    HOVER,
    axis_title,
    base_layout,
    colour,
    empty_figure,
    esc,
    fmt,
    plain,
    run_hover,
    to_dict,
)
from dashboards.pure.chartdata import (
    KernelTimePoint,
    Metric,
    ScalingChart,
    ScalingPoint,
)

P = TypeVar("P", ScalingPoint, KernelTimePoint)


def by_build(points: Iterable[P]) -> dict[str, list[P]]:
    """Points grouped by kernel build (kernel+patches), builds in first-seen order."""
    groups: dict[str, list[P]] = {}
    for point in points:
        groups.setdefault(point.run.build, []).append(point)
    return groups


def pct_change(first: float, last: float) -> float | None:
    """% change from the first point to the last: how 000 sums up a scaling curve (-19%)."""
    return None if first == 0 else (last - first) / first * 100


def scaling_figure(chart: ScalingChart) -> dict[str, Any]:
    """A metric against a parameter, one line per kernel build.

    Each legend entry carries the build's % change from the smallest to the largest
    parameter value, the number the papers quote for such a curve. PNG export comes from the
    page's Plotly config.
    """
    metric = chart.metric
    title = esc(chart.title or f"{metric.name} against {chart.param}")
    if not chart.points:
        return empty_figure(title)
    groups = by_build(chart.points)
    layout = base_layout(
        title,
        axis_title(chart.param, chart.param_unit),
        axis_title(metric.name, metric.unit),
        n_legend=len(groups),
    )
    traces = [
        {**_build_trace(build, tuple(points), chart.param, metric), "line": {"color": colour(i)}}
        for i, (build, points) in enumerate(groups.items())
    ]
    return {**to_dict(go.Figure(layout=layout)), "data": traces}


@lru_cache(maxsize=1024)
def _build_trace(
    build: str, points: tuple[ScalingPoint, ...], param: str, metric: Metric
) -> dict[str, Any]:
    """One build's line without its colour (its place among the chart's builds), as plain
    data, as ``go.Scatter(...).to_plotly_json()`` gives it without Plotly's validation (~1 ms
    a trace); never changed by a caller. Remembered by its points: an upload to a scope changes
    one or two of the ~12 builds its chart shows, and the others' lines (hover text for each
    point, most of the chart's CPU) are not made again in this process."""
    points = tuple(sorted(points, key=lambda p: p.x))
    trace = {
        "type": "scatter",
        "x": [p.x for p in points],
        "y": [p.value for p in points],
        "error_y": {"type": "data", "array": [p.sd for p in points], "visible": True},
        "mode": "lines+markers",
        "name": _legend_name(build, list(points), param),
        "line": None,  # the chart's colour for it goes here
        "customdata": [p.run.run_id for p in points],
        "hovertext": [_scaling_hover(p, param, metric) for p in points],
        "hovertemplate": HOVER,
    }
    made: dict[str, Any] = plain(trace)
    return made


def _legend_name(build: str, points: list[ScalingPoint], param: str) -> str:
    change = pct_change(points[0].value, points[-1].value) if len(points) > 1 else None
    if change is None:
        return esc(build)
    span = f"{points[0].x:g}→{points[-1].x:g} {esc(param)}"
    return f"{esc(build)}: {change:+.1f}% ({span})"


def _scaling_hover(point: ScalingPoint, param: str, metric: Metric) -> str:
    unit = metric.unit
    value = fmt(point.value, unit)
    if point.sd is not None:
        value += f" ± {fmt(point.sd, unit)}"
    return f"{esc(param)} = {point.x:g}<br>{esc(metric.name)}: {value}<br>{run_hover(point.run)}"

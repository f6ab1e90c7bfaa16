"""% of total time in the kernel and in the scheduler per run (000 Figures 4, 10, 13).

Without a parameter: one panel per setup, stacked, each with a bar pair (kernel, scheduler)
per run labelled by its build (``2.5.25+pri_preempt``). A scope's setups share workload,
hardware and mode and differ in their parameters, so a bar's setup is told by its panel's
title, not by a 60-character label under each bar: 8 setups' 100+ bar pairs on one axis had
drawn labels over each other. Every panel has the same y range, so panels compare by eye; the
hover carries the full name. Against a parameter: a solid (kernel) and a dashed (scheduler)
line per build, in the build's colour.

Pure: ``KernelTimeChart`` in, a JSON-ready figure out; the traces are plain dicts (Plotly's
validating objects cost ~1 ms a trace, and "show all" draws two per setup).
"""

from __future__ import annotations

from typing import Any

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
from dashboards.figures.scaling import by_build
from dashboards.pure.chartdata import KernelTimeChart, KernelTimePoint, RunInfo

PANEL_PX = 170  # a panel's plot area
GAP_PX = 110  # under a panel: its build labels (slanted when crowded) and the next title
TOP_PX, BOTTOM_PX = 96, 100  # the last panel's build labels are in the bottom margin
SERIES = (("in kernel", "kernel_pct"), ("in scheduler", "scheduler_pct"))

SetupKey = tuple[str, str, tuple[tuple[str, str], ...]]


def kernel_time_figure(chart: KernelTimeChart) -> dict[str, Any]:
    """Panels of bar pairs per setup, or lines against ``chart.param``. PNG export comes
    from the page's Plotly config."""
    title = esc(chart.title or "Time in kernel and in scheduler")
    if not chart.points:
        return empty_figure(title)
    if chart.param is None:
        return setup_panels(chart.points, title)
    return to_dict(_kernel_time_lines(chart, title))


def setup_key(run: RunInfo) -> SetupKey:
    """What tells a run's setup apart within the scope a chart draws."""
    return (run.hardware, run.mode, run.params)


def setup_title(run: RunInfo, shared: frozenset[tuple[str, str]] = frozenset()) -> str:
    """A panel's title: the setup's parameters (``messages=1000, rooms=10``) less those every
    panel has (``shared``), or its hardware and mode when that leaves none. Not escaped."""
    params = [(name, value) for name, value in run.params if (name, value) not in shared]
    if params:
        return ", ".join(f"{name}={value}" for name, value in params)
    return f"{run.hardware or '?'}, {run.mode or '?'}"


def shared_params(groups: dict[SetupKey, list[KernelTimePoint]]) -> frozenset[tuple[str, str]]:
    """The parameter values every panel has: said once in the hover, not in every title."""
    if len(groups) < 2:
        return frozenset()
    sets = [frozenset(params) for _, _, params in groups]
    return frozenset.intersection(*sets)


def _param_order(key: SetupKey) -> tuple[Any, ...]:
    """Panels by parameter values, numbers as numbers (rooms=5 before rooms=10)."""
    hardware, mode, params = key

    def value(text: str) -> tuple[int, float, str]:
        try:
            return (0, float(text), text)
        except ValueError:
            return (1, 0.0, text)

    return (tuple((name, value(v)) for name, v in params), hardware, mode)


def by_setup(points: tuple[KernelTimePoint, ...]) -> dict[SetupKey, list[KernelTimePoint]]:
    """Points grouped by setup, setups by parameter values, each setup's points in the order
    given (kernel order)."""
    groups: dict[SetupKey, list[KernelTimePoint]] = {}
    for point in points:
        groups.setdefault(setup_key(point.run), []).append(point)
    return {key: groups[key] for key in sorted(groups, key=_param_order)}


def build_labels(points: list[KernelTimePoint]) -> list[str]:
    """Each bar's category (escaped): its build, with the run id where the panel has two
    runs of that build (``2.5.25 #12``), since a category is drawn once."""
    counts: dict[str, int] = {}
    for point in points:
        counts[point.run.build] = counts.get(point.run.build, 0) + 1
    return [
        esc(p.run.build) if counts[p.run.build] == 1 else f"{esc(p.run.build)} #{p.run.run_id}"
        for p in points
    ]


def _hover(point: KernelTimePoint) -> str:
    return (
        f"<b>{esc(point.run.build)}</b> · {esc(setup_title(point.run))}<br>"
        f"in kernel: {fmt(point.kernel_pct, '%')} of total time<br>"
        f"in scheduler: {fmt(point.scheduler_pct, '%')} of total time<br>"
        f"{run_hover(point.run)}"
    )


def setup_panels(points: tuple[KernelTimePoint, ...], title: str) -> dict[str, Any]:
    """One panel per setup, top to bottom, sharing one y range and one legend."""
    groups = by_setup(points)
    shared = shared_params(groups)
    n = len(groups)
    plot_px = n * PANEL_PX + (n - 1) * GAP_PX
    height = TOP_PX + plot_px + BOTTOM_PX
    top = max(p.kernel_pct for p in points)
    y_range = [0, max(1.0, top * 1.08)]
    layout = base_layout(title, "", "", n_legend=2, height=height)
    layout["margin"].update(t=TOP_PX, b=BOTTOM_PX)
    # Above the first panel: a legend below the last would sit a screen or more away.
    layout["legend"] = {"orientation": "h", "x": 1, "xanchor": "right", "y": 1, "yanchor": "bottom"}
    layout["legend"]["y"] = 1 + 40 / plot_px
    layout["bargap"] = 0.25
    del layout["xaxis"], layout["yaxis"]
    annotations, traces = [], []
    for i, (_, panel) in enumerate(groups.items()):
        suffix = "" if i == 0 else str(i + 1)
        top_px = i * (PANEL_PX + GAP_PX)
        domain = [1 - (top_px + PANEL_PX) / plot_px, 1 - top_px / plot_px]
        labels = build_labels(panel)
        layout[f"xaxis{suffix}"] = {
            "type": "category",
            "categoryorder": "array",
            "categoryarray": labels,
            "anchor": f"y{suffix}",
            "automargin": False,
            "tickfont": {"size": 11},
        }
        layout[f"yaxis{suffix}"] = {
            "domain": [max(0.0, domain[0]), min(1.0, domain[1])],
            "anchor": f"x{suffix}",
            "range": y_range,
            "title": {"text": "% of total time", "font": {"size": 11}},
            "zeroline": False,
            "automargin": True,
        }
        setup = setup_title(panel[0].run, shared)
        runs = f"{len(panel)} run{'' if len(panel) == 1 else 's'}"
        annotations.append(
            {
                "text": f"<b>{esc(setup)}</b> · {runs}",
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": min(1.0, domain[1]),
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 13},
            }
        )
        hover = [_hover(p) for p in panel]
        for j, (name, field) in enumerate(SERIES):
            traces.append(
                {
                    "type": "bar",
                    "x": labels,
                    "y": [getattr(p, field) for p in panel],
                    "name": name,
                    "legendgroup": name,
                    "showlegend": i == 0,
                    "marker": {"color": colour(j)},
                    "customdata": [p.run.run_id for p in panel],
                    "hovertext": hover,
                    "hovertemplate": HOVER,
                    "xaxis": f"x{suffix}",
                    "yaxis": f"y{suffix}",
                }
            )
    layout["annotations"] = annotations
    made: dict[str, Any] = plain({**to_dict(go.Figure(layout=layout)), "data": traces})
    return made


def _kernel_time_lines(chart: KernelTimeChart, title: str) -> go.Figure:
    if any(p.x is None for p in chart.points):
        raise ValueError(f"every point needs a value of {chart.param!r}")
    groups = by_build(chart.points)
    x_title = axis_title(chart.param or "", chart.param_unit)
    layout = base_layout(title, x_title, "% of total time", n_legend=2 * len(groups))
    layout["yaxis"].update(rangemode="tozero")
    fig = go.Figure(layout=layout)
    for i, (build, points) in enumerate(groups.items()):
        points = sorted(points, key=lambda p: p.x or 0)
        for what, field, dash in (
            ("kernel", "kernel_pct", "solid"),
            ("scheduler", "scheduler_pct", "dash"),
        ):
            fig.add_trace(
                go.Scatter(
                    x=[p.x for p in points],
                    y=[getattr(p, field) for p in points],
                    mode="lines+markers",
                    name=f"{esc(build)}: {what}",
                    legendgroup=esc(build),
                    line={"color": colour(i), "dash": dash},
                    customdata=[p.run.run_id for p in points],
                    hovertext=[_hover(p) for p in points],
                    hovertemplate=HOVER,
                )
            )
    return fig

"""A metric across kernel versions: the dashboard's main chart, and the alert view of it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from math import isfinite
from typing import Any

import plotly.graph_objects as go

from dashboards.figures._common import (
    HOVER,
    STOCK_COLOUR,
    axis_title,
    base_layout,
    colour,
    empty_figure,
    esc,
    fmt,
    json_array,
    json_object,
    json_text,
    run_hover,
    to_dict,
)
from dashboards.pure.chartdata import AlertMark, Baseline, Metric, Point, Series


def across_kernels_figure(series: Series, baseline: Baseline | None = None) -> dict[str, Any]:
    """One line for the stock kernels and one per patch set, x in the kernel order given.

    The x axis is categorical with ``categoryorder="array"``: Plotly would otherwise order
    the kernels as they first appear, and "2.4.20" must not land before "2.3.99-pre3".
    With ``baseline``, values are drawn as % of it (002's "Base1 = 100"), which is how the
    papers publish throughput they may not give in absolute terms.
    PNG export comes from the page's Plotly config (mode bar left on).

    The figure's JSON (``across_kernels_json``) read back: one writer of its shape.
    """
    figure: dict[str, Any] = json.loads(across_kernels_json_of(series, baseline))
    return figure


def across_kernels_json_of(series: Series, baseline: Baseline | None = None) -> str:
    """``across_kernels_figure`` as the JSON Plotly takes, each point's texts made anew."""
    order = {kernel: i for i, kernel in enumerate(series.kernels)}
    points = sorted(series.points, key=lambda p: order[p.run.kernel])
    pieces = [point_json(p, series.metric, baseline) for p in points]
    return across_kernels_json(series.metric, series.kernels, pieces, baseline, series.title)


def alert_figure(
    series: Series,
    baseline_run_id: int,
    candidate_run_id: int,
    baseline: Baseline | None = None,
) -> dict[str, Any]:
    """The across-kernels chart with an alert's baseline and candidate runs marked.

    Both get their own marker symbol and an arrowed label, so the pair stands out even when
    the two kernels sit far apart on the axis.
    """
    points = {p.run.run_id: p for p in series.points}
    for run_id in (baseline_run_id, candidate_run_id):
        if run_id not in points:
            raise ValueError(f"run #{run_id} is not in this series")
    fig = go.Figure(across_kernels_figure(series, baseline))
    marks = (
        ("baseline", points[baseline_run_id], "diamond-open", "#000000", -48),
        ("candidate", points[candidate_run_id], "star", "#D55E00", 48),
    )
    for role, point, symbol, mark_colour, arrow_dx in marks:
        y = _scaled(point.value, baseline)
        fig.add_trace(
            go.Scatter(
                x=[esc(point.run.kernel)],
                y=[y],
                mode="markers",
                name=f"{role}: run #{point.run.run_id}",
                marker={"symbol": symbol, "size": 18, "color": mark_colour, "line": {"width": 2}},
                customdata=[point.run.run_id],
                hovertext=[f"<b>{role}</b><br>{point_hover(point, series.metric, baseline)}"],
                hovertemplate=HOVER,
            )
        )
        fig.add_annotation(
            x=esc(point.run.kernel),
            y=y,
            text=f"{role} #{point.run.run_id}",
            showarrow=True,
            arrowhead=2,
            ax=arrow_dx,
            ay=-40,
            font={"color": mark_colour},
        )
    fig.update_layout(showlegend=True)
    return to_dict(fig)


# How an alert is marked, by what a reader does about it: an open regression needs someone
# (red), a pending one waits for the next kernel (amber), an improvement is good news (green),
# a triaged or invalid one needs nothing (grey). Legend order is this order. A cleared alert
# is not drawn: it was a pending move the next kernel took back, never an alert to anyone,
# and a grey ring called "triaged" on a noisy series said a person had looked at it.
ALERT_KINDS = (
    ("open regression", "#D62728"),
    ("pending", "#E69F00"),
    ("improvement", "#2CA02C"),
    ("triaged", "#8C8C8C"),
)
# perfdb.models.Alert.Status values (no Django import here: the builders are pure).
OPEN_STATUSES = frozenset({"untriaged", "acknowledged", "investigating"})


def alert_kind(status: str, direction: str) -> str | None:
    """The mark an alert gets (one of ``ALERT_KINDS``' names), None for a cleared one."""
    if status in OPEN_STATUSES:
        return "open regression" if direction == "regression" else "improvement"
    if status in ("pending", "improvement"):
        return status
    if status == "cleared":
        return None
    return "triaged"  # fixed, wontfix, invalid


def alert_marks(
    series: Series, marks: Sequence[AlertMark], baseline: Baseline | None = None
) -> list[dict[str, Any]]:
    """The series' alerts as marker traces to draw over ``across_kernels_figure``: a ring in
    the kind's colour around each alert's candidate point (same x and y, scaled like the
    lines), one trace per kind present so the legend names the colours. The hover says the
    metric, the change and the status; ``customdata`` is the alert's page, which the page's
    script opens on a click. An alert whose run is not in the series is left out."""
    points = {p.run.run_id: p for p in series.points}
    kinds: dict[str, list[tuple[AlertMark, Point]]] = {name: [] for name, _ in ALERT_KINDS}
    for mark in marks:
        kind = alert_kind(mark.status, mark.direction)
        if kind is not None and mark.run_id in points:
            kinds[kind].append((mark, points[mark.run_id]))
    metric = esc(series.metric.name)
    traces = []
    for name, mark_colour in ALERT_KINDS:
        found = kinds[name]
        if not found:
            continue
        traces.append(
            {
                "type": "scatter",
                "x": [esc(p.run.kernel) for _, p in found],
                "y": [_scaled(p.value, baseline) for _, p in found],
                "mode": "markers",
                "name": f"alert: {name}",
                "legendgroup": "alerts",
                "marker": {
                    "symbol": "circle-open",
                    "size": 20,
                    "color": mark_colour,
                    "line": {"width": 3, "color": mark_colour},
                },
                "customdata": [m.url for m, _ in found],
                "hovertext": [
                    f"<b>alert #{m.alert_id}</b> ({esc(m.direction)})<br>"
                    f"{metric}: {m.change_pct:+.1f} %<br>status: {esc(m.status)}<br>"
                    f"{esc(p.run.build)}, run #{p.run.run_id}<br>click to open the alert"
                    for m, p in found
                ],
                "hovertemplate": HOVER,
            }
        )
    return traces


def _scaled(value: float, baseline: Baseline | None) -> float:
    return value if baseline is None else value / baseline.value * 100


def point_hover(point: Point, metric: Metric, baseline: Baseline | None = None) -> str:
    """A point's hover text: its value (± sd; as % of ``baseline``) and its run's keys."""
    unit = metric.unit
    measured = fmt(point.value, unit)
    if point.sd is not None:
        measured += f" ± {fmt(point.sd, unit)}"
    if baseline is not None:
        relative = fmt(_scaled(point.value, baseline))
        measured = f"{relative} % of {esc(baseline.label)} ({measured})"
    return f"{esc(metric.name)}: {measured}<br>{run_hover(point.run)}"


# A point of the across-kernels figure (``point_json``): the line it is drawn on (not JSON:
# its patch set's label, "" for the stock kernels), then what that line holds of it, each
# value written as JSON: x (its kernel), y, its sd, its run id (customdata) and its hover
# text. A point's texts depend neither on its place nor on the other points: a figure kept
# between uploads keeps them and makes only its new points' (``across_kernels_kept``), and
# is joined from them (``across_kernels_json``) rather than written whole again.
PointJSON = tuple[str, str, str, str, str, str]


def point_json(point: Point, metric: Metric, baseline: Baseline | None = None) -> PointJSON:
    """The point's texts in the figure of its series (``metric``), drawn as % of
    ``baseline`` if any (a value that is not a finite number as null, as ``plain`` writes
    it)."""
    if baseline is not None and baseline.value == 0:
        raise ValueError("a relative chart needs a non-zero baseline value")
    hover = point_hover(point, metric, baseline)
    run = point.run
    sd = None if point.sd is None else _finite(_scaled(point.sd, baseline))
    return (
        run.patch_label if run.patches else "",
        json_text(esc(run.kernel)),
        json_text(_finite(_scaled(point.value, baseline))),
        json_text(sd),
        json_text(run.run_id),
        json_text(hover),
    )


# The layout's ``template`` and a baseline's dotted line at 100 as Plotly writes them for
# ``base_layout``'s ``template="none"`` and ``add_hline`` (tests/dashboards/figures/test_kernels.py
# compares the layout with Plotly's, value for value).
TEMPLATE_NONE = {"data": {"scatter": [{"type": "scatter"}]}}
BASELINE_LINE = {
    "line": {"color": "#888888", "dash": "dot", "width": 1},
    "type": "line",
    "x0": 0,
    "x1": 1,
    "xref": "x domain",
    "y0": 100,
    "y1": 100,
    "yref": "y",
}


def across_kernels_json(
    metric: Metric,
    kernels: Sequence[str],
    points: Sequence[PointJSON],
    baseline: Baseline | None = None,
    title: str = "",
) -> str:
    """The across-kernels figure (``across_kernels_figure``) as the compact JSON Plotly
    takes, joined from its points' texts (``point_json`` with this ``baseline``) in kernel
    order (``kernels``: the x axis). Written as Plotly's graph objects give it, without
    their validation, which was most of the CPU of a 1,000-point series' figure computed
    after an upload (tests/dashboards/figures/test_kernels.py compares the two value for value);
    with each point's texts made once, what is left is joining them."""
    lines = _lines(points)
    data = [_line(i, patches, members) for i, (patches, members) in enumerate(lines)]
    name = esc(title or f"{metric.name} across kernels")
    if not points:
        return json_text(empty_figure(name))
    if baseline is None:
        y_title = axis_title(metric.name, metric.unit)
    else:
        label = esc(baseline.label)
        y_title = f"{esc(metric.name)}, % of {label} ({label} = 100)"
    layout = base_layout(name, "kernel version", y_title, n_legend=len(lines))
    layout["template"] = TEMPLATE_NONE
    layout["xaxis"].update(
        type="category",
        categoryorder="array",
        tickangle=-30,
        categoryarray=[esc(k) for k in kernels],
    )
    if baseline is not None:
        layout["shapes"] = [BASELINE_LINE]
    return json_object({"data": json_array(data), "layout": json_text(layout)})


def across_kernels_kept(
    metric: Metric,
    kernels: Sequence[str],
    order: Sequence[int],
    kept: Mapping[int, str],
    added: Iterable[Point],
) -> tuple[str, dict[int, str]]:
    """The figure without a baseline (``across_kernels_json``) of the points whose run ids
    are ``order`` (kernel order), joined from each point's text kept from before (``kept``,
    by run id), those of the points ``added`` since made first; with every point's text,
    to keep for the next time. A point's text is its ``point_json`` as one string: a kept
    figure is read, and stored again, after each upload, and 1,000 texts pickle seven
    times faster than 1,000 tuples of six. Joined by newlines, which none of its JSON
    texts holds (written in ASCII, a newline escaped), its line's label first (it may hold
    one: ``_piece`` splits from the right)."""
    texts = dict(kept)
    texts.update((p.run.run_id, "\n".join(point_json(p, metric))) for p in added)
    points = [_piece(texts[run_id]) for run_id in order]
    return across_kernels_json(metric, kernels, points), texts


def _piece(text: str) -> PointJSON:
    line, x, y, sd, run, hover = text.rsplit("\n", 5)
    return line, x, y, sd, run, hover


# Where a figure's data ends (``across_kernels_json``: ``{"data":[...],"layout":{...}}``).
# The only place it can be: inside a JSON string every quote is escaped.
DATA_END = b'],"layout":'


def with_marks(figure: bytes, traces: bytes) -> bytes:
    """``figure`` (``across_kernels_json``) with ``traces`` (``alert_marks``' JSON,
    comma-joined without the list's brackets) after its own: drawn over the series, in the
    alerts' order (a newer mark on top)."""
    if not traces:
        return figure
    end = figure.index(DATA_END)
    comma = b"" if figure[end - 1 : end] == b"[" else b","
    return b"".join((figure[:end], comma, traces, figure[end:]))


def _lines(points: Sequence[PointJSON]) -> list[tuple[str, list[PointJSON]]]:
    """Points (in kernel order) grouped by line: stock first, then patch sets by their
    first kernel."""
    lines: dict[str, list[PointJSON]] = {}
    for point in points:
        lines.setdefault(point[0], []).append(point)
    stock = [("", lines.pop(""))] if "" in lines else []
    return stock + list(lines.items())


def _line(i: int, patches: str, points: list[PointJSON]) -> str:
    """One patch set's line (the stock kernels' when ``patches`` is empty) as JSON."""
    is_stock = patches == ""
    _, xs, ys, sds, runs, hovers = zip(*points, strict=True)
    error_y = {"type": json_text("data"), "array": json_array(sds), "visible": json_text(True)}
    line = {"color": STOCK_COLOUR if is_stock else colour(i), "width": 3 if is_stock else 2}
    return json_object(
        {
            "type": json_text("scatter"),
            "x": json_array(xs),
            "y": json_array(ys),
            "error_y": json_object(error_y),
            "mode": json_text("lines+markers"),
            "name": json_text("stock kernels" if is_stock else f"+{esc(patches)}"),
            "line": json_text(line),
            "marker": json_text({"size": 8}),
            "customdata": json_array(runs),
            "hovertext": json_array(hovers),
            "hovertemplate": json_text(HOVER),
        }
    )


def _finite(value: float) -> float | None:
    return value if isfinite(value) else None

"""try_to_wake_up counters and priority preemptions by nice pair (001 Tables 1-2).

The traces are plain data, as Plotly's ``to_plotly_json()`` gives them, without its
validating graph objects (~1 ms a trace, most of a page of 24 thresholds' 96 traces on an
emptied cache); the layouts are Plotly's, made once (the bars') or once a call (the heatmaps').
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboards.figures._common import (
    HOVER,
    base_layout,
    colour,
    empty_figure,
    fmt,
    plain,
    run_hover,
    to_dict,
)
from dashboards.pure.chartdata import WakeupRow

# field -> (label, unit); the three columns of 001's tables.
VALUES = {
    "throughput": ("throughput", "msg/s"),
    "wakeup_calls": ("try_to_wake_up calls", "calls"),
    "preempt_pct": ("priority preemptions", "% of wakeups"),
}


def nice(n: int) -> str:
    """A nice value as 001 writes it: 0, -19, +19."""
    return "0" if n == 0 else f"{n:+d}"


def pair_label(row: WakeupRow) -> str:
    return f"{nice(row.server_nice)} / {nice(row.client_nice)}"


def wakeups_figures(
    rows: tuple[WakeupRow, ...], heatmap_value: str = "throughput"
) -> dict[str, dict[str, Any]]:
    """Grouped bars for all three columns, and one heatmap per preemption threshold.

    Returns ``{"bars": fig, "heatmap_<threshold>": fig, ...}`` (``heatmap_0``,
    ``heatmap_40`` for 001). The heatmaps share one colour scale, so a cell in the threshold
    40 map can be read against the same cell at threshold 0. PNG export comes from the page's
    Plotly config.
    """
    if heatmap_value not in VALUES:
        raise ValueError(f"heatmap_value must be one of {sorted(VALUES)}")
    if not rows:
        return {"bars": empty_figure("Wakeups and priority preemptions by nice pair")}
    figures = {"bars": _bars(rows)}
    thresholds = sorted({r.threshold for r in rows})
    values = [getattr(r, heatmap_value) for r in rows]
    z_range = (min(values), max(values))
    heatmap_layout = _heatmap_layout()
    for threshold in thresholds:
        subset = tuple(r for r in rows if r.threshold == threshold)
        figures[f"heatmap_{threshold}"] = _heatmap(
            subset, threshold, heatmap_value, z_range, heatmap_layout
        )
    return figures


def _hover(row: WakeupRow) -> str:
    return (
        f"server nice {nice(row.server_nice)}, client nice {nice(row.client_nice)}, "
        f"preemption threshold {row.threshold}<br>"
        f"throughput: {fmt(row.throughput, 'msg/s')}<br>"
        f"try_to_wake_up calls: {fmt(row.wakeup_calls)}<br>"
        f"priority preemptions: {fmt(row.preempt_pct, '%')}<br>"
        f"{run_hover(row.run)}"
    )


def _bars(rows: tuple[WakeupRow, ...]) -> dict[str, Any]:
    """One subplot per column; x = nice pairs in the order given; one bar per threshold."""
    pairs = list(dict.fromkeys(pair_label(r) for r in rows))
    thresholds = sorted({r.threshold for r in rows})
    layout = copy.deepcopy(_bars_layout(len(thresholds)))
    for row_no in range(1, len(VALUES) + 1):
        layout["xaxis" if row_no == 1 else f"xaxis{row_no}"]["categoryarray"] = list(pairs)
    hover = {id(r): _hover(r) for r in rows}
    traces = []
    for row_no, field in enumerate(VALUES, start=1):
        axis = "" if row_no == 1 else str(row_no)
        for i, threshold in enumerate(thresholds):
            subset = [r for r in rows if r.threshold == threshold]
            traces.append(
                {
                    "type": "bar",
                    "x": [pair_label(r) for r in subset],
                    "y": [getattr(r, field) for r in subset],
                    "name": f"preemption threshold {threshold}",
                    "legendgroup": str(threshold),
                    "showlegend": row_no == 1,
                    "marker": {"color": colour(i)},
                    "customdata": [r.run.run_id for r in subset],
                    "hovertext": [hover[id(r)] for r in subset],
                    "hovertemplate": HOVER,
                    "xaxis": f"x{axis}",
                    "yaxis": f"y{axis}",
                }
            )
    return {"data": plain(traces), "layout": layout}


@functools.lru_cache(maxsize=32)
def _bars_layout(n_thresholds: int) -> dict[str, Any]:
    """The bars' layout (Plotly's subplots, validated once per number of thresholds: ~18 ms
    each time), each x axis's categories left empty for the nice pairs."""
    fig = make_subplots(rows=len(VALUES), cols=1, shared_xaxes=True, vertical_spacing=0.05)
    title = "Wakeups and priority preemptions by nice pair"
    layout = base_layout(title, "", "", n_legend=n_thresholds, height=220 * len(VALUES) + 160)
    for axis in ("xaxis", "yaxis"):  # make_subplots owns the axes
        del layout[axis]
    fig.update_layout(layout, barmode="group")
    for row_no, (label, unit) in enumerate(VALUES.values(), start=1):
        fig.update_yaxes(title_text=f"{label} ({unit})", row=row_no, col=1)
        fig.update_xaxes(
            type="category", categoryorder="array", categoryarray=[], row=row_no, col=1
        )
    fig.update_xaxes(title_text="server nice / client nice", row=len(VALUES), col=1)
    made: dict[str, Any] = to_dict(fig)["layout"]
    return made


def _heatmap_layout() -> dict[str, Any]:
    """Every heatmap's layout (Plotly's, validated once), its title and categories to fill."""
    layout = base_layout("", "client nice", "server nice")
    layout["xaxis"].update(type="category", categoryorder="array")
    layout["yaxis"].update(type="category", categoryorder="array")
    made: dict[str, Any] = to_dict(go.Figure(layout=layout))["layout"]
    return made


def _heatmap(
    rows: tuple[WakeupRow, ...],
    threshold: int,
    field: str,
    z_range: tuple[float, float],
    heatmap_layout: dict[str, Any],
) -> dict[str, Any]:
    """Server nice down, client nice across; empty cells stay empty, not zero."""
    label, unit = VALUES[field]
    servers = sorted({r.server_nice for r in rows})
    clients = sorted({r.client_nice for r in rows})
    cells = {(r.server_nice, r.client_nice): r for r in rows}
    grid = [[cells.get((s, c)) for c in clients] for s in servers]
    layout = copy.deepcopy(heatmap_layout)
    layout["title"]["text"] = f"{label} by nice pair, preemption threshold {threshold}"
    layout["xaxis"]["categoryarray"] = [nice(c) for c in clients]
    layout["yaxis"]["categoryarray"] = [nice(s) for s in servers]
    trace = {
        "type": "heatmap",
        "x": [nice(c) for c in clients],
        "y": [nice(s) for s in servers],
        "z": [[None if r is None else getattr(r, field) for r in line] for line in grid],
        "zmin": z_range[0],
        "zmax": z_range[1],
        "colorscale": _VIRIDIS,
        "colorbar": {"title": {"text": f"{label}<br>({unit})"}},
        "text": [["" if r is None else fmt(getattr(r, field)) for r in line] for line in grid],
        "texttemplate": "%{text}",
        "customdata": [[None if r is None else r.run.run_id for r in line] for line in grid],
        "hovertext": [["" if r is None else _hover(r) for r in line] for line in grid],
        "hovertemplate": HOVER,
    }
    return {"data": [plain(trace)], "layout": layout}


# Plotly's "Viridis" as its graph objects write a named colour scale into the figure.
_VIRIDIS = plain(go.Heatmap(colorscale="Viridis").to_plotly_json()["colorscale"])

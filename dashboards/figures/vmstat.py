"""vmstat samples of one or several runs, overlaid (002 Tables 3, 4, 12, 13)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboards.figures._common import (
    HOVER,
    base_layout,
    colour,
    empty_figure,
    esc,
    fmt,
    run_hover,
    run_label,
    to_dict,
)
from dashboards.pure.chartdata import VmstatRun

# (group, y-axis unit, columns) in procps' header order; units per formats/REPORT.md.
GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("procs", "tasks", ("r", "b", "w")),
    ("system", "per second", ("in", "cs")),
    ("cpu", "% of CPU time", ("us", "sy", "id", "wa", "st", "gu")),
    ("memory", "KiB", ("swpd", "free", "buff", "cache", "inact", "active")),
    ("swap", "KiB/s", ("si", "so")),
    ("io", "blocks/s", ("bi", "bo")),
)
DEFAULT_GROUPS = ("procs", "system", "cpu")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SINCE_BOOT_NOTE = "first sample (averages since boot) left out"


def samples(run: VmstatRun) -> list[tuple[int, tuple[float, ...], str]]:
    """(sample number, row, timestamp) for the rows charted, numbered from 1.

    The since-boot row is excluded, not drawn: it averages the whole uptime and would pull
    the axis away from the run's real samples.
    """
    for row in run.rows:
        if len(row) != len(run.columns):
            raise ValueError(f"run #{run.run.run_id}: a vmstat row does not match the header")
    skip = 1 if run.first_is_since_boot else 0
    stamps = run.timestamps or ("",) * len(run.rows)
    kept = zip(run.rows, stamps, strict=True)
    # Row p is sample p * stride of the file; numbering starts at 1 after any since-boot row.
    return [
        (p * run.stride + 1 - skip, row, stamp) for p, (row, stamp) in enumerate(kept) if p >= skip
    ]


def column_groups(source: str, columns: list[str]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """The subplot groups of a time-series source: vmstat's by kind (procs, cpu, …); for any
    other source (sar, iostat, mpstat, dbench, perf-stat) one group per column, its own axis."""
    if source == "vmstat":
        return GROUPS
    return tuple((column, "", (column,)) for column in columns)


def vmstat_figure(
    runs: tuple[VmstatRun, ...],
    groups: tuple[str, ...] = DEFAULT_GROUPS,
    title: str = "",
    group_table: tuple[tuple[str, str, tuple[str, ...]], ...] = GROUPS,
) -> dict[str, Any]:
    """One subplot per column group, each run in its own colour, each column its own dash.

    x is the sample number (runs started at different times, so timestamps would not
    overlay; they are in the hover). PNG export comes from the page's Plotly config.
    """
    title = esc(title or "vmstat")
    present = {c for run in runs for c in run.columns}
    chosen = [g for g in group_table if g[0] in groups and present.intersection(g[2])]
    if not runs or not chosen or not any(samples(r) for r in runs):
        return empty_figure(title)
    fig = make_subplots(
        rows=len(chosen),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.06,
        subplot_titles=[name for name, _, _ in chosen],
    )
    n_traces = 0
    for row_no, (_, unit, columns) in enumerate(chosen, start=1):
        for run_no, run in enumerate(runs):
            for col_no, column in enumerate(c for c in columns if c in run.columns):
                fig.add_trace(
                    _trace(run, column, colour(run_no), DASHES[col_no]), row=row_no, col=1
                )
                n_traces += 1
        fig.update_yaxes(title_text=unit, rangemode="tozero", row=row_no, col=1)
    x_title = "sample number"
    if any(r.first_is_since_boot for r in runs):
        x_title += f"<br><i>{SINCE_BOOT_NOTE}</i>"
    thinned = max(r.stride for r in runs)
    if thinned > 1:
        x_title += f"<br><i>long series thinned: every {thinned}th sample drawn</i>"
    fig.update_xaxes(title_text=x_title, row=len(chosen), col=1)
    height = 240 * len(chosen) + 120 + 18 * (n_traces // 3)
    layout = base_layout(title, "", "", n_legend=n_traces, height=height)
    for axis in ("xaxis", "yaxis"):  # make_subplots owns the axes
        del layout[axis]
    fig.update_layout(layout)
    return to_dict(fig)


def _trace(run: VmstatRun, column: str, line_colour: str, dash: str) -> go.Scatter:
    index = run.columns.index(column)
    kept = samples(run)
    return go.Scatter(
        x=[n for n, _, _ in kept],
        y=[row[index] for _, row, _ in kept],
        mode="lines+markers",
        name=f"{esc(column)}: {run_label(run.run)}",
        line={"color": line_colour, "dash": dash},
        marker={"size": 5},
        customdata=[run.run.run_id] * len(kept),
        hovertext=[
            f"sample {n}{' at ' + esc(stamp) if stamp else ''}<br>"
            f"{esc(column)} = {fmt(row[index])}<br>{run_hover(run.run)}"
            for n, row, stamp in kept
        ],
        hovertemplate=HOVER,
    )

"""The profile diff as a diverging bar chart: which kernel functions gained or lost share.

Pure: ``perfdb.features.profile_diff`` rows in, a JSON-ready figure out. One horizontal bar per
function, its change in share of the side's busy (non-idle) kernel ticks (points), the scheduler
set summed as its own bar on top; red grew, blue shrank (colour-blind safe), and each bar says
so in words, with "new" / "gone" for functions that appear or vanish.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from dashboards.figures._common import HOVER, base_layout, empty_figure, esc, fmt, to_dict
from perfdb.features.profile_diff import DiffRow

GREW, SHRANK = "#D55E00", "#0072B2"
STATUS_TEXT = {"appeared": " (new)", "vanished": " (gone)", "set": "", "both": ""}


def _label(row: DiffRow) -> str:
    return esc(row.function)


def _hover(row: DiffRow, base: str, new: str) -> str:
    lines = [
        f"<b>{esc(row.function)}</b>{STATUS_TEXT[row.status]}",
        f"{esc(base)}: {fmt(row.base_ticks)} ticks, {row.base_share_pct:.2f} % of busy ticks",
        f"{esc(new)}: {fmt(row.new_ticks)} ticks, {row.new_share_pct:.2f} % of busy ticks",
        f"change: {row.delta_share_pp:+.2f} points",
    ]
    if row.base_ticks_per_work is not None and row.new_ticks_per_work is not None:
        lines.append(
            f"ticks per unit of work: {fmt(row.base_ticks_per_work)} → "
            f"{fmt(row.new_ticks_per_work)}"
        )
    return "<br>".join(lines)


def profile_diff_figure(
    rows: Sequence[DiffRow], base_label: str, new_label: str, title: str = ""
) -> dict[str, Any]:
    """Bars top to bottom in the order given (the scheduler line first, then the movers)."""
    title = esc(title or f"Kernel functions: {new_label} against {base_label}")
    if not rows:
        return empty_figure(title, "Neither side has a kernel profile.")
    labels = []
    for row in rows:
        label = _label(row)
        while label in labels:
            label += " "
        labels.append(label)
    height = max(320, 140 + 30 * len(rows))
    layout = base_layout(title, "change in share of busy kernel ticks (points)", "", 2, height)
    layout["yaxis"].update(
        type="category", categoryorder="array", categoryarray=labels, autorange="reversed"
    )
    deltas = [r.delta_share_pp for r in rows]
    span = max([abs(d) for d in deltas] + [0.5])
    layout["xaxis"].update(
        zeroline=True, zerolinewidth=2, zerolinecolor="#444444", range=[-1.6 * span, 1.6 * span]
    )
    fig = go.Figure(layout=layout)
    for name, colour, keep in (
        ("grew", GREW, lambda d: d > 0),
        ("shrank or unchanged", SHRANK, lambda d: d <= 0),
    ):
        picked = [(lab, r) for lab, r in zip(labels, rows, strict=True) if keep(r.delta_share_pp)]
        if not picked:
            continue
        fig.add_trace(
            go.Bar(
                orientation="h",
                y=[lab for lab, _ in picked],
                x=[r.delta_share_pp for _, r in picked],
                name=name,
                marker={"color": colour},
                text=[f"{r.delta_share_pp:+.2f}{STATUS_TEXT[r.status]}" for _, r in picked],
                textposition="outside",
                cliponaxis=False,
                hovertext=[_hover(r, base_label, new_label) for _, r in picked],
                hovertemplate=HOVER,
            )
        )
    return to_dict(fig)

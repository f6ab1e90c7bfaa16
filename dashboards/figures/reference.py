"""The reference build's own runs over time, beside an alert: did the machine move too?
Pure: (run id, when, mean, recent?) rows in, a figure out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from dashboards.figures._common import HOVER, base_layout, empty_figure, esc, fmt, to_dict


def reference_figure(
    rows: Sequence[tuple[int, str, float, bool]], build: str, metric: str, unit: str
) -> dict[str, Any]:
    title = esc(f"Reference {build}: {metric} run by run")
    if not rows:
        return empty_figure(title, "The reference has no runs of this metric.")
    layout = base_layout(title, "run uploaded", f"{esc(metric)} ({esc(unit)})", 2)
    fig = go.Figure(layout=layout)
    for name, colour, recent in (
        ("older runs", "#0072B2", False),
        ("recent runs", "#D55E00", True),
    ):
        picked = [r for r in rows if r[3] == recent]
        if not picked:
            continue
        fig.add_trace(
            go.Scatter(
                x=[r[1] for r in picked],
                y=[r[2] for r in picked],
                mode="markers",
                name=name,
                marker={"color": colour, "size": 10},
                customdata=[r[0] for r in picked],
                hovertext=[f"run #{r[0]}, {esc(r[1])}: {fmt(r[2], unit)}" for r in picked],
                hovertemplate=HOVER,
            )
        )
    return to_dict(fig)

"""Top kernel functions per run as stacked bars (000 Figures 2, 3, 9, 12; 002 Tables 5-6)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from dashboards.chartdata import KernelProfile
from dashboards.figures._common import (
    HOVER,
    OTHER_COLOUR,
    base_layout,
    colour,
    empty_figure,
    esc,
    fmt,
    run_hover,
    run_label,
    to_dict,
)

OTHER = "other"


def shares(profile: KernelProfile) -> dict[str, float]:
    """% of the profile's total ticks per function."""
    result: dict[str, float] = {}
    if profile.total <= 0:
        return result
    for function, ticks in profile.ticks:
        result[function] = result.get(function, 0.0) + ticks / profile.total * 100
    return result


def top_functions(profiles: tuple[KernelProfile, ...], top_n: int) -> list[str]:
    """The N functions with the largest *sum* of shares across the runs shown.

    This is 000's rule: one set of functions for every bar, so the bars can be compared,
    even if a function that tops one run misses the overall top N. Ties go by name so the
    choice does not depend on input order.
    """
    totals: dict[str, float] = {}
    for profile in profiles:
        for function, share in shares(profile).items():
            totals[function] = totals.get(function, 0.0) + share
    return sorted(totals, key=lambda f: (-totals[f], f))[:top_n]


def top_functions_figure(
    profiles: tuple[KernelProfile, ...], top_n: int = 10, title: str = ""
) -> dict[str, Any]:
    """One stacked bar per run: the top-N functions' % of kernel time, the rest as "other".

    As in 000, the function with the largest total share is at the bottom of every bar.
    PNG export comes from the page's Plotly config.
    """
    title = esc(title or f"Top {top_n} kernel functions")
    if not profiles:
        return empty_figure(title)
    top = top_functions(profiles, top_n)
    per_run = [shares(p) for p in profiles]
    labels = [run_label(p.run) for p in profiles]
    layout = base_layout(title, "run", "% of kernel time", n_legend=len(top) + 1)
    layout.update(barmode="stack", legend={**layout["legend"], "traceorder": "normal"})
    layout["xaxis"].update(type="category", categoryorder="array", categoryarray=labels)
    layout["yaxis"].update(range=[0, 100])
    fig = go.Figure(layout=layout)
    for i, function in enumerate(top):
        values = [run_shares.get(function, 0.0) for run_shares in per_run]
        fig.add_trace(_bar(esc(function), values, profiles, labels, colour(i)))
    other = [max(0.0, 100 - sum(s.get(f, 0.0) for f in top)) for s in per_run]
    fig.add_trace(_bar(OTHER, other, profiles, labels, OTHER_COLOUR))
    return to_dict(fig)


def _bar(
    name: str,
    values: list[float],
    profiles: tuple[KernelProfile, ...],
    labels: list[str],
    bar_colour: str,
) -> go.Bar:
    return go.Bar(
        x=labels,
        y=values,
        name=name,
        marker={"color": bar_colour},
        customdata=[p.run.run_id for p in profiles],
        hovertext=[
            f"<b>{name}</b>: {fmt(v, '%')} of kernel time<br>{run_hover(p.run)}"
            for v, p in zip(values, profiles, strict=True)
        ],
        hovertemplate=HOVER,
    )

"""Top kernel functions per run as stacked bars (000 Figures 2, 3, 9, 12; 002 Tables 5-6).

The idle loop (``default_idle``, ``intel_idle``, …, the set of the run's kernel era in
``perfdb.kernels.functions``) is drawn apart, as its own small panel of % of all ticks over the
busy functions' bars: on a machine that waits it is most of the profile (002 Table 6: 54,048 of
60,332 ticks), so it had led the "top functions" and squeezed every busy function into a
sliver. The busy functions are ranked among themselves and drawn as shares of busy ticks.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

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
from dashboards.pure.chartdata import KernelProfile
from perfdb.kernels.functions import idle_functions

OTHER = "other"
IDLE = "idle"
IDLE_COLOUR = "#777777"
BUSY_DOMAIN, IDLE_DOMAIN = (0.0, 0.72), (0.8, 1.0)


def idle_ticks(profile: KernelProfile) -> float:
    """Ticks in the idle functions of the run's kernel era."""
    idle = idle_functions(profile.run.kernel)
    return sum(ticks for function, ticks in profile.ticks if function in idle)


def idle_share(profile: KernelProfile) -> float:
    """% of the profile's total ticks in the idle loop."""
    return idle_ticks(profile) / profile.total * 100 if profile.total > 0 else 0.0


def shares(profile: KernelProfile) -> dict[str, float]:
    """% of the profile's busy (non-idle) ticks per busy function."""
    result: dict[str, float] = {}
    busy = profile.total - idle_ticks(profile)
    if busy <= 0:
        return result
    idle = idle_functions(profile.run.kernel)
    for function, ticks in profile.ticks:
        if function not in idle:
            result[function] = result.get(function, 0.0) + ticks / busy * 100
    return result


def top_functions(profiles: tuple[KernelProfile, ...], top_n: int) -> list[str]:
    """The N busy functions with the largest *sum* of shares across the runs shown.

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
    """One stacked bar per run: the top-N busy functions' % of busy kernel time, the rest
    as "other"; above it, the run's idle share of all ticks.

    As in 000, the function with the largest total share is at the bottom of every bar.
    PNG export comes from the page's Plotly config.
    """
    title = esc(title or f"Top {top_n} kernel functions")
    if not profiles:
        return empty_figure(title)
    top = top_functions(profiles, top_n)
    per_run = [shares(p) for p in profiles]
    labels = [run_label(p.run) for p in profiles]
    layout = base_layout(title, "run", "% of busy kernel time", n_legend=len(top) + 2, height=None)
    layout["height"] += 120  # the idle panel
    layout.update(barmode="stack", legend={**layout["legend"], "traceorder": "normal"})
    layout["xaxis"].update(type="category", categoryorder="array", categoryarray=labels)
    layout["yaxis"].update(range=[0, 100], domain=list(BUSY_DOMAIN))
    layout["yaxis2"] = {
        "domain": list(IDLE_DOMAIN),
        "anchor": "x",
        "range": [0, 100],
        "title": {"text": "idle, % of all"},
        "automargin": True,
        "zeroline": False,
    }
    fig = go.Figure(layout=layout)
    for i, function in enumerate(top):
        values = [run_shares.get(function, 0.0) for run_shares in per_run]
        fig.add_trace(_bar(esc(function), values, profiles, labels, colour(i)))
    other = [max(0.0, 100 - sum(s.get(f, 0.0) for f in top)) if s else 0.0 for s in per_run]
    fig.add_trace(_bar(OTHER, other, profiles, labels, OTHER_COLOUR))
    idle = [idle_share(p) for p in profiles]
    fig.add_trace(_bar(IDLE, idle, profiles, labels, IDLE_COLOUR, "of all ticks", "y2"))
    return to_dict(fig)


def _bar(
    name: str,
    values: list[float],
    profiles: tuple[KernelProfile, ...],
    labels: list[str],
    bar_colour: str,
    of: str = "of busy kernel time",
    yaxis: str = "y",
) -> go.Bar:
    return go.Bar(
        x=labels,
        y=values,
        name=name,
        yaxis=yaxis,
        marker={"color": bar_colour},
        customdata=[p.run.run_id for p in profiles],
        hovertext=[
            f"<b>{name}</b>: {fmt(v, '%')} {of}<br>{run_hover(p.run)}"
            for v, p in zip(values, profiles, strict=True)
        ],
        hovertemplate=HOVER,
    )

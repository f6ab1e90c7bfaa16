"""The change each patch of a stack brings, as a waterfall (pure: an Attribution in).

Stock first (its mean), then one bar per patch: its change against the build below it (the
previous prefix, or stock for a patch measured alone), labelled with the policy's verdict;
then the whole stack as measured, or — when no run has the whole stack — the sum of the
steps, labelled as a prediction that holds only if the patches do not interact.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from dashboards.figures._common import base_layout, empty_figure, esc, fmt, to_dict
from perfdb.features.attribution import Attribution, Step, build_name

GOOD, BAD, LEVEL = "#1A9850", "#D73027", "#444444"


def _step_text(step: Step) -> str:
    if step.verdict is None:
        return f"not measured: {step.needed}"
    v = step.verdict
    word = v.direction if v.significant else "not significant"
    return f"{v.change_pct:+.1f} % {word}"


def attribution_figure(a: Attribution, metric: str, unit: str, better: str) -> dict[str, Any]:
    title = esc(f"{metric}: what each patch on {a.kernel} brings")
    if a.stock_mean is None or not a.steps:
        return empty_figure(title, "No stock run of this kernel to measure the patches against.")
    x = [esc(build_name(a.kernel, ()))]
    y: list[float] = [a.stock_mean]
    measure = ["absolute"]
    text = [fmt(a.stock_mean, unit)]
    hover = [f"{esc(build_name(a.kernel, ()))}: {fmt(a.stock_mean, unit)}"]
    for step in a.steps:
        x.append(esc(_step_label(step, several=len(a.steps) > 1)))
        y.append(step.delta or 0.0)
        measure.append("relative")
        text.append(esc(_step_text(step)))
        hover.append(_step_hover(a, step))
    if a.stack_mean is not None and len(a.steps) > 1:
        x.append(esc(f"{build_name(a.kernel, a.stack)} as measured"))
        y.append(a.stack_mean)
        measure.append("absolute")
        verdict = a.total
        text.append(
            fmt(a.stack_mean, unit) + (f" ({verdict.change_pct:+.1f} %)" if verdict else "")
        )
        hover.append(esc(text[-1]))
    elif len(a.steps) > 1:
        x.append("sum if additive")
        y.append(0.0)
        measure.append("total")
        text.append("predicted")
        hover.append("no run has the whole stack: the sum of the steps, if they add up")
    up, down = (GOOD, BAD) if better == "higher" else (BAD, GOOD)
    layout = base_layout(title, "", f"{esc(metric)} ({esc(unit)})", 0, 440)
    layout["xaxis"].update(type="category")
    layout["yaxis"].update(range=_range(y, measure))
    fig = go.Figure(layout=layout)
    fig.add_trace(
        go.Waterfall(
            x=x,
            y=y,
            measure=measure,
            text=text,
            textposition="outside",
            cliponaxis=False,
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
            increasing={"marker": {"color": up}},
            decreasing={"marker": {"color": down}},
            totals={"marker": {"color": LEVEL}},
            connector={"line": {"color": "#999999", "dash": "dot"}},
        )
    )
    return to_dict(fig)


def _step_label(step: Step, *, several: bool) -> str:
    return f"+{step.patch}" + (" (alone)" if step.method == "alone" and several else "")


def _step_hover(a: Attribution, step: Step) -> str:
    """What the step compared, and the verdict's reason or the runs that would settle it."""
    detail = (
        f"{esc(build_name(a.kernel, step.candidate))} against "
        f"{esc(build_name(a.kernel, step.base))}<br>{esc(step.verdict.reason)}"
        if step.verdict
        else esc(step.needed)
    )
    return f"<b>{esc(step.patch)}</b>: {esc(_step_text(step))}<br>{detail}"


def _range(y: list[float], measure: list[str]) -> list[float]:
    """Around the levels the bars reach, not from 0: a 4 % step on 100 must be visible."""
    levels, level = [], 0.0
    for value, kind in zip(y, measure, strict=True):
        level = value if kind == "absolute" else level + (value if kind == "relative" else 0)
        levels.append(level)
    low, high = min(levels), max(levels)
    pad = max((high - low) * 0.6, abs(levels[0]) * 0.02, 1e-9)
    return [low - pad, high + pad]

"""Per-metric % change between two runs, coloured by whether it is better or worse."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from dashboards.figures._common import (
    HOVER,
    base_layout,
    empty_figure,
    esc,
    fmt,
    run_hover,
    to_dict,
)
from dashboards.pure.chartdata import CompareRow
from dashboards.pure.compare_text import p_text, percent_text

BETTER, WORSE, NOT_SIGNIFICANT = "better", "worse", "not significant"
COLOURS = {BETTER: "#1A9850", WORSE: "#D73027", NOT_SIGNIFICANT: "#999999"}
DEFAULT_ALPHA = 0.05


def pct_change(row: CompareRow) -> float | None:
    if row.baseline_value == 0:
        return None
    return (row.candidate_value - row.baseline_value) / row.baseline_value * 100


def is_significant(row: CompareRow, alpha: float = DEFAULT_ALPHA) -> bool:
    """The compare table's verdict (the detector's rule, ``perfdb.detector.policy.judge``) when the
    row carries it; else a t-test's p-value, else the metric's threshold, else no."""
    change = pct_change(row)
    if change is None:
        return False
    if row.significant is not None:
        return row.significant
    if row.p_value is not None:
        return row.p_value < alpha
    if row.threshold_pct is not None:
        return abs(change) >= row.threshold_pct
    return False


def verdict(row: CompareRow, alpha: float = DEFAULT_ALPHA) -> str:
    """better / worse in the metric's own direction (msg/s up, µs down), if significant."""
    change = pct_change(row)
    if change is None or change == 0 or not is_significant(row, alpha):
        return NOT_SIGNIFICANT
    return BETTER if (change > 0) == row.metric.higher_is_better else WORSE


def compare_figure(
    rows: tuple[CompareRow, ...], alpha: float = DEFAULT_ALPHA, title: str = ""
) -> dict[str, Any]:
    """Horizontal bars of % change, one per row, top to bottom in the order given.

    One trace per verdict, so the legend explains the colours; each bar also says its
    verdict in words for readers who cannot tell red from green. A click opens the
    candidate run. PNG export comes from the page's Plotly config.
    """
    title = esc(title or "Candidate against baseline")
    if not rows:
        return empty_figure(title, "Nothing to compare yet — pick two runs.")
    labels = _labels(rows)
    height = max(320, 160 + 48 * len(rows))
    layout = base_layout(title, "% change, candidate vs baseline", "", n_legend=3, height=height)
    layout["yaxis"].update(
        type="category", categoryorder="array", categoryarray=labels, autorange="reversed"
    )
    layout["xaxis"].update(
        zeroline=True, zerolinewidth=2, zerolinecolor="#444444", range=_padded_range(rows)
    )
    fig = go.Figure(layout=layout)
    for kind in (BETTER, WORSE, NOT_SIGNIFICANT):
        picked = [
            (label, r) for label, r in zip(labels, rows, strict=True) if verdict(r, alpha) == kind
        ]
        if not picked:
            continue
        changes = [pct_change(r) for _, r in picked]
        fig.add_trace(
            go.Bar(
                orientation="h",
                y=[label for label, _ in picked],
                x=changes,
                name=kind,
                marker={"color": COLOURS[kind]},
                text=[f"{c:+.1f}% {kind}" if c is not None else "n/a" for c in changes],
                textposition="outside",
                cliponaxis=False,
                customdata=[r.candidate.run_id for _, r in picked],
                hovertext=[_hover(r, kind, alpha) for _, r in picked],
                hovertemplate=HOVER,
            )
        )
    return to_dict(fig)


def _padded_range(rows: tuple[CompareRow, ...]) -> list[float]:
    """Room on both sides of the bars for the "+7.9% better" text drawn outside them, so it
    neither runs off the plot nor over the metric names on a negative bar."""
    changes = [c for c in (pct_change(r) for r in rows) if c is not None]
    low, high = min([0.0, *changes]), max([0.0, *changes])
    span = max(high - low, 1.0)
    # Wide margins: the text is a fixed width in pixels, and a phone has few of them.
    return [low - 0.8 * span if low < 0 else -0.05 * span, high + 0.8 * span]


def _labels(rows: tuple[CompareRow, ...]) -> list[str]:
    """Metric names, plus the builds when the rows compare more than one pair of runs."""
    one_pair = len({(r.baseline.run_id, r.candidate.run_id) for r in rows}) == 1
    labels: list[str] = []
    for r in rows:
        label = esc(r.metric.name)
        if not one_pair:
            label += f"<br>{esc(r.candidate.build)} vs {esc(r.baseline.build)}"
        while label in labels:  # the same metric and builds twice: keep both bars
            label += " "
        labels.append(label)
    return labels


def _hover(row: CompareRow, kind: str, alpha: float) -> str:
    unit = row.metric.unit
    if row.significant is not None:
        test = esc(row.reason) if row.reason else ("significant" if row.significant else "")
        if row.p_value is not None:
            test = f"{p_text(row.p_value)}; {test}"
    elif row.p_value is not None:
        test = f"{p_text(row.p_value)} (significant below {alpha:g})"
    elif row.threshold_pct is not None:
        test = f"single values; threshold ±{percent_text(row.threshold_pct)}"
    else:
        test = "not tested"
    direction = "higher" if row.metric.higher_is_better else "lower"
    change = pct_change(row)
    return (
        f"<b>{esc(row.metric.name)}</b> ({direction} is better): {kind}<br>"
        f"baseline run #{row.baseline.run_id} ({esc(row.baseline.build)}): "
        f"{fmt(row.baseline_value, unit)}<br>"
        f"candidate: {fmt(row.candidate_value, unit)}, "
        f"{'n/a' if change is None else f'{change:+.1f}%'}<br>"
        f"{test}<br>candidate {run_hover(row.candidate)}"
    )

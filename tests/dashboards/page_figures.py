"""A chart's Plotly figure read out of a rendered page, as the browser would get it, and
the across-kernels figure as Plotly's graph objects make it (helpers, not a test module)."""

from __future__ import annotations

import json
import re
from html import unescape

import plotly.graph_objects as go

from dashboards.figures import _common, across_kernels_figure, esc, kernels
from dashboards.pure.chartdata import Baseline, Point, Series


def figure(response, chart_id: str) -> dict:
    """The figure a page hands to Plotly: through json_script, or the one its chart fetches
    from its ``data-src`` (the across-kernels page), asked with the same client."""
    html = response.content.decode()
    src = re.search(rf'id="{chart_id}-plot" data-figure="{chart_id}" data-src="([^"]+)"', html)
    if src:
        fetched = response.client.get(unescape(src.group(1)))
        assert fetched.status_code == 200 and fetched["Content-Type"] == "application/json"
        return json.loads(fetched.content)
    match = re.search(
        rf'<script id="{chart_id}" type="application/json">(.*?)</script>', html, re.S
    )
    assert match, f"no figure {chart_id}"
    return json.loads(match.group(1))


def across_kernels_by_graph_objects(data: Series, baseline: Baseline | None) -> dict:
    """The across-kernels figure as Plotly's validating graph objects made it (before its
    lines were written as plain dicts): what the plain figure must equal, value for value."""
    figure = across_kernels_figure(data, baseline)
    fig = go.Figure(layout={**figure["layout"], "shapes": []})
    order = {kernel: i for i, kernel in enumerate(data.kernels)}
    groups: dict[str, list[Point]] = {}  # by patch set, stock first, then by first kernel
    for point in sorted(data.points, key=lambda p: order[p.run.kernel]):
        groups.setdefault(point.run.patch_label if point.run.patches else "", []).append(point)
    stock = [("", groups.pop(""))] if "" in groups else []
    for i, (patches, points) in enumerate(stock + list(groups.items())):
        is_stock = patches == ""
        fig.add_trace(
            go.Scatter(
                x=[esc(p.run.kernel) for p in points],
                y=[kernels._scaled(p.value, baseline) for p in points],
                error_y={
                    "type": "data",
                    "array": [
                        None if p.sd is None else kernels._scaled(p.sd, baseline) for p in points
                    ],
                    "visible": True,
                },
                mode="lines+markers",
                name="stock kernels" if is_stock else f"+{esc(patches)}",
                line={
                    "color": _common.STOCK_COLOUR if is_stock else _common.colour(i),
                    "width": 3 if is_stock else 2,
                },
                marker={"size": 8},
                customdata=[p.run.run_id for p in points],
                hovertext=[kernels.point_hover(p, data.metric, baseline) for p in points],
                hovertemplate=_common.HOVER,
            )
        )
    if baseline is not None:
        fig.add_hline(y=100, line={"dash": "dot", "color": "#888888", "width": 1})
    return _common.to_dict(fig)

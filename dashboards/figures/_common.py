"""Shared pieces of the figure builders: escaping, hover text, layout, JSON conversion.

Every builder returns ``fig.to_plotly_json()`` made JSON-ready (plain lists, no numpy, no
base64 typed arrays), for the page to pass through ``json_script`` and draw with
``Plotly.newPlot(el, fig.data, fig.layout, {responsive: true})``. The page's config leaves the
mode bar's "download plot as PNG" button on; nothing here turns it off. A figure written
from pieces of JSON kept apart (the across-kernels one) is joined with ``json_object`` and
``json_array`` from pieces written by ``json_text``.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

from dashboards.pure.chartdata import RunInfo

EMPTY_MESSAGE = "No runs yet — upload a bundle to see this chart."

# Okabe-Ito (colour-blind safe) first, then Tol's muted colours, so ten top functions
# still get ten colours.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#882255",
    "#44AA99",
    "#999933",
    "#332288",
    "#F0E442",
    "#000000",
)
STOCK_COLOUR = "#444444"
OTHER_COLOUR = "#BBBBBB"
NOTES_MAX = 80


def esc(text: object) -> str:
    """Escape data text for Plotly, which renders a subset of HTML in titles, labels and hover.

    Kernel names, patch names, notes and params come from uploaded bundles; without this a
    ``<a href=...>`` or ``<b>`` in a kernel name would become markup on the page. Plotly turns
    ``&lt;`` back into ``<`` when it draws, so the reader still sees the original text.
    """
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def fmt(value: float | None, unit: str = "") -> str:
    """A number for hover text: 4 significant digits keeps both 13183 and 3.49 readable."""
    if value is None or math.isnan(value):
        return "n/a"
    text = f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:,.4g}"
    return f"{text} {esc(unit)}".rstrip()


def run_hover(run: RunInfo) -> str:
    """The run's keys as hover lines, escaped and joined with ``<br>``."""
    lines = [
        f"run #{run.run_id}",
        f"kernel: {esc(run.kernel)}",
        f"patches: {esc(run.patch_label)}",
        f"hardware: {esc(run.hardware or '?')}, {esc(run.mode or '?')}",
        f"trials: {run.n_trials}",
    ]
    if run.params:
        lines.append(esc(", ".join(f"{k}={v}" for k, v in run.params)))
    if run.notes:
        notes = run.notes if len(run.notes) <= NOTES_MAX else run.notes[: NOTES_MAX - 1] + "…"
        lines.append(f"notes: {esc(notes)}")
    return "<br>".join(lines)


def run_label(run: RunInfo) -> str:
    """A category label naming one run (escaped): ``2.3.28+task #12``."""
    return f"{esc(run.build)} #{run.run_id}"


def axis_title(name: str, unit: str) -> str:
    return f"{esc(name)} ({esc(unit)})" if unit else esc(name)


# Hover shows our prepared ``hovertext`` only (``text`` would also be drawn on bars);
# <extra></extra> hides the trace-name box, which repeats the legend and is cut off on a phone.
HOVER = "%{hovertext}<extra></extra>"


def base_layout(
    title: str, x_title: str, y_title: str, n_legend: int = 0, height: int | None = None
) -> dict[str, Any]:
    """A layout that reads at 1280 px and on a phone.

    Autosize with the page's responsive config (width follows the page; height is fixed so
    a phone gets a tall enough plot). The legend goes below the plot, since one on the right
    eats half a phone's width; each legend row adds to the height.
    """
    if height is None:
        height = 420 + 18 * max(0, n_legend - 4)
    return {
        "template": "none",
        "title": {"text": title, "x": 0.01, "xanchor": "left", "font": {"size": 16}},
        "autosize": True,
        "height": height,
        "margin": {"l": 64, "r": 16, "t": 56, "b": 64},
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        "showlegend": n_legend > 0,
        "legend": legend_below(height),
        "xaxis": {"title": {"text": x_title}, "automargin": True},
        "yaxis": {"title": {"text": y_title}, "automargin": True, "zeroline": False},
    }


def legend_below(height: int, gap_px: int = 96) -> dict[str, Any]:
    """A horizontal legend ``gap_px`` under the plot area, clear of tick labels and x title.

    Legend ``y`` is a fraction of the plot area, so a fixed fraction would sit too close
    on a short chart and too far on a tall one; derive it from the height instead. Plotly
    grows the bottom margin to fit the legend.
    """
    plot_px = max(120, height - 120)
    return {
        "orientation": "h",
        "x": 0,
        "xanchor": "left",
        "y": -gap_px / plot_px,
        "yanchor": "top",
    }


def empty_figure(title: str, message: str = EMPTY_MESSAGE) -> dict[str, Any]:
    """A figure that says there is nothing to draw, rather than a blank box."""
    layout = base_layout(title, "", "")
    layout["xaxis"].update(visible=False)
    layout["yaxis"].update(visible=False)
    layout["annotations"] = [
        {
            "text": esc(message),
            "xref": "paper",
            "yref": "paper",
            "x": 0.5,
            "y": 0.5,
            "showarrow": False,
            "font": {"size": 15},
        }
    ]
    return to_dict(go.Figure(layout=layout))


# One encoder for every piece: ``json.dumps`` with a separator makes a new one each call.
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def json_text(value: Any) -> str:
    """``value`` as a figure's JSON is written (compact, ASCII: ``json.dumps`` with
    ``separators=(",", ":")``), so that pieces written apart join into the text written
    whole."""
    return _ENCODER.encode(value)


def json_object(fields: Mapping[str, str]) -> str:
    """A JSON object of these keys, each with its value already written as JSON."""
    return "{" + ",".join([f"{json_text(key)}:{value}" for key, value in fields.items()]) + "}"


def json_array(items: Iterable[str]) -> str:
    """A JSON array of items already written as JSON."""
    return "[" + ",".join(items) + "]"


def to_dict(fig: go.Figure) -> dict[str, Any]:
    """The figure as plain JSON-ready data (``plain``)."""
    result: dict[str, Any] = plain(fig.to_plotly_json())
    return result


def plain(obj: Any) -> Any:
    """``obj`` as JSON-ready data. Plotly 7 stores numpy arrays as base64 typed arrays
    (``{"dtype", "bdata"}``), which older plotly.js builds and our tests cannot read; they,
    numpy scalars, tuples and NaN become lists, Python numbers and None."""
    if isinstance(obj, dict):
        if "bdata" in obj and "dtype" in obj:
            return plain(_decode_typed_array(obj))
        return {key: plain(value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [plain(item) for item in obj]
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist())
    if isinstance(obj, np.generic):
        return plain(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _decode_typed_array(obj: dict[str, Any]) -> list[Any]:
    values = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]))
    if "shape" in obj:
        values = values.reshape([int(n) for n in str(obj["shape"]).split(",")])
    return values.tolist()

"""The partial plotly.js bundle (static/vendor/plotly/) draws every trace type the figure
builders can emit: a builder that starts emitting another type (a box plot, a histogram)
fails here, before a chart page draws nothing in a browser.

The types are read from dashboards/figures/'s source: each ``go.<Trace>(...)`` call and each
``"type": "<trace>"`` of a trace written as a plain dict (the across-kernels and scaling
lines). The bundle registers a trace module as ``moduleType:"trace",name:"<type>"``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import plotly.graph_objects as go
import pytest
from plotly.basedatatypes import BaseTraceType

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "dashboards" / "figures"
BUNDLE = ROOT / "static" / "vendor" / "plotly" / "plotly-perfdb.min.js"

# Every trace class of plotly's graph objects, by class name, with its type name.
# (plotly.graph_objects imports them lazily: they are in its __all__, not yet in vars().)
TRACE_TYPES = {
    name: getattr(go, name)().type
    for name in go.__all__
    if isinstance(getattr(go, name), type) and issubclass(getattr(go, name), BaseTraceType)
}


def emitted_types(source: str) -> set[str]:
    """The trace types a figure module's source can emit."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "go" and node.func.attr in TRACE_TYPES:
                found.add(TRACE_TYPES[node.func.attr])
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and key.value == "type"
                    and isinstance(value, ast.Constant)
                    and value.value in TRACE_TYPES.values()
                ):
                    found.add(value.value)
    return found


def bundled_types() -> set[str]:
    return set(re.findall(r'moduleType:"trace",name:"(\w+)"', BUNDLE.read_text()))


@pytest.mark.parametrize(
    "source, expected",
    [
        ("go.Figure(); fig.add_trace(go.Heatmap(z=[[1]]))", {"heatmap"}),
        ('line = {"type": "scatter", "error_y": {"type": "data"}}', {"scatter"}),
        ('layout["xaxis"].update(type="category")', set()),
        ("go.Waterfall(x=[1]); go.Bar(x=[1])", {"waterfall", "bar"}),
    ],
)
def test_emitted_types_reads_calls_and_plain_trace_dicts(source, expected):
    assert emitted_types(source) == expected


def test_every_trace_type_the_figure_builders_emit_is_in_the_bundle():
    emitted = set().union(*(emitted_types(p.read_text()) for p in FIGURES.glob("*.py")))
    # What the site draws today; a new type must be added to scripts/plotly-bundle/entry.js.
    assert emitted >= {"scatter", "bar", "heatmap", "waterfall"}
    missing = emitted - bundled_types()
    assert not missing, f"add {sorted(missing)} to scripts/plotly-bundle/entry.js and rebuild"


def test_the_bundle_is_the_plotly_js_version_the_figures_are_built_for():
    """The figures are validated by the plotly package against its plotly.js's schema."""
    full = (Path(go.__file__).parents[1] / "package_data" / "plotly.min.js").read_text()[:200]
    version = re.search(r"plotly\.js v(\d+\.\d+\.\d+)", full)
    assert version is not None
    assert f"plotly.js v{version[1]} " in BUNDLE.read_text()[:200]


def test_the_bundle_carries_plotly_js_license():
    assert "MIT License" in (BUNDLE.parent / "LICENSE").read_text()

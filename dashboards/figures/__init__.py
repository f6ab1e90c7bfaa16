"""Plotly figure builders: plain data (``dashboards.pure.chartdata``) in, JSON-ready dict out.

No Django and no ORM here: the views select rows, turn them into chartdata dataclasses, and
pass each builder's dict through ``json_script`` to
``Plotly.newPlot(el, fig.data, fig.layout, {responsive: true})``. Keep the mode bar (and its
PNG download) on in that config. Every trace carries the run id in ``customdata`` (one id per
point; a 2-D grid for heatmaps), so a click handler can open ``/runs/<id>/``.

All text from data is escaped with ``esc``: Plotly renders a subset of HTML in labels and
hover text. Category values on axes are therefore escaped strings too.
"""

from dashboards.figures._common import EMPTY_MESSAGE, esc
from dashboards.figures.compare import compare_figure
from dashboards.figures.kernel_time import kernel_time_figure
from dashboards.figures.kernels import across_kernels_figure, alert_figure, alert_marks
from dashboards.figures.profile import top_functions_figure
from dashboards.figures.scaling import scaling_figure
from dashboards.figures.vmstat import vmstat_figure
from dashboards.figures.wakeups import wakeups_figures

__all__ = [
    "EMPTY_MESSAGE",
    "across_kernels_figure",
    "alert_figure",
    "alert_marks",
    "compare_figure",
    "esc",
    "kernel_time_figure",
    "scaling_figure",
    "top_functions_figure",
    "vmstat_figure",
    "wakeups_figures",
]

"""Selectors for the chart pages: database rows in, ``dashboards.pure.chartdata`` out.

``charts`` reads the series every chart draws (``kernel_series`` the one across kernels,
``series_alerts`` its alerts);
``pickers`` the choice lists; ``compare`` and ``overview`` the reads of those pages. Pages
import this package as ``cq``.
"""

from dashboards.chart_queries.charts import (
    WAKEUP_PARAMS,
    PiecePoint,
    kernel_profiles,
    kernel_time_points,
    metric_data,
    params_text,
    scaling_chart,
    scaling_pieces,
    scaling_points,
    wakeup_rows,
)
from dashboards.chart_queries.compare import (
    compare_values,
    run_infos,
)
from dashboards.chart_queries.kernel_series import KernelSeries, series_added, series_points
from dashboards.chart_queries.overview import (
    OPEN_ALERT_STATUSES,
    run_baseline_id,
)
from dashboards.chart_queries.pickers import (
    metric_choices,
    metrics_by_setup,
    metrics_ordered,
    run_choices,
    sample_sources,
    setup_choices,
    setup_id_of,
    setup_metrics,
)
from dashboards.chart_queries.scaling_recent import (
    RecentPiece,
    builds_of,
    newest_builds,
    recent_piece,
    scaling_builds,
)
from dashboards.chart_queries.series_alerts import (
    SeriesAlerts,
    open_regression_series,
    series_alert_marks,
)
from dashboards.chart_queries.timeseries import vmstat_runs

__all__ = [
    "PiecePoint",
    "WAKEUP_PARAMS",
    "KernelSeries",
    "OPEN_ALERT_STATUSES",
    "compare_values",
    "kernel_profiles",
    "kernel_time_points",
    "metric_choices",
    "metrics_by_setup",
    "metrics_ordered",
    "metric_data",
    "params_text",
    "run_baseline_id",
    "run_choices",
    "run_infos",
    "sample_sources",
    "scaling_builds",
    "RecentPiece",
    "builds_of",
    "recent_piece",
    "newest_builds",
    "scaling_chart",
    "scaling_pieces",
    "scaling_points",
    "series_added",
    "series_points",
    "SeriesAlerts",
    "open_regression_series",
    "series_alert_marks",
    "setup_choices",
    "setup_id_of",
    "setup_metrics",
    "vmstat_runs",
    "wakeup_rows",
]

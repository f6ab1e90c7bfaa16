"""A series' alert marks, drawn into its across-kernels figure (/kernels/figure/), so that the
page with its data is two requests (the page, the figure), not three.

The marks are cached apart from the figure, under the setup's alerts version
(``perfdb.cache.cached_in_alerts``), which every write of one of its alerts moves when it
commits (the detector's, a triage, a move, a merge): a triage is shown by the next request,
never a mark of before. Runs added to the setup leave them current (a point of an existing
run changes only when the run is edited, which moves the structure version), so the first
figure after an upload joins the marks kept from before to the figure made anew, and reads
no alert.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django.core.serializers.json import DjangoJSONEncoder

from dashboards import chart_queries as cq
from dashboards import series_data
from dashboards.chartdata import Baseline
from dashboards.figures import alert_marks
from perfdb.cache import alerts_entry, cached_in_alerts, read_ahead

# Where a figure's data ends (``series_data.figure_json``: ``{"data":[...],"layout":{...}}``).
# The only place it can be: inside a JSON string every quote is escaped.
DATA_END = b'],"layout":'


def _key(metric_id: int, baseline_id: int | None) -> str:
    return f"series:alert-marks:{metric_id}:{baseline_id}"


def marks_keys(setup_id: int, metric_id: int, baseline_id: int | None) -> list[str]:
    """The cache keys ``marks_traces`` reads (to read them with the figure's)."""
    return read_ahead(alerts_entry(_key(metric_id, baseline_id), setup_id))


def marks_traces(
    setup_id: int,
    metric_id: int,
    baseline_id: int | None,
    baseline_of: Callable[[series_data.FinishedSeries], Baseline | None],
) -> bytes:
    """The alert marks of the setup's metric as figure traces (``figures.alert_marks``),
    their JSON comma-joined without the list's brackets (empty when there is none), scaled
    by ``baseline_of`` the series (the query's baseline, ``baseline_id``). One query for the
    alerts; the series is read from its cache, and not at all without an alert."""

    def build() -> bytes:
        found = cq.series_alert_marks(setup_id=setup_id, metric_id=metric_id)
        if found.metric is None:
            return b""
        data = series_data.finished_series(setup_id, found.metric)
        marked = data.of_runs({m.run_id for m in found.marks})
        traces = alert_marks(marked, found.marks, baseline_of(data))
        return json.dumps(traces, cls=DjangoJSONEncoder, separators=(",", ":")).encode()[1:-1]

    return cached_in_alerts(_key(metric_id, baseline_id), setup_id, build)


def with_marks(figure: bytes, traces: bytes) -> bytes:
    """``figure`` (``series_data.figure_json``) with ``traces`` after its own: drawn over
    the series, in the alerts' order (a newer mark on top)."""
    if not traces:
        return figure
    end = figure.index(DATA_END)
    comma = b"" if figure[end - 1 : end] == b"[" else b","
    return b"".join((figure[:end], comma, traces, figure[end:]))

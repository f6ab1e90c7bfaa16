"""The alerts the across-kernels page shows: those of one series (its chart's marks) and the
series a reader should see first (the page when its URL names no set-up).

Read fresh on every request, never from the series' cache: a triage changes an alert without
changing the setup's data version, and the detector writes alerts after the upload that
moved that version has committed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from dashboards.chart_queries.overview import OPEN_ALERT_STATUSES
from dashboards.pure.chartdata import AlertMark
from perfdb.models import Alert

# An id no URL prefix contains, to split the reversed URL of an alert around.
ANY_ID = 918273645546372819


@dataclass(frozen=True)
class SeriesAlerts:
    """A series' alerts, with its metric as the pickers give it (``id``, ``name``, ``unit``,
    ``better``): what ``series_data.series`` needs to read the series, so the marks need no
    query for the metric. ``metric`` is None when the series has no alert."""

    metric: Mapping[str, Any] | None
    marks: tuple[AlertMark, ...]


def series_alert_marks(*, setup_id: int, metric_id: int) -> SeriesAlerts:
    """Every alert of the setup's metric, oldest first (a newer mark is drawn on top). One
    query, served by alert_uniq (setup, metric, candidate_run, method)."""
    rows = (
        Alert.objects.filter(setup_id=setup_id, metric_id=metric_id)
        .order_by("created_at", "id")
        .values_list(
            "id",
            "candidate_run_id",
            "status",
            "direction",
            "change_pct",
            "metric__name",
            "metric__unit",
            "metric__better",
        )
    )
    marks = []
    metric = None
    # The alert page's URL reversed once, not once per alert (a long series' hundred alerts
    # were most of the marks' CPU, on every request: they are never cached).
    head, tail = reverse("alert-detail", args=[ANY_ID]).split(str(ANY_ID), 1)
    for alert_id, run_id, status, direction, change_pct, name, unit, better in rows:
        metric = {"id": metric_id, "name": name, "unit": unit, "better": better}
        url = f"{head}{alert_id}{tail}"
        marks.append(AlertMark(alert_id, run_id, status, direction, change_pct, url))
    return SeriesAlerts(metric, tuple(marks))


def open_regression_series(*, scope: tuple[int, int, str] | None = None) -> tuple[int, int] | None:
    """(setup id, metric id) of the newest open regression, in this scope (workload id,
    hardware id, mode) when given; None when there is none. One query, served by
    alert_status_idx (status, -created_at)."""
    alerts = Alert.objects.filter(
        status__in=OPEN_ALERT_STATUSES, direction=Alert.Direction.REGRESSION
    )
    if scope is not None:
        workload_id, hardware_id, mode = scope
        alerts = alerts.filter(
            setup__workload_id=workload_id, setup__hardware_id=hardware_id, setup__mode=mode
        )
    found = alerts.order_by("-created_at", "-id").values_list("setup_id", "metric_id").first()
    return None if found is None else (found[0], found[1])

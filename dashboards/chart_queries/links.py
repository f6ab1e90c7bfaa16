"""Reads behind the links between pages: a run's alerts, its series and the baseline it is
compared with; an alert's neighbours in the open list.

A run page and its alert must name the same baseline: a run the detector raised an alert on
is compared with that alert's baseline runs (what the alert page's compare link uses), and
only a run without one falls back to its natural baseline (``overview.run_baseline_id``: the
same kernel stock for a patched build, else the nearest earlier stock kernel).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from dashboards.chart_queries.overview import OPEN_ALERT_STATUSES, run_baseline_id
from dashboards.chart_queries.profiles import profile_diff_url
from perfdb.models import Alert, ProfileEntry, Result, Run


def series_url(*, setup_id: int, metric_id: int) -> str:
    """The across-kernels chart of one metric of one setup."""
    return f"{reverse('dashboards-kernels')}?{urlencode({'setup': setup_id, 'metric': metric_id})}"


def compare_url(base_ids: Sequence[int], new_ids: Sequence[int]) -> str:
    query = {"base": ",".join(map(str, base_ids)), "new": ",".join(map(str, new_ids))}
    return f"{reverse('dashboards-compare')}?{urlencode(query, safe=',')}"


def run_links(*, run: Run, results: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What a run page links to: its alerts (as candidate), the baseline it is compared
    with, the compare page and profile diff against that baseline, and each result's
    series chart (``results`` as ``perfdb.queries.run_results`` gives them, each with its
    ``series_url`` added).

    Four queries: the alerts with their baseline runs (two), the metric ids of the run's
    results, the profile check; the natural baseline's query only when no alert names one.
    """
    alerts = list(
        Alert.objects.filter(candidate_run_id=run.pk)
        .select_related("metric")
        .prefetch_related("baseline_runs")
        .order_by("-created_at", "-id")
    )
    alert_rows = [
        {
            "pk": a.pk,
            "metric": a.metric.name,
            "unit": a.metric.unit,
            "change_pct": a.change_pct,
            "direction": a.direction,
            "status": a.status,
            "url": reverse("alert-detail", args=[a.pk]),
            "series_url": series_url(setup_id=a.setup_id, metric_id=a.metric_id),
        }
        for a in alerts
    ]
    baseline_ids, from_alert = _baseline_of(run, alerts[0] if alerts else None)
    metric_ids = dict(
        Result.objects.filter(run_id=run.pk)
        .values_list("metric__name", "metric_id")
        .order_by("metric__name", "metric_id")
        .distinct()
    )
    linked = {
        name: {
            **r,
            "series_url": series_url(setup_id=run.setup_id, metric_id=metric_ids[name])
            if name in metric_ids
            else "",
        }
        for name, r in results.items()
    }
    profiled = ProfileEntry.objects.filter(run_id=run.pk).exists()
    return {
        "results": linked,
        "alerts": alert_rows,
        "baseline_ids": baseline_ids,
        "baseline_from_alert": from_alert,
        "compare_url": compare_url(baseline_ids, [run.pk]) if baseline_ids else "",
        "profile_diff_url": profile_diff_url(baseline_ids, [run.pk], run.setup_id)
        if profiled
        else None,
    }


def run_compare_baseline(*, run_id: int) -> list[int]:
    """The runs a run is compared with when only the run is named (``/compare/?new=ID``, as
    the upload page links each run): the baseline its run page names. Empty for the first
    kernel of its series, or a run that does not exist."""
    run = Run.objects.select_related("kernel", "patch_set").filter(pk=run_id).first()
    if run is None:
        return []
    newest = (
        Alert.objects.filter(candidate_run_id=run_id)
        .prefetch_related("baseline_runs")
        .order_by("-created_at", "-id")
        .first()
    )
    return _baseline_of(run, newest)[0]


def _baseline_of(run: Run, newest_alert: Alert | None) -> tuple[list[int], bool]:
    """The newest alert's baseline, as its alert page compares it; else the natural one
    (``overview.run_baseline_id``). And whether it is the alert's."""
    if newest_alert is not None:
        ids = sorted(r.pk for r in newest_alert.baseline_runs.all())
        if ids:
            return ids, True
    natural = run_baseline_id(run=run)
    return ([natural] if natural is not None else []), False


def alert_links(*, alert: Alert) -> dict[str, Any]:
    """What an alert page links to beside its summary: its series chart, the open alerts
    just older and just newer (by id, the open list's default filter, ``?status=open``).
    Two queries."""
    open_alerts = Alert.objects.filter(status__in=OPEN_ALERT_STATUSES)
    older = open_alerts.filter(pk__lt=alert.pk).order_by("-pk").values_list("pk", flat=True)
    newer = open_alerts.filter(pk__gt=alert.pk).order_by("pk").values_list("pk", flat=True)
    older_id, newer_id = older.first(), newer.first()
    return {
        "series_url": series_url(setup_id=alert.setup_id, metric_id=alert.metric_id),
        "older_url": reverse("alert-detail", args=[older_id]) if older_id else "",
        "older_id": older_id,
        "newer_url": reverse("alert-detail", args=[newer_id]) if newer_id else "",
        "newer_id": newer_id,
    }

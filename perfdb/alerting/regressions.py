"""Regression checks: load a series, run the pure detector, record alerts, queue email.

``regressions_check_upload`` is the body of the Celery task queued after an upload's runs
commit. It writes alerts in one transaction per upload and queues notification only after
that commits, so a mail failure never undoes detection. Running it twice creates nothing
new: alerts are unique on (series, candidate run, method).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable

from django.db import transaction

from perfdb import detection
from perfdb.alerting import queue
from perfdb.kernels import kernel_sort_key
from perfdb.models import Alert, AlertEvent, Metric, PinnedBaseline, Result, Run, Threshold

log = logging.getLogger(__name__)

# An alert is "recovered" once its series is back within this share of the step it flagged.
RECOVERY_SHARE = 0.25


def series_points(*, setup_id: int, metric_id: int) -> list[detection.Point]:
    """One series as detector points: per run, its kept trial values (warm-ups left out).

    One query, served by the result_series_idx index (setup, metric).
    """
    rows = (
        Result.objects.filter(setup_id=setup_id, metric_id=metric_id, discarded=False)
        .order_by("run_id", "trial")
        .values_list("run_id", "run__kernel__version", "run__patch_set__name", "value")
    )
    runs: dict[int, tuple[str, str, list[float]]] = {}
    for run_id, kernel, patches, value in rows:
        runs.setdefault(run_id, (kernel, patches, []))[2].append(value)
    return [
        detection.Point(
            run_id=run_id,
            kernel=kernel,
            patches=tuple(p for p in patches.split("+") if p),
            values=tuple(values),
        )
        for run_id, (kernel, patches, values) in runs.items()
    ]


def _settings_for(setup_id: int, metric: Metric) -> detection.Settings:
    threshold = (
        Threshold.objects.filter(workload__setup__id=setup_id, metric=metric)
        .values_list("threshold_pct", flat=True)
        .first()
    )
    return detection.Settings(threshold_pct=threshold)


def _changes(
    points: list[detection.Point], metric: Metric, setup_id: int, candidates: set[int]
) -> list[detection.Change]:
    settings = _settings_for(setup_id, metric)
    pinned = (
        PinnedBaseline.objects.filter(setup_id=setup_id, metric=metric)
        .values_list("run_id", flat=True)
        .first()
    )
    if pinned is not None and pinned not in {p.run_id for p in points}:
        pinned = None
    # A run whose bundle names its baseline ("Base1") is compared with that run.
    declared = dict(
        Run.objects.filter(pk__in=candidates, baseline__isnull=False).values_list(
            "pk", "baseline_id"
        )
    )
    in_series = {p.run_id for p in points}
    changes = detection.detect(
        points,
        better=metric.better,
        settings=settings,
        pinned_run_id=pinned,
        candidates=candidates - declared.keys(),
    )
    for run_id, baseline_id in declared.items():
        changes += detection.detect(
            points,
            better=metric.better,
            settings=settings,
            pinned_run_id=baseline_id if baseline_id in in_series else pinned,
            candidates={run_id},
        )
    # Steps over the whole stock series, kept when they land on a run of this upload.
    steps = detection.change_points(points, better=metric.better, settings=settings)
    seen = {c.candidate_run_id for c in changes}
    changes += [
        s for s in steps if s.candidate_run_id in candidates and s.candidate_run_id not in seen
    ]
    return changes


def _alert_record(
    change: detection.Change, *, setup_id: int, metric: Metric, upload_id: int | None
) -> tuple[Alert, bool]:
    status = (
        Alert.Status.IMPROVEMENT if change.direction == "improvement" else Alert.Status.UNTRIAGED
    )
    alert, created = Alert.objects.get_or_create(
        setup_id=setup_id,
        metric=metric,
        candidate_run_id=change.candidate_run_id,
        method=change.method,
        defaults={
            "upload_id": upload_id,
            "change_pct": change.change_pct,
            "p_value": change.p_value,
            "confidence": change.confidence,
            "direction": change.direction,
            "status": status,
        },
    )
    if created:
        alert.baseline_runs.set(change.baseline_run_ids)
    return alert, created


def _mark_recovered(points: list[detection.Point], setup_id: int, metric: Metric) -> int:
    """Mark regressions whose series has come back within 25 % of the step they flagged."""
    by_run = {p.run_id: p for p in points}
    stock = sorted((p for p in points if not p.patches), key=lambda p: kernel_sort_key(p.kernel))
    if not stock:
        return 0
    latest = stock[-1]
    marked = 0
    open_alerts = Alert.objects.filter(
        setup_id=setup_id, metric=metric, direction="regression", recovered=False
    ).prefetch_related("baseline_runs")
    for alert in open_alerts:
        candidate = by_run.get(alert.candidate_run_id)
        base_values = [
            v for r in alert.baseline_runs.all() if r.pk in by_run for v in by_run[r.pk].values
        ]
        if candidate is None or not base_values or candidate.patches or latest is candidate:
            continue
        if kernel_sort_key(latest.kernel) <= kernel_sort_key(candidate.kernel):
            continue
        base = sum(base_values) / len(base_values)
        step = sum(candidate.values) / len(candidate.values) - base
        now = sum(latest.values) / len(latest.values) - base
        if step and abs(now) <= RECOVERY_SHARE * abs(step):
            alert.recovered = True
            alert.save(update_fields=["recovered"])
            AlertEvent.objects.create(
                alert=alert,
                field="recovered",
                old="False",
                new=f"True (back to {now / base * 100:+.1f} % at {latest.kernel})",
            )
            marked += 1
    return marked


def regressions_check_upload(*, upload_id: int | None, series: Iterable[tuple[int, int]]) -> int:
    """Check every touched series for the upload's runs; returns the number of new alerts."""
    series = list(series)
    upload_runs = set(Run.objects.filter(upload_id=upload_id).values_list("pk", flat=True))
    metrics = Metric.objects.in_bulk({m for _, m in series})
    created_ids: list[int] = []
    with transaction.atomic():
        for setup_id, metric_id in series:
            metric = metrics[metric_id]
            if metric.better == "none":
                continue
            points = series_points(setup_id=setup_id, metric_id=metric_id)
            candidates = upload_runs & {p.run_id for p in points}
            for change in _changes(points, metric, setup_id, candidates):
                alert, created = _alert_record(
                    change, setup_id=setup_id, metric=metric, upload_id=upload_id
                )
                if created:
                    created_ids.append(alert.pk)
            _mark_recovered(points, setup_id, metric)
        if created_ids and upload_id is not None:
            transaction.on_commit(lambda: queue.notify_upload(upload_id=upload_id))
    log.info("upload %s: regression check made %d alerts", upload_id, len(created_ids))
    return len(created_ids)


def regressions_recheck_all() -> int:
    """Re-run detection over every series (operator command); returns new alerts."""
    pairs = Result.objects.values_list("setup_id", "metric_id").distinct()
    by_upload: dict[int | None, set[tuple[int, int]]] = defaultdict(set)
    runs = Run.objects.values_list("pk", "upload_id", "setup_id")
    setup_uploads: dict[int, set[int | None]] = defaultdict(set)
    for _, upload_id, setup_id in runs:
        setup_uploads[setup_id].add(upload_id)
    for setup_id, metric_id in pairs:
        for upload_id in setup_uploads[setup_id]:
            by_upload[upload_id].add((setup_id, metric_id))
    return sum(regressions_check_upload(upload_id=u, series=s) for u, s in by_upload.items() if u)

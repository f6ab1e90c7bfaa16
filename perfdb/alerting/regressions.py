"""Regression checks: lock, load, ask the detector, record alerts, queue email.

``detection_run`` is the body of the Celery task queued after an upload's runs commit: it
calls ``regressions_check_upload`` on batches of the touched series, each batch in one
transaction, and queues notification only after the last commits, so a mail failure never
undoes detection. Running it twice creates nothing new: alerts are unique on (series,
candidate run, method).

A check of a series is four stages, each entered once: the series' lock
(``series_lock``), what it reads (``check_data.load``, every series of the batch at once),
the detector's one question (``perfdb.detector.check``: the series in, its changes out) and
the alerts written (``record``). Then the series' pending alerts that the check did not
return are *cleared* (the next kernel did not confirm them, docs/detector.md) and alerts
whose series came back are marked *recovered*.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings
from django.db import IntegrityError, transaction

from perfdb import detector
from perfdb.alerting import check_data, queue, record, series_lock
from perfdb.alerting.check_data import CheckData, SeriesKey
from perfdb.alerting.notify import alerts_owing_email
from perfdb.detector import kernel_name, kernel_order
from perfdb.features.reference import hold_shared
from perfdb.models import Alert, AlertEvent, Metric, Result, Run, Upload
from perfdb.operations.faults import pause_point
from perfdb.operations.gc_pause import collector_paused

log = logging.getLogger(__name__)

# An alert is "recovered" once its series is back within this share of the step it flagged.
RECOVERY_SHARE = 0.25


def _newest_first(alerts: list[Alert]) -> list[Alert]:
    """Alerts in their model's order (newest first), as the per-series queries read them."""
    return sorted(alerts, key=lambda a: (a.created_at, a.pk), reverse=True)


def _clear_unconfirmed(data: CheckData, key: SeriesKey, kept: set[int]) -> int:
    """Pending alerts whose kernel is no longer the newest and that this check did not return
    (confirmed or still pending) were cleared: the next kernel came back (a spike), or the
    move was the way back from an excursion (``step_scan.came_back``). Not emailed."""
    pending = [
        a
        for a in data.alerts.get(key, [])
        if a.confirmed_at is None and a.status != Alert.Status.CLEARED and a.pk not in kept
    ]
    if not pending:
        return 0
    points = data.points[key]
    keys = {p.kernel: kernel_order(p.kernel) for p in points if not p.patches}
    if not keys:
        return 0
    newest = max(keys.values())
    kernels = {p.run_id: p.kernel for p in points}
    cleared = 0
    for alert in _newest_first(pending):
        kernel = kernels.get(alert.candidate_run_id)
        if kernel is None or kernel not in keys or keys[kernel] >= newest:
            continue
        old, alert.status = alert.status, Alert.Status.CLEARED
        alert.save(update_fields=["status"])
        AlertEvent.objects.create(
            alert=alert,
            field="status",
            old=old,
            new="cleared (not confirmed: the next kernel came back, or it was the way back "
            "from an excursion; "
            f"newest {kernel_name(max(keys, key=lambda k: keys[k]))})",
        )
        cleared += 1
    return cleared


def _mark_recovered(data: CheckData, key: SeriesKey) -> int:
    """Mark alerts whose series has come back within 25 % of the step they flagged: a
    regression fixed, or an improvement lost (the pages say "lost": a gain lost again within
    an excursion's kernels raises no regression, ``step_scan.came_back``, so its alert tells)."""
    open_alerts = [
        a
        for a in data.alerts.get(key, [])
        if a.direction in ("regression", "improvement")
        and not a.recovered
        and a.status not in (Alert.Status.PENDING, Alert.Status.CLEARED)
    ]
    points = data.points[key] if open_alerts else []
    by_run = {p.run_id: p for p in points}
    stock = sorted((p for p in points if not p.patches), key=lambda p: kernel_order(p.kernel))
    if not stock:
        return 0
    latest = stock[-1]
    marked = 0
    for alert in _newest_first(open_alerts):
        candidate = by_run.get(alert.candidate_run_id)
        if candidate is None or candidate.patches or latest is candidate:
            continue
        if kernel_order(latest.kernel) <= kernel_order(candidate.kernel):
            continue
        if alert.pk not in data.baselines:  # made or confirmed by this check: read again
            data.baselines[alert.pk] = list(alert.baseline_runs.values_list("pk", flat=True))
        base_values = [v for r in data.baselines[alert.pk] if r in by_run for v in by_run[r].values]
        if not base_values:
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
                new=f"True (back to {now / base * 100:+.1f} % at {kernel_name(latest.kernel)})",
            )
            marked += 1
    return marked


def regressions_check_upload(
    *, upload_id: int | None, series: Iterable[tuple[int, int]], notify: bool = True
) -> int:
    """Check every touched series for the upload's runs; returns the number of new alerts.
    With ``notify``, the upload's email is queued when this commits a regression to email
    (``detection_run`` queues it once, after its last series, instead).

    Run again once, from a fresh read, if an alert written meanwhile by a writer that does
    not take the series lock (a worker of the previous release, the admin) collides with one
    of this check's writes: the check completes instead of losing all it found."""
    pairs = list(series)
    with collector_paused():  # perfdb/operations/gc_pause.py: a Point per run of every series
        try:
            return _check_upload(upload_id, pairs, notify)
        except IntegrityError as exc:
            log.warning("upload %s: regression check collided (%s); checking again", upload_id, exc)
            return _check_upload(upload_id, pairs, notify)


def _check_upload(upload_id: int | None, series: list[tuple[int, int]], email: bool) -> int:
    runs = Run.objects.filter(upload_id=upload_id) if upload_id else Run.objects.none()
    upload_runs = set(runs.values_list("pk", flat=True))
    metrics = Metric.objects.in_bulk({m for _, m in series})
    created_ids: list[int] = []
    notify = False
    with transaction.atomic():
        checked = [key for key in series if metrics[key[1]].better != "none"]
        series_lock.hold(checked)  # before any read: sees all an earlier check wrote
        data = check_data.load(set(checked), metrics, upload_runs)
        pause_point("detection-loaded")
        for key in checked:
            changes = detector.check(
                data.points[key],
                better=metrics[key[1]].better,
                settings=data.settings[key],
                candidates=data.candidates[key],
                pinned_run_id=data.pinned.get(key),
                declared=data.declared,
                usable=data.ordered.get(key),
                columns=data.columns.get(key),
            )
            recorded = record.changes_recorded(data, key, changes, upload_id)
            _clear_unconfirmed(data, key, recorded.kept)
            _mark_recovered(data, key)
            created_ids += recorded.made
            notify = notify or recorded.owed
        hold_shared(alert_ids=created_ids)  # shared with a reference build that moved too
        if notify and email and upload_id is not None:
            transaction.on_commit(lambda: queue.notify_upload(upload_id=upload_id))
    log.info("upload %s: regression check made %d alerts", upload_id, len(created_ids))
    return len(created_ids)


def detection_run(*, upload_id: int | None, series: list[tuple[int, int]]) -> int:
    """The regression check of an upload (the task's body), one committed batch of series at
    a time (``DETECTION_SERIES_PER_TRANSACTION``, 64: a long check neither holds locks
    against ingest nor loses everything to one failure, and each batch reads its series' data
    in a few queries instead of a transaction per series reading them again, ~15 ms of CPU a
    series). Clears the upload's mark and queues its email once, after the last batch (an
    email queued after each batch would reach the email worker while later series are still
    being checked, splitting the upload's regressions over several emails). Returns the
    number of new alerts."""
    made = 0
    size = max(1, settings.DETECTION_SERIES_PER_TRANSACTION)
    for start in range(0, len(series), size):
        if start:
            pause_point("detection-series")
        batch = series[start : start + size]
        made += regressions_check_upload(upload_id=upload_id, series=batch, notify=False)
    if upload_id is None:
        return made
    Upload.objects.filter(pk=upload_id).update(detection_due_at=None)
    if alerts_owing_email().filter(notify_upload_id=upload_id).exists():
        queue.notify_upload(upload_id=upload_id)
    return made


def regressions_recheck_all() -> int:
    """Re-run detection over every series (operator command); returns new alerts."""
    pairs = Result.objects.values_list("setup_id", "metric_id").distinct()
    by_upload: dict[int, set[tuple[int, int]]] = defaultdict(set)
    runs = Run.objects.values_list("pk", "upload_id", "setup_id")
    setup_uploads: dict[int, set[int]] = defaultdict(set)
    for _, upload_id, setup_id in runs:
        setup_uploads[setup_id].add(upload_id)
    for setup_id, metric_id in pairs:
        for upload_id in setup_uploads[setup_id]:
            by_upload[upload_id].add((setup_id, metric_id))
    return sum(regressions_check_upload(upload_id=u, series=s) for u, s in by_upload.items() if u)

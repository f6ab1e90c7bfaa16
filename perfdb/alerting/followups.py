"""Work owed after an upload commits, done durably: the regression check and its email.

The ingest transaction records the check it owes on the upload (``detection_due_at`` and
``detection_series``). ``detection_run`` checks a batch of series per transaction
(``DETECTION_SERIES_PER_TRANSACTION``, 64: a long check neither holds locks against ingest
nor loses everything to one failure, and each batch reads its series' data in a few
queries, where a transaction per series read them again for each: ~15 ms of CPU a series),
then clears the mark and queues the email. Whatever a dead worker leaves undone,
``followups_recover`` (beat, every 30 s) finds and queues again:

- uploads whose check is owed past its due time (re-queued, due again a deadline later);
- regressions that owe an email (``notified_at`` empty) — the outbox fill is queued again.

Every step is idempotent (alerts are unique per series/run/method, outbox rows per
subscriber/upload), so running one twice delays nothing and duplicates nothing.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from perfdb.alerting import queue
from perfdb.alerting.regressions import regressions_check_upload
from perfdb.models import Alert, Upload
from perfdb.operations.faults import pause_point

log = logging.getLogger(__name__)


def _deadline() -> timedelta:
    return timedelta(seconds=settings.FOLLOWUP_DEADLINE_SECONDS)


def alerts_owing_email() -> QuerySet[Alert]:
    """Regressions that still owe their immediate email (``notified_at`` decides)."""
    return Alert.objects.filter(
        notified_at__isnull=True,
        direction=Alert.Direction.REGRESSION,
        notify_upload_id__isnull=False,
    )


def detection_run(*, upload_id: int | None, series: list[tuple[int, int]]) -> int:
    """The regression check of an upload, one committed batch of series at a time; clears
    the upload's mark and queues its email, once, after the last batch (an email queued
    after each batch would reach the email worker while later series are still being
    checked, splitting the upload's regressions over several emails). Returns the number of
    new alerts."""
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


def followups_recover(*, now: datetime | None = None) -> dict[str, list[int]]:
    """Queue again every check and email a dead worker left owed."""
    now = now or timezone.now()
    owed = list(
        Upload.objects.filter(detection_due_at__lte=now).values_list("pk", "detection_series")
    )
    checks = []
    for upload_id, series in owed:
        Upload.objects.filter(pk=upload_id).update(detection_due_at=now + _deadline())
        queue.regressions_check(upload_id=upload_id, series=[tuple(s) for s in series])
        checks.append(upload_id)
    emails = sorted(
        set(
            alerts_owing_email()
            .filter(created_at__lt=now - _deadline())
            .values_list("notify_upload_id", flat=True)
        )
    )
    for upload_id in emails:
        queue.notify_upload(upload_id=upload_id)
    if checks or emails:
        log.warning("follow-ups owed: regression checks %s, emails %s queued", checks, emails)
    return {"checks": checks, "emails": emails}

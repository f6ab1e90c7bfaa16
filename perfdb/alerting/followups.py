"""Work owed after an upload commits, found again when a dead worker left it undone.

The ingest transaction records the check it owes on the upload (``detection_due_at`` and
``detection_series``); ``regressions.detection_run`` clears the mark after the last batch of
series and queues the email. Whatever a dead worker leaves undone, ``followups_recover``
(beat, every 30 s) finds and queues again:

- uploads whose check is owed past its due time (re-queued, due again a deadline later);
- regressions that owe an email (``notified_at`` empty) — the outbox fill is queued again.

Every step is idempotent (alerts are unique per series/run/method, outbox rows per
subscriber/upload), so running one twice delays nothing and duplicates nothing.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from perfdb.alerting import queue
from perfdb.alerting.notify import alerts_owing_email
from perfdb.models import Upload

log = logging.getLogger(__name__)


def _deadline() -> timedelta:
    return timedelta(seconds=settings.FOLLOWUP_DEADLINE_SECONDS)


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

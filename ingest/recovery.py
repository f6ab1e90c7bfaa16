"""What staff and beat do to uploads after the fact: ingest a stored bundle again, delete
an upload with everything it made, and recover uploads a dead worker left behind. The ingest
itself, and sending a failed upload again, are ``ingest.services``.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from ingest import queue, services
from perfdb.models import Upload

log = logging.getLogger(__name__)

# How long a queued upload's message may be missing from the broker before the sweep sends
# it again: longer than the moment between the upload's commit and its send, short enough
# that beat's 30-second sweep finishes what a broker restart lost within a minute (30 s +
# this + the ingest). A copy sent while a worker holds the first is harmless: the ingest
# claims an upload once.
SEND_GRACE = timedelta(seconds=10)


def upload_reingest(*, upload_id: int, user: object = None, queue_it: bool = True) -> Upload:
    """Run ingest of a stored bundle again (a fixed parser reaches old uploads); its runs are
    replaced in the ingest's one transaction. Returns the upload, queued."""
    with transaction.atomic():
        upload = Upload.objects.select_for_update().get(pk=upload_id)
        if upload.status in (Upload.Status.DONE, Upload.Status.FAILED):
            upload.status = Upload.Status.QUEUED
            upload.error = ""
            upload.attempts = 0
            upload.started_at = upload.finished_at = upload.task_sent_at = None
            upload.save()
            if queue_it:
                transaction.on_commit(lambda: services.ingest_queue(upload_id=upload_id))
    log.info("upload %s: re-ingest requested by %s", upload_id, user or "an operator")
    return upload


def upload_delete(*, upload_id: int, user: object = None) -> dict[str, int]:
    """Delete an upload and everything it created (runs and what hangs off them, its alerts,
    the stored bundle) in one transaction; logged as an audit line."""
    from perfdb.cache import data_changed_on_commit
    from perfdb.models import Alert, Run

    with transaction.atomic():
        upload = Upload.objects.select_for_update().get(pk=upload_id)
        runs = list(Run.objects.filter(upload_id=upload_id).values_list("pk", flat=True))
        alerts, _ = Alert.objects.filter(upload_id=upload_id).delete()
        Run.objects.filter(pk__in=runs).update(baseline=None)
        Run.objects.filter(baseline_id__in=runs).update(baseline=None)
        Run.objects.filter(pk__in=runs).delete()
        path = upload.file.name
        upload.delete()
        storage = Upload._meta.get_field("file").storage
        transaction.on_commit(lambda: storage.delete(path) if path else None)
        data_changed_on_commit()
    log.warning(
        "AUDIT upload %s (%s) deleted by %s: %d runs, %d alert rows",
        upload_id,
        upload.filename,
        user or "an operator",
        len(runs),
        alerts,
    )
    return {"runs": len(runs), "alerts": alerts}


def _unsent(now: datetime, grace: timedelta, limit: timedelta) -> QuerySet[Upload]:
    """Queued uploads whose ingest message is not in the broker: never sent (the broker was
    down at upload time), sent before the ingest time limit and still queued, or — when the
    broker's ingest queue is empty — sent more than ``grace`` ago: a broker that restarted
    without persistence lost it. (A message a worker holds but has not started is sent
    again; the ingest claims an upload once, so the copy finds nothing to do.)"""
    queued = Upload.objects.filter(status=Upload.Status.QUEUED)
    unsent = queued.filter(task_sent_at__isnull=True, created_at__lt=now - grace)
    unsent |= queued.filter(task_sent_at__lt=now - limit)
    lost = queued.filter(task_sent_at__lt=now - grace)
    if lost.exists() and queue.ingest_backlog() == 0:
        unsent |= lost
    return unsent


def uploads_recover_stuck(*, now: datetime | None = None) -> dict[str, list[int]]:
    """Requeue or fail uploads a dead worker left behind, so none stays processing forever.

    - ``queued`` whose task never reached the broker (``task_sent_at`` empty past a short
      grace) or whose message the broker lost (``_unsent``): queued now;
    - ``processing`` whose ingest lock no live session holds (the worker died), or past the
      task time limit: requeued, or failed after services.MAX_ATTEMPTS attempts.
    """
    now = now or timezone.now()
    limit = timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 60)
    grace = min(services.detection_deadline(), SEND_GRACE)
    requeued, failed = [], []
    for upload in _unsent(now, grace, limit).order_by("created_at", "pk"):
        if services.ingest_queue(upload_id=upload.pk):
            requeued.append(upload.pk)
    processing = Upload.objects.filter(
        status=Upload.Status.PROCESSING, started_at__lt=now - timedelta(seconds=5)
    )
    stuck = [
        u
        for u in processing
        if (u.started_at is not None and u.started_at < now - limit)
        or services.upload_orphaned(u.pk)
    ]
    for upload in stuck:
        if upload.attempts >= services.MAX_ATTEMPTS:
            services.upload_fail(
                upload_id=upload.pk,
                reason=f"ingest did not finish after {upload.attempts} attempts "
                "(the worker was killed or timed out); upload the bundle again or ask staff",
            )
            failed.append(upload.pk)
        elif services.ingest_queue(upload_id=upload.pk):
            requeued.append(upload.pk)
    if requeued or failed:
        log.warning("stuck uploads: requeued %s, failed %s", requeued, failed)
    return {"requeued": requeued, "failed": failed}

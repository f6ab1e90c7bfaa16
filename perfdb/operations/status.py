"""What the pipeline is doing, for staff (``/status/``): uploads by state with the oldest
age, regression checks owed, the outbox by state with the last errors, and which Celery
workers answer, per queue."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count, Min
from django.utils import timezone

from perfdb.models import Alert, OutboxMessage, Upload


def _age(when: datetime | None) -> int | None:
    return round((timezone.now() - when).total_seconds()) if when else None


def workers_by_queue(timeout: float = 1.0) -> dict[str, list[str]]:
    """Queue name → workers that answered now (Celery's broadcast; an empty map when none)."""
    from celery import current_app

    try:
        replies = current_app.control.inspect(timeout=timeout).active_queues() or {}
    except Exception:  # the broker is down: no worker can be seen
        return {}
    by_queue: dict[str, list[str]] = {}
    for worker, queues in replies.items():
        for q in queues:
            by_queue.setdefault(q["name"], []).append(worker)
    return by_queue


def status_report(*, with_workers: bool = True) -> dict[str, object]:
    uploads = {
        row["status"]: {"count": row["n"], "oldest_seconds": _age(row["oldest"])}
        for row in Upload.objects.values("status").annotate(n=Count("id"), oldest=Min("created_at"))
    }
    owed = Upload.objects.filter(detection_due_at__isnull=False)
    now = timezone.now()
    outbox = {
        row["status"]: {"count": row["n"], "oldest_seconds": _age(row["oldest"])}
        for row in OutboxMessage.objects.values("status").annotate(
            n=Count("id"), oldest=Min("created_at")
        )
    }
    problems = list(
        OutboxMessage.objects.exclude(last_error="")
        .exclude(status=OutboxMessage.Status.SENT)
        .order_by("-created_at")
        .values("pk", "to", "status", "attempts", "last_error", "possible_resend")[:20]
    )
    unsent = Alert.objects.filter(
        notified_at__isnull=True, direction=Alert.Direction.REGRESSION
    ).count()
    stuck = list(
        Upload.objects.filter(status__in=[Upload.Status.QUEUED, Upload.Status.PROCESSING])
        .order_by("created_at")
        .values("pk", "filename", "status", "attempts", "created_at", "task_sent_at")[:20]
    )
    return {
        "uploads": uploads,
        "uploads_waiting": stuck,
        "failed_uploads": list(
            Upload.objects.filter(status=Upload.Status.FAILED)
            .order_by("-finished_at")
            .values("pk", "filename", "error", "finished_at")[:10]
        ),
        "detections_owed": owed.count(),
        "detections_overdue": owed.filter(detection_due_at__lt=now).count(),
        "outbox": outbox,
        "outbox_problems": problems,
        "regressions_not_emailed": unsent,
        "workers": workers_by_queue() if with_workers else None,
    }

"""Celery edges of alerting: each takes ids and calls one function of regressions/notify.

Names come from ``perfdb.alerting.queue`` (see there why they are not this module's path).
"""

from __future__ import annotations

from celery import Task, shared_task

from perfdb.alerting import queue
from perfdb.alerting.notify import (
    SendFailed,
    outbox_due,
    outbox_fill_digests,
    outbox_fill_for_upload,
    outbox_send,
    retry_delay,
)
from perfdb.alerting.regressions import regressions_check_upload
from perfdb.models import OutboxMessage


@shared_task(name=queue.REGRESSIONS_CHECK)
def regressions_check(upload_id: int, series: list[list[int]]) -> int:
    pairs = [(setup_id, metric_id) for setup_id, metric_id in series]
    return regressions_check_upload(upload_id=upload_id, series=pairs)


@shared_task(name=queue.NOTIFY_UPLOAD, max_retries=None)
def notify_upload(upload_id: int) -> list[int]:
    message_ids = outbox_fill_for_upload(upload_id=upload_id)
    for message_id in message_ids:
        send_email.delay(message_id)
    return message_ids


@shared_task(name=queue.SEND_EMAIL, bind=True, max_retries=None, acks_late=True)
def send_email(self: Task, message_id: int) -> str:
    """Send one outbox message; on an SMTP failure retry at the row's next attempt time."""
    try:
        return outbox_send(message_id=message_id)
    except SendFailed as exc:
        attempts = OutboxMessage.objects.filter(pk=message_id).values_list("attempts", flat=True)
        delay = retry_delay(attempts.first() or 1).total_seconds()
        raise self.retry(countdown=delay, exc=exc) from exc


@shared_task(name=queue.SEND_DUE_EMAILS)
def send_due_emails() -> int:
    """Beat: re-queue pending messages whose retry is due, in case a task was lost."""
    due = outbox_due()
    for message_id in due:
        send_email.delay(message_id)
    return len(due)


@shared_task(name=queue.SEND_DIGESTS)
def send_digests() -> list[int]:
    message_ids = outbox_fill_digests()
    for message_id in message_ids:
        send_email.delay(message_id)
    return message_ids

"""Celery edges for the data model: regression checks and (see perfdb.notify) email."""

from __future__ import annotations

from celery import shared_task


@shared_task
def ping(value: str) -> str:
    """Round trip through the broker and a worker; used by /healthz tests and operators."""
    return f"pong:{value}"


@shared_task
def regressions_check(upload_id: int, series: list[list[int]]) -> int:
    from perfdb.regressions import regressions_check_upload

    return regressions_check_upload(upload_id=upload_id, series=[tuple(s) for s in series])


@shared_task(bind=True, max_retries=None)
def notify_upload(self, upload_id: int) -> list[int]:
    from perfdb.notify import outbox_fill_for_upload

    message_ids = outbox_fill_for_upload(upload_id=upload_id)
    for message_id in message_ids:
        send_email.delay(message_id)
    return message_ids


@shared_task(bind=True, max_retries=None, acks_late=True)
def send_email(self, message_id: int) -> str:
    """Send one outbox message; on an SMTP failure retry at the row's next attempt time."""
    from perfdb.models import OutboxMessage
    from perfdb.notify import SendFailed, outbox_send, retry_delay

    try:
        return outbox_send(message_id=message_id)
    except SendFailed as exc:
        attempts = OutboxMessage.objects.filter(pk=message_id).values_list("attempts", flat=True)
        delay = retry_delay(attempts.first() or 1).total_seconds()
        raise self.retry(countdown=delay, exc=exc) from exc


@shared_task
def send_due_emails() -> int:
    """Beat: re-queue pending messages whose retry is due, in case a task was lost."""
    from perfdb.notify import outbox_due

    due = outbox_due()
    for message_id in due:
        send_email.delay(message_id)
    return len(due)


@shared_task
def send_digests() -> list[int]:
    from perfdb.notify import outbox_fill_digests

    message_ids = outbox_fill_digests()
    for message_id in message_ids:
        send_email.delay(message_id)
    return message_ids

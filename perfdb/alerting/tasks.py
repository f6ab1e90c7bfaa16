"""Celery edges of alerting: each takes ids and calls one function of regressions/notify.

Names come from ``perfdb.alerting.queue`` (see there why they are not this module's path).
Every task is idempotent and retried (short, capped backoff) only on the transient errors of
``perfdb.operations.transient``; long waits (an SMTP outage) are beat's, never a countdown, so a
broker redelivery never races a retry. What a retry cannot finish, the beat sweeps find again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypedDict, TypeVar

from celery import shared_task

from perfdb.alerting import queue
from perfdb.alerting.followups import followups_recover
from perfdb.alerting.notify import (
    SendFailed,
    outbox_due,
    outbox_fill_digests,
    outbox_fill_for_upload,
    outbox_release_stale,
    outbox_send,
    outbox_wake,
)
from perfdb.alerting.regressions import detection_run
from perfdb.models import OutboxMessage
from perfdb.operations.transient import TRANSIENT_ERRORS, reset_connection


class RetryOptions(TypedDict):
    autoretry_for: tuple[type[BaseException], ...]
    retry_backoff: int
    retry_backoff_max: int
    retry_jitter: bool
    max_retries: int


RETRY: RetryOptions = {
    "autoretry_for": TRANSIENT_ERRORS,
    "retry_backoff": 1,
    "retry_backoff_max": 30,
    "retry_jitter": False,
    "max_retries": 5,
}


P = ParamSpec("P")
R = TypeVar("R")


def _fresh_connection_on_retry(fn: Callable[P, R]) -> Callable[P, R]:
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except TRANSIENT_ERRORS:
            reset_connection()
            raise

    return run


@shared_task(name=queue.REGRESSIONS_CHECK, **RETRY)
def regressions_check(upload_id: int, series: list[list[int]]) -> int:
    pairs = [(setup_id, metric_id) for setup_id, metric_id in series]
    return _fresh_connection_on_retry(detection_run)(upload_id=upload_id, series=pairs)


@shared_task(name=queue.NOTIFY_UPLOAD, **RETRY)
def notify_upload(upload_id: int) -> list[int]:
    message_ids = _fresh_connection_on_retry(outbox_fill_for_upload)(upload_id=upload_id)
    for message_id in message_ids:
        send_email.delay(message_id)
    return message_ids


@shared_task(name=queue.SEND_EMAIL, **RETRY)
def send_email(message_id: int) -> str:
    """Send one outbox message. A transient SMTP failure leaves it pending with its next
    attempt time (beat sends it then); a success wakes every other pending message."""
    try:
        status = _fresh_connection_on_retry(outbox_send)(message_id=message_id)
    except SendFailed:
        return OutboxMessage.Status.PENDING
    if status == OutboxMessage.Status.SENT:
        for other in outbox_wake():
            send_email.delay(other)
    return status


@shared_task(name=queue.SEND_DUE_EMAILS, **RETRY)
def send_due_emails() -> int:
    """Beat (every 15 s): senders that died give their messages back; due messages are
    queued (each leased, so a slow queue does not get it twice)."""
    outbox_release_stale()
    due = outbox_due()
    for message_id in due:
        send_email.delay(message_id)
    return len(due)


@shared_task(name=queue.RECOVER_FOLLOWUPS, **RETRY)
def recover_followups() -> dict[str, list[int]]:
    """Beat (every 30 s): regression checks and emails owed past their deadline."""
    return followups_recover()


@shared_task(name=queue.SEND_DIGESTS, **RETRY)
def send_digests() -> list[int]:
    message_ids = outbox_fill_digests()
    for message_id in message_ids:
        send_email.delay(message_id)
    return message_ids

"""Ingest work, queued by task name: services call this and never import ``ingest.tasks``."""

from __future__ import annotations

from typing import Any

from amqp.exceptions import ChannelError
from celery import current_app
from django.conf import settings

INGEST_UPLOAD = "ingest.tasks.ingest_upload"


def ingest_upload(*, upload_id: int) -> None:
    """Queue the ingest of a stored upload (call it after the upload row commits).

    It raises fast when the broker is down (the web request answers 202 within the
    connect timeout, config/network.py; the caller leaves ``task_sent_at`` empty and the
    sweep queues it later). No result is kept (nothing reads it), so sending never opens the
    result backend's connection: that one retried for 19 s before failing, whatever the
    broker's timeouts."""
    current_app.send_task(INGEST_UPLOAD, args=[upload_id], ignore_result=True)


def ingest_backlog() -> int | None:
    """How many ingest messages wait in the broker's queue; None when the broker cannot be
    asked. A queue the broker does not know (Redis drops an empty list) holds none."""
    try:
        with current_app.connection_for_read() as connection:
            channel: Any = connection.default_channel  # kombu's stub lacks queue_declare
            declared = channel.queue_declare(queue=settings.CELERY_INGEST_QUEUE, passive=True)
            return int(declared.message_count)
    except ChannelError:
        return 0
    except Exception:  # unreachable broker: the sweep then keeps to the long limit
        return None

"""The worker round trip: a task that only answers, for operators and the worker tests.

Alerting's tasks live in ``perfdb.alerting.tasks``; ingest's in ``ingest.tasks``.
"""

from __future__ import annotations

from celery import shared_task


@shared_task
def ping(value: str) -> str:
    """Round trip through the broker and a worker."""
    return f"pong:{value}"

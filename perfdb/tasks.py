"""The worker round trip: a task that only answers, for operators and the worker tests.

Alerting's tasks live in ``perfdb.alerting.tasks``; ingest's in ``ingest.tasks``.
"""

from __future__ import annotations

from celery import shared_task


@shared_task(ignore_result=False)
def ping(value: str) -> str:
    """Round trip through the broker and a worker: its answer is read back, so it is the one
    task that keeps its result (settings ``CELERY_TASK_IGNORE_RESULT``)."""
    return f"pong:{value}"

"""Celery edges for ingestion: take ids, call one service, retry only transient errors.

Transient errors (``perfdb.operations.transient``: a lost database connection, also the raw
driver error from inside a COPY) are retried with a short capped backoff on a fresh
connection; when the retries are spent the upload fails with the reason, within seconds,
instead of waiting for the stuck-upload sweep.
"""

from __future__ import annotations

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded

from ingest import queue, recovery, services
from perfdb.operations.transient import TRANSIENT_ERRORS, reset_connection

MAX_RETRIES = 4  # 1 + 2 + 4 + 8 s of waiting


@shared_task(name=queue.INGEST_UPLOAD, bind=True, max_retries=MAX_RETRIES)
def ingest_upload(self: Task, upload_id: int) -> list[int]:
    try:
        return services.upload_ingest(upload_id=upload_id)
    except SoftTimeLimitExceeded:
        services.upload_fail(
            upload_id=upload_id,
            reason="ingest took longer than the time limit; split the bundle into smaller ones",
        )
        return []
    except TRANSIENT_ERRORS as exc:
        reset_connection()
        if self.request.retries >= MAX_RETRIES:
            services.upload_fail(
                upload_id=upload_id,
                reason=f"the database connection was lost {MAX_RETRIES + 1} times while "
                f"ingesting ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
                "; try again later",
            )
            return []
        raise self.retry(countdown=2**self.request.retries, exc=exc) from exc


@shared_task(name="ingest.tasks.recover_stuck_uploads")
def recover_stuck_uploads() -> dict[str, list[int]]:
    return recovery.uploads_recover_stuck()

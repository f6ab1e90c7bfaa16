"""Celery edges for ingestion: take ids, call one service, retry only transient errors."""

from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import InterfaceError, OperationalError

from ingest import queue, services


@shared_task(
    name=queue.INGEST_UPLOAD,
    bind=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=5,
)
def ingest_upload(self, upload_id: int) -> list[int]:
    try:
        return services.upload_ingest(upload_id=upload_id)
    except SoftTimeLimitExceeded:
        services.upload_fail(
            upload_id=upload_id,
            reason="ingest took longer than the time limit; split the bundle into smaller ones",
        )
        return []


@shared_task
def recover_stuck_uploads() -> dict[str, list[int]]:
    return services.uploads_recover_stuck()

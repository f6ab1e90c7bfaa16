"""Ingest work, queued by task name: services call this and never import ``ingest.tasks``."""

from __future__ import annotations

from celery import current_app

INGEST_UPLOAD = "ingest.tasks.ingest_upload"


def ingest_upload(*, upload_id: int) -> None:
    """Queue the ingest of a stored upload (call it after the upload row commits)."""
    current_app.send_task(INGEST_UPLOAD, args=[upload_id])

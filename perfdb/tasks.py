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

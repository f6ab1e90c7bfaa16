"""Celery edges of the dashboards: each calls one function."""

from __future__ import annotations

from celery import shared_task

from dashboards import warm
from perfdb.cache import WARM_PAGES


@shared_task(name=WARM_PAGES, ignore_result=True)
def warm_pages(scopes: list[str] | None = None) -> None:
    """Recompute the page data an upload to ``scopes`` made stale (dashboards/warm.py)."""
    warm.pages_after_upload(scopes or ())

"""Celery edges of the dashboards: each calls one function."""

from __future__ import annotations

from celery import shared_task

from dashboards.page_cache import warm
from perfdb.cache import WARM_PAGES, queued_scopes


@shared_task(name=WARM_PAGES, ignore_result=True)
def warm_pages(scopes: list[str] | None = None) -> None:
    """Recompute the page data uploads to ``scopes`` and to the scopes waiting in the warm
    set made stale (perfdb/cache/warm.py, dashboards/page_cache/warm.py)."""
    warm.pages_after_upload(queued_scopes(scopes))


@shared_task(name="dashboards.tasks.warm_cold_cache", ignore_result=True)
def warm_cold_cache() -> None:
    """Every page's default view, if the cache was emptied (a deploy, a Redis restart) and
    no warm-up has filled it since (dashboards/page_cache/warm.py ``pages_after_deploy``); queued by
    beat."""
    warm.pages_after_deploy()

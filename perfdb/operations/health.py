"""Health of the parts the product needs.

``probe()`` is the public ``/healthz``: PostgreSQL and Redis, each one short round trip with a
short timeout, no Celery broadcast, and no error text in the answer (an error message can
name hosts, users and URLs). ``health_report()`` is the detailed check for staff
(``/healthz/detail``) and operators (``manage.py health``): database, Redis, Celery workers,
the oldest upload still waiting and the email outbox, with the error texts.
"""

from __future__ import annotations

import logging

import redis
from celery import current_app
from django.conf import settings
from django.db import connection
from django.utils import timezone

log = logging.getLogger(__name__)


def check_database() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any failure means "down"; the message is reported
        return f"database: {exc}"
    return None


def check_redis(timeout: float = 2.0) -> str | None:
    try:
        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        client.ping()
    except Exception as exc:
        return f"redis: {exc}"
    return None


def check_workers() -> str | None:
    try:
        replies = current_app.control.inspect(timeout=1.0).ping() or {}
    except Exception as exc:
        return f"workers: {exc}"
    return None if replies else "workers: no Celery worker answered a ping"


def probe() -> dict[str, object]:
    """The public probe: which part is down, never why (the reason is logged)."""
    failed = []
    for name, check in (("database", check_database), ("redis", lambda: check_redis(0.5))):
        error = check()
        if error:
            log.warning("healthz: %s", error)
            failed.append(name)
    return {"ok": not failed, "failed": failed}


def _uploads_waiting() -> dict[str, object]:
    from perfdb.models import Upload

    waiting = Upload.objects.filter(status__in=[Upload.Status.QUEUED, Upload.Status.PROCESSING])
    oldest = waiting.order_by("created_at").values_list("created_at", flat=True).first()
    return {
        "waiting": waiting.count(),
        "oldest_waiting_seconds": (
            round((timezone.now() - oldest).total_seconds()) if oldest else None
        ),
    }


def _outbox() -> dict[str, object]:
    from perfdb.models import OutboxMessage

    pending = OutboxMessage.objects.filter(status=OutboxMessage.Status.PENDING)
    oldest = pending.order_by("created_at").values_list("created_at", flat=True).first()
    return {
        "pending": pending.count(),
        "failed": OutboxMessage.objects.filter(status=OutboxMessage.Status.FAILED).count(),
        "oldest_pending_seconds": (
            round((timezone.now() - oldest).total_seconds()) if oldest else None
        ),
    }


def health_report() -> dict[str, object]:
    checks = {
        "database": check_database(),
        "redis": check_redis(),
    }
    checks["workers"] = check_workers() if checks["redis"] is None else "workers: redis is down"
    report: dict[str, object] = {
        "ok": all(v is None for v in checks.values()),
        "checks": {name: (error or "ok") for name, error in checks.items()},
    }
    if checks["database"] is None:
        report["uploads"] = _uploads_waiting()
        report["email"] = _outbox()
    return report

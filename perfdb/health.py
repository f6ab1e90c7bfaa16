"""Liveness of the parts the product needs: PostgreSQL, Redis and at least one Celery worker."""

from __future__ import annotations

import redis
from celery import current_app
from django.conf import settings
from django.db import connection


def check_database() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any failure means "down"; the message is reported
        return f"database: {exc}"
    return None


def check_redis() -> str | None:
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2).ping()
    except Exception as exc:
        return f"redis: {exc}"
    return None


def check_workers() -> str | None:
    try:
        replies = current_app.control.inspect(timeout=1.0).ping() or {}
    except Exception as exc:
        return f"workers: {exc}"
    return None if replies else "workers: no Celery worker answered a ping"


def health_report() -> dict[str, object]:
    checks = {
        "database": check_database(),
        "redis": check_redis(),
    }
    checks["workers"] = check_workers() if checks["redis"] is None else "workers: redis is down"
    return {
        "ok": all(v is None for v in checks.values()),
        "checks": {name: (error or "ok") for name, error in checks.items()},
    }

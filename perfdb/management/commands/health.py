"""``manage.py health``: the detailed health check (database, Redis, Celery workers, the
oldest upload waiting, the email outbox) as JSON; exit status 1 when a part is down."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from perfdb.operations.health import health_report


class Command(BaseCommand):
    help = "Check PostgreSQL, Redis, Celery workers, waiting uploads and the email outbox."

    def handle(self, *args: Any, **options: Any) -> None:
        report = health_report()
        self.stdout.write(json.dumps(report, indent=2, default=str))
        checks = report["checks"]
        if not report["ok"] and isinstance(checks, dict):
            raise CommandError(
                "unhealthy: " + ", ".join(f"{k}: {v}" for k, v in checks.items() if v != "ok")
            )

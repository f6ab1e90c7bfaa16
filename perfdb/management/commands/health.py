"""``manage.py health``: the detailed health check (database, Redis, Celery workers, the
oldest upload waiting, the email outbox) as JSON; exit status 1 when a part is down."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from perfdb.health import health_report


class Command(BaseCommand):
    help = "Check PostgreSQL, Redis, Celery workers, waiting uploads and the email outbox."

    def handle(self, *args, **options):
        report = health_report()
        self.stdout.write(json.dumps(report, indent=2, default=str))
        if not report["ok"]:
            raise CommandError(
                "unhealthy: "
                + ", ".join(f"{k}: {v}" for k, v in report["checks"].items() if v != "ok")
            )

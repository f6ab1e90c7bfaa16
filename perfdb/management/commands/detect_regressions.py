"""python manage.py detect_regressions: re-run the regression check over every series."""

from typing import Any

from django.core.management.base import BaseCommand

from perfdb.alerting.regressions import regressions_recheck_all


class Command(BaseCommand):
    help = "Re-run regression detection over all stored series (existing alerts are kept)."

    def handle(self, *args: Any, **options: Any) -> None:
        created = regressions_recheck_all()
        self.stdout.write(f"{created} new alert(s).")

"""python manage.py prune --days N: drop what is no longer needed, never a stored run."""

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from perfdb.models import OutboxMessage, Upload


class Command(BaseCommand):
    help = (
        "Delete failed uploads (and their stored bundle files) and sent emails older than N "
        "days. Runs and their data are never pruned here; synthetic data has its own "
        "`synth_history --remove`."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=90)
        parser.add_argument("--dry-run", action="store_true")

    def handle(self, *args: Any, days: int, dry_run: bool, **options: Any) -> None:
        cutoff = timezone.now() - timedelta(days=days)
        failed = Upload.objects.filter(status=Upload.Status.FAILED, created_at__lt=cutoff)
        sent = OutboxMessage.objects.filter(status=OutboxMessage.Status.SENT, sent_at__lt=cutoff)
        self.stdout.write(f"{failed.count()} failed upload(s), {sent.count()} sent email(s)")
        if dry_run:
            return
        for upload in failed:
            upload.file.delete(save=False)
        failed.delete()
        sent.delete()
        self.stdout.write("pruned")

"""python manage.py backup DIR: the database and every stored bundle, with a manifest."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from perfdb.operations.backup import BackupError, backup


class Command(BaseCommand):
    help = (
        "Back up the database (pg_dump, custom format) and every upload's stored bundle into "
        "DIR (new or empty), with a manifest of sizes, SHA-256 sums and row counts."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path)

    def handle(self, *args: Any, directory: Path, **options: Any) -> None:
        try:
            summary = backup(directory, say=self.stdout.write)
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        if summary.missing:
            self.stderr.write(f"{len(summary.missing)} bundles were missing from storage")
        self.stdout.write(f"backup written to {directory}")

"""python manage.py restore DIR: a backup into a fresh database and the bundle storage."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from perfdb.operations.backup import BackupError, restore


class Command(BaseCommand):
    help = (
        "Restore a backup made by `backup` into the database DATABASE_URL names, which must "
        "hold no tables (createdb it first), and write its bundles back to the storage."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path)

    def handle(self, *args: Any, directory: Path, **options: Any) -> None:
        try:
            summary = restore(directory, say=self.stdout.write)
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        counts = ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in summary.counts.items())
        self.stdout.write(f"restored: {counts}; {summary.bundles} bundles")

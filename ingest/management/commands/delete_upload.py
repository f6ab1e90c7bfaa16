"""``manage.py delete_upload UPLOAD_ID``: delete an upload and everything it created (runs
and all that hangs off them, its alerts, the stored bundle) in one transaction; audited in
the log."""

from __future__ import annotations

import getpass

from django.core.management.base import BaseCommand, CommandError

from ingest import recovery
from perfdb.models import Upload


class Command(BaseCommand):
    help = "Delete an upload and everything it created, in one transaction (audited)."

    def add_arguments(self, parser):
        parser.add_argument("upload_id", type=int)

    def handle(self, *args, upload_id, **options):
        if not Upload.objects.filter(pk=upload_id).exists():
            raise CommandError(f"no upload {upload_id}")
        gone = recovery.upload_delete(upload_id=upload_id, user=f"{getpass.getuser()} (shell)")
        self.stdout.write(f"upload {upload_id} deleted: {gone['runs']} runs, {gone['alerts']} rows")

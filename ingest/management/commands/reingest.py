"""``manage.py reingest UPLOAD_ID…``: ingest stored bundles again, here and now (a parser
fix reaches old uploads); each upload's runs are replaced in one transaction."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from ingest import recovery, services
from perfdb.models import Upload


class Command(BaseCommand):
    help = "Ingest stored bundles again, replacing their runs atomically."

    def add_arguments(self, parser):
        parser.add_argument("upload_ids", nargs="+", type=int)

    def handle(self, *args, upload_ids, **options):
        failed = False
        for upload_id in upload_ids:
            if not Upload.objects.filter(pk=upload_id).exists():
                raise CommandError(f"no upload {upload_id}")
            recovery.upload_reingest(upload_id=upload_id, user="manage.py reingest", queue_it=False)
            services.upload_ingest(upload_id=upload_id)
            upload = Upload.objects.get(pk=upload_id)
            failed |= upload.status != Upload.Status.DONE
            self.stdout.write(
                f"upload {upload_id}: {upload.status}"
                + (f": {upload.error}" if upload.error else f", runs {upload.run_ids}")
            )
        if failed:
            raise CommandError("some uploads failed")

"""python manage.py upload_bundle FILE…: ingest bundles into this installation now."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ingest.services import UploadTooLarge, upload_create, upload_ingest
from perfdb.models import Upload


class Command(BaseCommand):
    help = "Store and ingest result bundles (.tar.gz/.zip, format 1) in this process."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)

    def handle(self, *args, files: list[Path], **options):
        failed = 0
        for path in files:
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
            try:
                with path.open("rb") as stream:
                    upload, created = upload_create(stream=stream, filename=path.name, source="cli")
            except UploadTooLarge as exc:
                raise CommandError(f"{path}: {exc}") from exc
            if created or upload.status in (Upload.Status.QUEUED, Upload.Status.PROCESSING):
                upload_ingest(upload_id=upload.pk)
            upload.refresh_from_db()
            if upload.status == Upload.Status.DONE:
                note = "" if created else " (identical bundle uploaded before)"
                self.stdout.write(f"{path}: upload {upload.pk} done{note}")
                for run_id in upload.run_ids:
                    self.stdout.write(f"  run {run_id}: /runs/{run_id}/")
                for warning in upload.warnings:
                    self.stdout.write(f"  warning: {warning}")
            else:
                failed += 1
                self.stderr.write(f"{path}: upload {upload.pk} {upload.status}: {upload.error}")
        if failed:
            raise CommandError(f"{failed} bundle(s) failed")

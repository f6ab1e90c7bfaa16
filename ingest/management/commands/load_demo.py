"""python manage.py load_demo [--if-empty] [--reload]: the seed papers' tables, via Celery."""

from django.core.management.base import BaseCommand, CommandError

from ingest.demo import demo_load, demo_remove
from perfdb.models import Upload


class Command(BaseCommand):
    help = "Queue the demo bundles (demo/) through the ingest pipeline and wait for a worker."

    def add_arguments(self, parser):
        parser.add_argument("--if-empty", action="store_true", help="skip if already loaded")
        parser.add_argument("--reload", action="store_true", help="remove the demo data first")
        parser.add_argument("--wait", type=float, default=300, help="seconds to wait")

    def handle(self, *args, if_empty: bool, reload: bool, wait: float, **options):
        if if_empty and not reload and Upload.objects.filter(source="demo").exists():
            self.stdout.write("Demo data already loaded.")
            return
        if reload:
            self.stdout.write(f"Removed {demo_remove()} demo runs.")
        uploads = demo_load(wait_seconds=wait)
        problems = 0
        for upload in uploads:
            line = f"{upload.filename}: {upload.status}, {len(upload.run_ids)} runs"
            if upload.status == Upload.Status.FAILED:
                line += f" — {upload.error}"
                problems += 1
            elif upload.status != Upload.Status.DONE:
                line += " (no worker finished it yet: is a Celery worker running?)"
                problems += 1
            self.stdout.write(line)
        if problems:
            raise CommandError(f"{problems} demo bundle(s) did not load")

"""The demo: the seed papers' tables as bundles in demo/, loaded through the real pipeline."""

from __future__ import annotations

import gzip
import io
import tarfile
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction

from ingest.services import upload_create
from perfdb.cache import data_changed_on_commit
from perfdb.models import Run, Upload

DEMO_DIR = Path(settings.BASE_DIR) / "demo"

def bundle_from_folder(folder: Path) -> bytes:
    """A reproducible .tar.gz of a folder: same files, same bytes (so re-loading dedupes)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            info = tarfile.TarInfo(str(path.relative_to(folder)))
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def demo_folders() -> list[Path]:
    return sorted(p for p in DEMO_DIR.iterdir() if (p / "manifest.toml").is_file())


@transaction.atomic
def demo_remove() -> int:
    """Delete the demo uploads and their runs (and everything hanging off those runs)."""
    uploads = Upload.objects.filter(source="demo")
    runs = Run.objects.filter(upload__in=uploads)
    count = runs.count()
    runs.delete()
    uploads.delete()
    data_changed_on_commit()
    return count


def demo_load(*, wait_seconds: float = 300) -> list[Upload]:
    """Queue every demo bundle for ingest and wait until each is done or failed."""
    uploads = []
    for folder in demo_folders():
        upload, _ = upload_create(
            stream=io.BytesIO(bundle_from_folder(folder)),
            filename=f"{folder.name}.tar.gz",
            source="demo",
        )
        uploads.append(upload)
    deadline = time.monotonic() + wait_seconds
    pending = {u.pk for u in uploads}
    while pending and time.monotonic() < deadline:
        finished = Upload.objects.filter(
            pk__in=pending, status__in=[Upload.Status.DONE, Upload.Status.FAILED]
        ).values_list("pk", flat=True)
        pending -= set(finished)
        if pending:
            time.sleep(0.5)
    return list(Upload.objects.filter(pk__in=[u.pk for u in uploads]).order_by("pk"))

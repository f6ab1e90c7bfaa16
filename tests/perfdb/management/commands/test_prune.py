"""``manage.py prune``: old failed uploads and their files go, runs never do."""

import os
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from ingest.services import upload_create, upload_ingest
from perfdb.models import Run, Upload
from tests.bundles import make_bundle, volano_bundle

pytestmark = pytest.mark.django_db


def test_prune_drops_old_failed_uploads_but_never_runs(tmp_path):
    good = volano_bundle(tmp_path / "good.tar.gz")
    bad = make_bundle(tmp_path / "bad.tar.gz", {"manifest.toml": "format = 3\n"})
    for path in (good, bad):
        with open(path, "rb") as f:
            upload, _ = upload_create(stream=f, filename=path.name)
        upload_ingest(upload_id=upload.pk)
    Upload.objects.update(created_at=timezone.now() - timedelta(days=400))
    failed = Upload.objects.get(status="failed")
    stored_file = failed.file.path
    call_command("prune", "--days", "90")
    assert list(Upload.objects.values_list("status", flat=True)) == ["done"]
    assert Run.objects.count() == 1
    assert not os.path.exists(stored_file)

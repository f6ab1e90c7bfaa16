from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from ingest.services import upload_create, upload_ingest
from perfdb.models import Alert, Run, Upload
from tests.bundles import make_bundle, volano_bundle
from tests.perfdb.alerting.builds import ingest_runs

pytestmark = pytest.mark.django_db


def test_detect_regressions_rechecks_everything(tmp_path, capsys):
    ingest_runs(
        tmp_path,
        "a.tar.gz",
        [("2.4.20", "[]", (13000, 13100, 12950)), ("2.4.20", '["O(1)"]', (11000, 11100, 11050))],
    )
    assert not Alert.objects.exists()  # no check ran yet (no worker in this test)
    call_command("detect_regressions")
    assert Alert.objects.filter(metric__name="throughput", direction="regression").count() == 1
    call_command("detect_regressions")
    assert Alert.objects.filter(metric__name="throughput").count() == 1
    assert "0 new alert(s)" in capsys.readouterr().out


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
    import os

    assert not os.path.exists(stored_file)

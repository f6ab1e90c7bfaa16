"""A worker killed in the middle of an ingest leaves nothing half-written, and the upload
is finished when its message is delivered again to another worker."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time

import pytest
from django.conf import settings
from django.core.files.base import ContentFile

from ingest.tasks import ingest_upload
from perfdb.models import Run, Sample, Upload
from tests.bundles import make_bundle, manifest_toml, volano_run
from tests.conftest import ROOT

QUEUE = "kill-test"
COLUMNS = "r b swpd free buff cache si so bi bo in cs us sy id wa"


def big_bundle(tmp_path):
    """A vmstat log big enough that its ingest takes a while: ~1 s at 300,000 rows since
    plain rows are read in blocks (ingest/parsers/plain_rows.py); 60,000 had become too
    quick to be killed in the middle."""
    rows = "\n".join(" ".join(str(i % 97 + j) for j in range(16)) for i in range(300_000))
    manifest = manifest_toml(volano_run("2.6.9", files='{ path = "v.txt", parser = "vmstat" }'))
    return make_bundle(
        tmp_path / "big.tar.gz", {"manifest.toml": manifest, "v.txt": f"{COLUMNS}\n{rows}\n"}
    )


def start_worker() -> subprocess.Popen:
    db = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
    }
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-P",
            "solo",
            "-Q",
            QUEUE,
            "--without-gossip",
            "--without-mingle",
            "-n",
            "victim@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_for(predicate, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_killing_the_worker_mid_ingest_leaves_nothing_then_a_retry_finishes(tmp_path):
    data = big_bundle(tmp_path).read_bytes()
    upload = Upload(filename="big.tar.gz", sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    upload.file.save("big.tar.gz", ContentFile(data), save=False)
    upload.save()

    worker = start_worker()
    try:
        ingest_upload.apply_async(args=[upload.pk], queue=QUEUE)
        wait_for(lambda: Upload.objects.get(pk=upload.pk).status == "processing")
        time.sleep(0.1)  # parsing: nothing written yet, or mid-transaction
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    upload.refresh_from_db()
    assert upload.status == "processing"
    assert Run.objects.count() == 0 and Sample.objects.count() == 0

    # The message is delivered again (acks_late: the broker after its visibility timeout,
    # or the stuck-upload sweep); a new worker finishes the upload from scratch.
    worker = start_worker()
    try:
        ingest_upload.apply_async(args=[upload.pk], queue=QUEUE)
        wait_for(lambda: Upload.objects.get(pk=upload.pk).status in ("done", "failed"))
    finally:
        worker.terminate()
        worker.wait(timeout=20)
    upload.refresh_from_db()
    assert upload.status == "done", upload.error
    assert upload.attempts == 2
    assert Run.objects.count() == 1
    assert sum(len(v) for v in Sample.objects.values_list("values", flat=True)) == 300_000 * 16

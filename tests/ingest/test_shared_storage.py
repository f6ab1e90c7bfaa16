"""Bundles in shared storage, over HTTP against an S3-compatible server.

moto's standalone server (``moto[server]``) is started on a free port; two child processes
run Django with the settings a real bucket uses (AWS_STORAGE_BUCKET_NAME, AWS_S3_ENDPOINT_URL,
credentials), each with a MEDIA_ROOT of its own: the "web server" stores an upload, the
"worker on another host" ingests it, reading the bundle from the bucket, not from a disk
they share.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import redis
from django.conf import settings

boto3 = pytest.importorskip("boto3", reason="boto3 is in requirements.in")
pytest.importorskip("moto.server", reason="moto[server] is in requirements-dev.in")
pytest.importorskip("storages", reason="django-storages is in requirements.in")

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "perfdb-bundles-test"
QUEUE = "shared-storage-test-unheard"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def s3_endpoint():
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("moto server did not start")
                time.sleep(0.2)
        yield endpoint
    finally:
        server.terminate()
        server.wait(timeout=10)


STORE = textwrap.dedent(
    """
    import django, sys
    django.setup()
    from django.core.files.storage import storages
    from ingest.services import upload_create
    from tests.dashboards.data import dashboard_bundle
    import tempfile
    from pathlib import Path
    path = dashboard_bundle(Path(tempfile.mkdtemp()) / "dash.tar.gz")
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name, source="cli")
    assert type(storages["default"]).__name__ == "S3Storage", type(storages["default"])
    print(upload.pk, upload.file.name)
    """
)

INGEST = textwrap.dedent(
    """
    import django, sys
    django.setup()
    from ingest.services import upload_ingest
    from perfdb.models import Upload
    upload_id = int(sys.argv[1])
    run_ids = upload_ingest(upload_id=upload_id)
    upload = Upload.objects.get(pk=upload_id)
    assert upload.status == "done", upload.error
    print(len(run_ids))
    """
)


@pytest.mark.django_db(transaction=True)
def test_a_worker_elsewhere_ingests_what_the_web_server_stored(s3_endpoint, tmp_path):
    s3 = boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    s3.create_bucket(Bucket=BUCKET)
    db = settings.DATABASES["default"]
    base = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "AWS_STORAGE_BUCKET_NAME": BUCKET,
        "AWS_S3_ENDPOINT_URL": s3_endpoint,
        "AWS_S3_REGION_NAME": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        # The ingest this test runs itself; a worker of the test session must not take it.
        "CELERY_INGEST_QUEUE": QUEUE,
    }
    web_media, worker_media = tmp_path / "web", tmp_path / "worker"
    web_media.mkdir()
    worker_media.mkdir()

    def child(code: str, media: Path, *args: str) -> str:
        out = subprocess.run(
            [sys.executable, "-c", "from pathlib import Path\n" + code, *args],
            cwd=ROOT,
            env={**base, "MEDIA_ROOT": str(media)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
        return out.stdout.strip().splitlines()[-1]

    upload_id, name = child(STORE, web_media).split(" ", 1)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]
    assert keys == [f"bundles/{name}"], keys  # in the bucket, under AWS_LOCATION
    assert not any(web_media.rglob("*")), "nothing on the web server's disk"
    runs = int(child(INGEST, worker_media, upload_id))
    assert runs > 0
    assert not any(worker_media.rglob("*")), "the worker read the bucket, kept no copy"
    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(QUEUE)

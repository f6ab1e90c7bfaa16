"""Through a real Celery worker: the upload's request id and upload id reach every JSON log
line of its ingest and of the regression check it queues, and the worker serves its task
durations on its own port (config/celery_observability.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
import redis
from django.conf import settings
from prometheus_client.parser import text_string_to_metric_families

from config.celery import app
from ingest import queue as ingest_queue
from ingest.services import upload_create
from perfdb.models import Upload
from perfdb.operations import log_context
from tests.bundles import volano_bundle
from tests.conftest import ROOT, free_port

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _metrics(port: int) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1) as answer:
            return answer.read().decode()
    except OSError:
        return None


@pytest.fixture
def json_worker(tmp_path):
    """A worker of this test's own (its own queue, so the session's worker takes none of its
    tasks), logging JSON, serving its metrics on a port; (queue, port, log path)."""
    queue = f"obs-{uuid.uuid4().hex[:8]}"
    port = free_port()
    db = settings.DATABASES["default"]
    log_path = tmp_path / "worker.jsonl"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "LOG_FORMAT": "json",
        "METRICS_WORKER_PORT": str(port),
        "PYTHONUNBUFFERED": "1",
    }
    for name in ("CELERY_INGEST_QUEUE", "CELERY_DETECTION_QUEUE", "CELERY_EMAIL_QUEUE"):
        env.pop(name, None)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo",
             "--without-gossip", "--without-mingle", "-Q", queue, "-n", f"{queue}@%h"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.time() + 60
        while _metrics(port) is None:  # served once the worker is ready
            assert proc.poll() is None, log_path.read_text()
            assert time.time() < deadline, "the worker did not start within 60 s"
            time.sleep(0.2)
        yield queue, port, log_path
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(queue)


def json_lines(path: Path) -> list[dict]:
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


def test_an_uploads_ids_reach_the_worker_log_lines_of_its_ingest_and_check(
    json_worker, tmp_path, monkeypatch
):
    queue, port, log_path = json_worker
    monkeypatch.setattr(
        ingest_queue,
        "ingest_upload",
        lambda *, upload_id: app.send_task(ingest_queue.INGEST_UPLOAD, [upload_id], queue=queue),
    )
    request_id = "edge-" + uuid.uuid4().hex
    with (
        log_context.bound(request_id=request_id),
        open(volano_bundle(tmp_path / "a.tgz"), "rb") as f,
    ):
        upload, _ = upload_create(stream=f, filename="a.tgz")
    deadline = time.time() + 60
    while True:
        upload.refresh_from_db()
        if upload.status == "done" and upload.detection_due_at is None:
            break  # ingested, and its regression check ran
        assert upload.status != "failed", upload.error
        assert time.time() < deadline, upload.status
        time.sleep(0.2)

    lines = json_lines(log_path)
    ours = [line for line in lines if line.get("request_id") == request_id]
    tasks = {line["task"] for line in ours}
    assert {"ingest.tasks.ingest_upload", "perfdb.tasks.regressions_check"} <= tasks
    assert all(line["upload_id"] == upload.pk for line in ours)
    assert any(f"upload {upload.pk} done" in line["message"] for line in ours)
    for line in ours:
        assert {"time", "level", "logger", "message"} <= line.keys()

    durations = {
        (s.labels["task"], s.labels["state"]): s.value
        for family in text_string_to_metric_families(_metrics(port) or "")
        for s in family.samples
        if s.name == "perfdb_celery_task_duration_seconds_count"
    }
    assert durations[("ingest.tasks.ingest_upload", "SUCCESS")] == 1
    assert durations[("perfdb.tasks.regressions_check", "SUCCESS")] == 1


def test_a_task_without_a_request_id_gets_one_of_its_own(json_worker):
    queue, _, log_path = json_worker
    result = app.send_task("perfdb.tasks.ping", ["x"], queue=queue)
    deadline = time.time() + 30
    while not [line for line in json_lines(log_path) if result.id in line["message"]]:
        assert time.time() < deadline
        time.sleep(0.2)
    done = [line for line in json_lines(log_path) if line.get("task") == "perfdb.tasks.ping"]
    assert done and all(log_context.valid_request_id(line["request_id"]) for line in done)
    assert Upload.objects.count() == 0

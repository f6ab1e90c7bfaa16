"""The broker dies: a real redis-server of the test's own, SIGKILLed and started again on the
same port with no persistence (as this machine and docker-compose run Redis), so every message
it held — queued or taken by a worker and not yet acknowledged — is gone. After each, beat's
sweeps (sent by the test) bring the upload to done, the alert is raised once and emailed once.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
import redis
from celery import Celery
from django.utils import timezone

from perfdb.models import OutboxMessage, Upload
from tests.conftest import free_port
from tests.ingest.faults import (
    QUEUE,
    SWEEPS,
    Mailbox,
    assert_final_and_emailed_once,
    baseline_and_regression,
    kill,
)

pytestmark = [
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server"),
]


class Broker:
    """A redis-server of this test's own, killable."""

    def __init__(self, folder: Path):
        self.port = free_port()
        self.folder = folder
        self.proc: subprocess.Popen | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        client = redis.Redis.from_url(self.url)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def kill(self) -> None:
        assert self.proc is not None
        kill(self.proc)

    def waiting(self) -> int:
        return int(redis.Redis.from_url(self.url).llen(QUEUE))


@pytest.fixture
def broker(tmp_path):
    server = Broker(tmp_path)
    server.start()
    yield server
    if server.proc and server.proc.poll() is None:
        server.kill()


def sender(broker: Broker) -> Celery:
    """A producer for this broker only: never the current app, which later tests use."""
    return Celery("sender", broker=broker.url, set_as_current=False)


def sweep_until(broker: Broker, predicate, timeout: float = 40, what: str = "") -> None:
    """Beat's sweeps, one message at a time (each only when the queue is empty, as beat's
    30-second schedule leaves it), until ``predicate`` holds."""
    app = sender(broker)
    deadline = time.time() + timeout
    turn = 0
    while time.time() < deadline:
        if predicate():
            return
        if broker.waiting() == 0:
            app.send_task(SWEEPS[turn % len(SWEEPS)], queue=QUEUE)
            turn += 1
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def emailed(box: Mailbox):
    return lambda: OutboxMessage.objects.filter(status="sent").exists() and box.messages


def test_broker_restarted_with_the_ingest_message_queued(
    tmp_path,
    user,
    workers,
    mailbox,
    broker,
):
    upload = baseline_and_regression(tmp_path, user)
    sender(broker).send_task("ingest.tasks.ingest_upload", args=[upload.pk], queue=QUEUE)
    Upload.objects.filter(pk=upload.pk).update(task_sent_at=timezone.now())  # as ingest_queue
    assert broker.waiting() == 1
    broker.kill()
    broker.start()  # the same port, empty: the message is lost
    assert broker.waiting() == 0
    workers.start(REDIS_URL=broker.url)
    sweep_until(broker, emailed(mailbox), what="the alert email")
    time.sleep(0.5)  # a duplicate would arrive now
    assert len(mailbox.messages) == 1
    assert_final_and_emailed_once(upload, mailbox)


def test_broker_and_worker_killed_mid_detection(
    tmp_path,
    user,
    workers,
    mailbox,
    broker,
):
    """The worker pauses between two committed series of the regression check; the broker
    (holding the check's unacknowledged message) and the worker die together."""
    upload = baseline_and_regression(tmp_path, user)
    victim = workers.start(
        REDIS_URL=broker.url,
        PERFDB_PAUSE_AT="detection-series",
        DETECTION_SERIES_PER_TRANSACTION="1",  # a commit between the two series
    )
    sender(broker).send_task("ingest.tasks.ingest_upload", args=[upload.pk], queue=QUEUE)
    reached = tmp_path / "detection-series.reached"
    deadline = time.time() + 30
    while not reached.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert reached.exists(), "the check did not reach its second series"
    upload.refresh_from_db()
    assert upload.status == "done" and upload.detection_due_at is not None
    broker.kill()
    kill(victim)
    broker.start()
    workers.start(REDIS_URL=broker.url)
    sweep_until(broker, emailed(mailbox), what="the alert email")
    time.sleep(0.5)
    assert len(mailbox.messages) == 1
    assert_final_and_emailed_once(upload, mailbox)


def test_a_queued_message_still_waiting_is_not_sent_twice(tmp_path, user, settings):
    """The sweep sends again only when the broker's ingest queue is empty: a backlog of
    waiting uploads is not copied every 30 seconds."""
    from celery import current_app

    from ingest.recovery import uploads_recover_stuck

    settings.CELERY_INGEST_QUEUE = f"backlog-{free_port()}"
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    upload = baseline_and_regression(tmp_path, user)
    current_app.send_task(
        "ingest.tasks.ingest_upload", args=[upload.pk], queue=settings.CELERY_INGEST_QUEUE
    )
    sent = timezone.now()
    Upload.objects.filter(pk=upload.pk).update(task_sent_at=sent)
    later = timezone.now() + timezone.timedelta(minutes=2)
    try:
        assert uploads_recover_stuck(now=later)["requeued"] == []
        assert client.llen(settings.CELERY_INGEST_QUEUE) == 1
        client.delete(settings.CELERY_INGEST_QUEUE)  # what a broker restart does
        assert uploads_recover_stuck(now=later)["requeued"] == [upload.pk]
        upload.refresh_from_db()
        assert upload.task_sent_at > sent  # sent again (to the routed queue)
    finally:
        client.delete(settings.CELERY_INGEST_QUEUE)


# --- the worker survives its broker ------------------------------------------------------------


def uploads_of(tmp_path, count: int) -> list[Upload]:
    """``count`` uploads of different runs (a kernel each), stored and not yet ingested."""
    from tests.ingest.faults import bundle_upload

    return [
        bundle_upload(tmp_path, f"k{i}.tar.gz", f"2.6.{i + 1}", "[]", (13000 + i, 13100, 12950))
        for i in range(count)
    ]


def start_prefork_worker(workers, broker: Broker, **extra: str) -> subprocess.Popen:
    """A worker as docker-compose runs it: the prefork pool, with gossip, mingle and
    heartbeats (the fixture's workers turn those off); its log is the fixture's."""
    import sys

    from tests.conftest import ROOT

    out = open(workers.log, "a")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-c", "2", "-Q", QUEUE,
         "--loglevel", "INFO", "-n", f"survivor{len(workers.procs)}@%h"],
        cwd=ROOT, env={**workers.env, "REDIS_URL": broker.url, **extra},
        stdout=out, stderr=subprocess.STDOUT,
    )  # fmt: skip
    workers.procs.append(proc)
    return proc


def test_broker_restarted_with_tasks_in_flight_the_worker_lives_and_all_finish(
    tmp_path, workers, broker
):
    """Three uploads: one paused inside its ingest transaction (taken, unacknowledged), the
    others queued or prefetched; Redis is killed and started empty. The worker process must
    still be running (reconnected) and every upload done within a minute, the sweep (sent
    as beat sends it) queueing what the broker lost."""
    uploads = uploads_of(tmp_path, 3)
    worker = start_prefork_worker(
        workers, broker, PERFDB_PAUSE_AT="ingest-writing", FOLLOWUP_DEADLINE_SECONDS="5"
    )
    app = sender(broker)
    for upload in uploads:
        app.send_task("ingest.tasks.ingest_upload", args=[upload.pk], queue=QUEUE)
    Upload.objects.update(task_sent_at=timezone.now())  # as ingest_queue does
    reached = tmp_path / "ingest-writing.reached"
    deadline = time.time() + 30
    while not reached.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert reached.exists(), "no ingest reached its transaction"
    broker.kill()
    time.sleep(2)  # the worker notices and retries meanwhile
    broker.start()  # empty: queued and unacknowledged messages are gone
    (tmp_path / "ingest-writing.release").touch()
    restarted = time.time()

    def all_done() -> bool:
        return Upload.objects.filter(status="done").count() == len(uploads)

    sweep_until(broker, all_done, timeout=60, what="every upload done")
    assert time.time() - restarted < 60
    assert worker.poll() is None, workers.log.read_text()[-3000:]
    failed = Upload.objects.exclude(status="done").values_list("pk", "status", "error")
    assert not failed


def app_of(broker: Broker) -> Celery:
    """The project's Celery settings (config/celery.py, config/network.py) on this broker."""
    from config.celery import app as project

    app = Celery("outage", set_as_current=False)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.broker_url = app.conf.result_backend = broker.url  # one Redis, as deployed
    app.conf.broker_transport_options = project.conf.broker_transport_options
    return app


def test_an_upload_while_the_broker_is_down_is_answered_fast_and_swept_later(
    tmp_path, broker, client, token, settings
):
    from celery import current_app

    from ingest.recovery import uploads_recover_stuck
    from tests.bundles import volano_bundle

    previous = current_app._get_current_object()
    app = app_of(broker)
    app.set_current()
    try:
        broker.kill()
        path = volano_bundle(tmp_path / "outage.tar.gz")
        started = time.monotonic()
        with open(path, "rb") as stream:
            response = client.post(
                "/api/uploads/", {"bundle": stream}, HTTP_AUTHORIZATION=f"Token {token}"
            )
        took = time.monotonic() - started
        assert response.status_code == 202, response.content
        assert took < 2, f"the upload's answer took {took:.1f} s with the broker down"
        upload = Upload.objects.get(pk=response.json()["id"])
        assert upload.status == "queued" and upload.task_sent_at is None  # the sweep's to send
        broker.start()
        later = timezone.now() + timezone.timedelta(minutes=1)
        assert uploads_recover_stuck(now=later)["requeued"] == [upload.pk]
        assert redis.Redis.from_url(broker.url).llen(settings.CELERY_INGEST_QUEUE) == 1
    finally:
        previous.set_current()

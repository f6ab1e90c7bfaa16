"""Faults after an upload, against real processes: a Celery worker SIGKILLed at a named
point (perfdb/operations/faults.py makes it wait there, so the kill lands deterministically), an
SMTP server that stops, restarts or hangs mid-exchange, database connections terminated with
pg_terminate_backend mid-ingest. After each: the upload is final, the expected alert exists
once, and its email was delivered once (one Message-ID).

Recovery is what beat does in production: the tests send the sweep tasks to their worker
instead of waiting for beat's schedule. Each test runs on its own queue with its own worker,
settings shortened through the environment (deadlines of 1-2 s).
"""

from __future__ import annotations

import email
import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.core.files.base import ContentFile
from django.db import connection

from perfdb.alerting.regressions import regressions_check_upload
from perfdb.models import Alert, OutboxMessage, Run, Subscription, Upload
from tests.bundles import make_bundle, manifest_toml, volano_log, volano_run
from tests.conftest import ROOT, free_port

QUEUE = "faults"
SWEEPS = (
    "ingest.tasks.recover_stuck_uploads",
    "perfdb.tasks.recover_followups",
    "perfdb.tasks.send_due_emails",
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


class Mailbox:
    """A real SMTP server (aiosmtpd) keeping what it accepts; ``hold`` makes it wait inside
    the DATA command until released (the client has sent the whole message)."""

    def __init__(self):
        self.port = free_port()
        self.messages: list[email.message.Message] = []
        self.hold = False
        self.in_data = threading.Event()
        self.release = threading.Event()
        self.controller = None

    async def handle_DATA(self, server, session, envelope):
        import asyncio

        if self.hold:
            self.in_data.set()
            await asyncio.get_running_loop().run_in_executor(None, self.release.wait, 30)
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 Message accepted"

    def start(self):
        from aiosmtpd.controller import Controller

        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self):
        if self.controller:
            self.controller.stop()
            self.controller = None

    def ids(self) -> set[str]:
        return {m["Message-ID"] for m in self.messages}


@pytest.fixture
def mailbox():
    box = Mailbox()
    box.start()
    yield box
    box.release.set()
    box.stop()


@pytest.fixture
def faults_env(tmp_path, mailbox):
    """Environment for this test's workers; purges the test queue first."""
    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(QUEUE)
    db = settings.DATABASES["default"]
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(mailbox.port),
        "EMAIL_TIMEOUT": "5",
        "CELERY_TASK_DEFAULT_QUEUE": QUEUE,
        "FOLLOWUP_DEADLINE_SECONDS": "1",
        "OUTBOX_RETRY_MAX_SECONDS": "1",
        "OUTBOX_SENDING_TIMEOUT": "2",
        "PERFDB_PAUSE_DIR": str(tmp_path),
        "PYTHONUNBUFFERED": "1",
    }


class Workers:
    def __init__(self, env, log: Path):
        self.env, self.log, self.procs = env, log, []

    def start(self, **extra: str) -> subprocess.Popen:
        out = open(self.log, "a")  # noqa: SIM115
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo", "-Q",
             QUEUE, "--without-gossip", "--without-mingle", "--without-heartbeat",
             "-n", f"faults{len(self.procs)}@%h"],
            cwd=ROOT, env={**self.env, **extra}, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.procs.append(proc)
        return proc

    def stop_all(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture
def workers(faults_env, tmp_path):
    pool = Workers(faults_env, tmp_path / "workers.log")
    yield pool
    pool.stop_all()


def send(name: str, *args) -> None:
    from config.celery import app

    app.send_task(name, args=list(args), queue=QUEUE)


def wait_for(predicate, timeout: float = 60, sweep: bool = False, what: str = "") -> None:
    """Poll ``predicate``; with ``sweep``, send beat's sweeps every 0.5 s meanwhile."""
    deadline = time.time() + timeout
    last_sweep = 0.0
    while time.time() < deadline:
        if predicate():
            return
        broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
        if sweep and time.time() - last_sweep > 0.5 and not broker.llen(QUEUE):
            for name in SWEEPS:
                send(name)
            last_sweep = time.time()
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what or predicate}")


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


def bundle_upload(tmp_path, name: str, kernel: str, patches: str, values) -> Upload:
    entries = ", ".join(
        f'{{ path = "t{i}.log", parser = "volanomark", trial = {i} }}'
        for i in range(1, len(values) + 1)
    )
    files = {"manifest.toml": manifest_toml(volano_run(kernel, patches, files=entries))}
    files.update({f"t{i}.log": volano_log(v) for i, v in enumerate(values, start=1)})
    data = make_bundle(tmp_path / name, files).read_bytes()
    upload = Upload(filename=name, sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    upload.file.save(name, ContentFile(data), save=False)
    upload.save()
    return upload


def baseline_and_regression(tmp_path, user) -> Upload:
    """A stock baseline ingested here; returns the stored (not yet ingested) upload of a
    patched run 15 % slower, which a worker is to ingest."""
    from ingest.services import upload_ingest

    Subscription.objects.create(user=user, email="lab@lab.example", workload_pattern="Volano*")
    base = bundle_upload(tmp_path, "a.tar.gz", "2.4.20", "[]", (13000, 13100, 12950))
    upload_ingest(upload_id=base.pk)
    base.refresh_from_db()
    series = {
        (run.setup_id, metric_id)
        for run in Run.objects.all()
        for metric_id in run.results.values_list("metric_id", flat=True)
    }
    regressions_check_upload(upload_id=base.pk, series=series)
    return bundle_upload(tmp_path, "b.tar.gz", "2.4.20", '["O(1)"]', (11000, 11100, 11050))


def assert_final_and_emailed_once(upload: Upload, mailbox: Mailbox) -> None:
    upload.refresh_from_db()
    assert upload.status == "done", upload.error
    assert upload.detection_due_at is None
    alerts = Alert.objects.filter(upload=upload, direction="regression", metric__name="throughput")
    assert alerts.count() == 1
    assert alerts.get().notified_at is not None
    (message,) = OutboxMessage.objects.filter(upload=upload)
    assert message.status == "sent", message.last_error
    assert mailbox.ids() == {message.message_id}  # delivered once (one Message-ID)
    assert Run.objects.filter(upload=upload).count() == 1


def emailed(mailbox: Mailbox):
    return lambda: OutboxMessage.objects.filter(status="sent").exists() and mailbox.messages


def test_worker_killed_right_after_the_ingest_commit(tmp_path, user, workers, mailbox):
    upload = baseline_and_regression(tmp_path, user)
    victim = workers.start(PERFDB_PAUSE_AT="ingest-committed")
    send("ingest.tasks.ingest_upload", upload.pk)
    wait_for((tmp_path / "ingest-committed.reached").exists, what="the ingest commit")
    workers.start()  # the replacement, while the victim waits at the point
    kill(victim)  # committed, the regression check not queued
    upload.refresh_from_db()
    assert upload.status == "done" and upload.detection_due_at is not None
    assert not Alert.objects.filter(upload=upload).exists()
    wait_for(emailed(mailbox), sweep=True, what="the alert email")
    time.sleep(0.5)  # a duplicate would arrive now
    assert len(mailbox.messages) == 1
    assert_final_and_emailed_once(upload, mailbox)


def test_worker_killed_during_the_smtp_exchange(tmp_path, user, workers, mailbox):
    upload = baseline_and_regression(tmp_path, user)
    mailbox.hold = True
    victim = workers.start()
    send("ingest.tasks.ingest_upload", upload.pk)
    wait_for(mailbox.in_data.is_set, timeout=20, sweep=True, what="the DATA command")
    workers.start()
    kill(victim)  # the server holds the whole message; the row says "sending"
    (message,) = OutboxMessage.objects.filter(upload=upload)
    assert message.status == "sending" and message.message_id
    mailbox.hold = False
    mailbox.release.set()
    wait_for(lambda: OutboxMessage.objects.filter(status="sent").exists(), sweep=True)
    message.refresh_from_db()
    # Sent again after the sending timeout, with the same Message-ID, marked as such.
    assert message.possible_resend and message.attempts == 2
    # aiosmtpd drops a message whose client vanished before the final reply; an MTA that
    # kept it would hold a second copy with the same Message-ID (checked below).
    assert len(mailbox.messages) == 1
    assert_final_and_emailed_once(upload, mailbox)


def test_smtp_server_stopped_then_restarted(tmp_path, user, workers, mailbox):
    upload = baseline_and_regression(tmp_path, user)
    mailbox.stop()
    workers.start()
    send("ingest.tasks.ingest_upload", upload.pk)
    wait_for(
        lambda: OutboxMessage.objects.filter(attempts__gte=2, status="pending").exists(),
        sweep=True,
        what="failed sends",
    )
    message = OutboxMessage.objects.get(upload=upload)
    assert message.last_error  # visible to staff while it waits
    mailbox.start()  # the same port
    # wait_for's deadline bounds the wait (the retry backoff is capped); no wall-clock
    # assertion here: on a loaded machine it measured the run queue, not the retry policy.
    wait_for(emailed(mailbox), sweep=True, what="the email after the restart")
    time.sleep(0.5)
    assert len(mailbox.messages) == 1
    assert_final_and_emailed_once(upload, mailbox)


def test_database_connection_terminated_mid_ingest(tmp_path, user, workers, mailbox):
    upload = baseline_and_regression(tmp_path, user)
    workers.start(PERFDB_PAUSE_AT="ingest-writing")
    send("ingest.tasks.ingest_upload", upload.pk)
    wait_for((tmp_path / "ingest-writing.reached").exists, what="the ingest transaction")
    with connection.cursor() as cursor:  # the session holding the upload's ingest lock
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
            "AND classid = 17 AND objid = %s",
            [upload.pk],
        )
        assert cursor.fetchall() == [(True,)]
    (tmp_path / "ingest-writing.release").touch()
    wait_for(emailed(mailbox), sweep=True, what="the alert email")
    upload.refresh_from_db()
    assert upload.attempts == 2  # the retry, on a fresh connection
    assert_final_and_emailed_once(upload, mailbox)


def test_worker_killed_mid_ingest_is_requeued_at_once(tmp_path, user, workers, mailbox):
    """No waiting for the broker's visibility timeout: the dead worker's session lost its
    lock, and the sweep sees that."""
    upload = baseline_and_regression(tmp_path, user)
    victim = workers.start(PERFDB_PAUSE_AT="ingest-writing")
    send("ingest.tasks.ingest_upload", upload.pk)
    wait_for((tmp_path / "ingest-writing.reached").exists, what="the ingest transaction")
    workers.start()
    kill(victim)
    wait_for(emailed(mailbox), sweep=True, what="the alert email")
    assert_final_and_emailed_once(upload, mailbox)

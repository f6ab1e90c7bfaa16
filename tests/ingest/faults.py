"""The harness of the fault tests: a real SMTP server, Celery workers started and
SIGKILLed on their own queue, the sweep tasks sent by hand, and the upload they fight over
(helpers, not tests; the fixtures ``mailbox``, ``faults_env`` and ``workers`` that build on
them are in tests/conftest.py)."""

from __future__ import annotations

import email
import hashlib
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import redis
from django.conf import settings
from django.core.files.base import ContentFile

from perfdb.alerting.regressions import regressions_check_upload
from perfdb.models import Alert, OutboxMessage, Run, Upload
from tests.bundles import make_bundle, manifest_toml, volano_log, volano_run
from tests.conftest import ROOT, free_port
from tests.factories import SubscriptionFactory

QUEUE = "faults"
SWEEPS = (
    "ingest.tasks.recover_stuck_uploads",
    "perfdb.tasks.recover_followups",
    "perfdb.tasks.send_due_emails",
)


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

    SubscriptionFactory(user=user, email="lab@lab.example", workload_pattern="Volano*")
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

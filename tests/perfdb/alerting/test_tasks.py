"""The alerting tasks under real workers: a worker SIGKILLed inside a regression check's
transaction (its series read and locked, nothing written: the ``detection-loaded`` pause
point), then the check delivered again twice at once (the broker's redelivery and the
follow-up sweep's) to two live workers: the dead worker's transaction and series lock go
with its connection, the two deliveries take turns on the series lock, and the upload ends
with each alert once and one email, delivered once.

The workers, SMTP server and sweeps are test_faults' (real processes, settings shortened
through the environment).
"""

from __future__ import annotations

import pytest

from perfdb.models import Alert, OutboxMessage
from tests.ingest.faults import (
    assert_final_and_emailed_once,
    baseline_and_regression,
    emailed,
    kill,
    send,
    wait_for,
)

CHECK = "perfdb.tasks.regressions_check"
pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_worker_killed_inside_the_check_then_two_deliveries_at_once(
    tmp_path,
    user,
    workers,
    mailbox,
):
    upload = baseline_and_regression(tmp_path, user)
    victim = workers.start(PERFDB_PAUSE_AT="detection-loaded")
    send("ingest.tasks.ingest_upload", upload.pk)
    wait_for((tmp_path / "detection-loaded.reached").exists, what="the check's transaction")
    upload.refresh_from_db()
    assert upload.status == "done" and upload.detection_due_at is not None
    workers.start()
    workers.start()
    kill(victim)  # inside the transaction: nothing of the check is kept
    assert not Alert.objects.filter(upload=upload).exists()
    send(CHECK, upload.pk, upload.detection_series)  # the redelivery ...
    send(CHECK, upload.pk, upload.detection_series)  # ... and the sweep's, at once
    wait_for(emailed(mailbox), sweep=True, what="the alert email")
    wait_for(
        lambda: not OutboxMessage.objects.exclude(status="sent").exists(),
        sweep=True,
        what="every message sent",
    )
    assert_final_and_emailed_once(upload, mailbox)
    regressions = Alert.objects.filter(upload=upload, direction="regression")
    assert regressions.count() == 2  # throughput and elapsed, once each
    (message,) = OutboxMessage.objects.all()
    assert set(message.alerts.all()) == set(regressions)

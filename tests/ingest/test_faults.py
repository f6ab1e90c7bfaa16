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

import time

import pytest
from django.db import connection

from perfdb.models import Alert, OutboxMessage
from tests.ingest.faults import (
    assert_final_and_emailed_once,
    baseline_and_regression,
    emailed,
    kill,
    send,
    wait_for,
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


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

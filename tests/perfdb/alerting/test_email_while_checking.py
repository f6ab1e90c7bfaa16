"""An upload's regressions are all emailed, once, even when its email is filled while its
check is still running.

An upload's check commits a batch of series at a time (``regressions.detection_run``); here a
batch is one series (``DETECTION_SERIES_PER_TRANSACTION``), so that a batch ends between
the upload's two regressions, as it does between batches of a large upload. In production
the email worker is another process: an email filled after the first series committed, and
before the second did, used to hold the first series' alert only; the second series' alert,
confirmed a moment later with the same upload, found the subscriber's message for that
upload already made (one per subscriber and upload), was marked notified anyway, and was
never emailed. The same happens when a check killed after its first series is run again.

Here the check runs in a thread (its own database connection) and stops between its two
series (the ``detection-series`` pause point); the test plays the email worker.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from ingest import queue as ingest_queue
from perfdb.alerting import queue
from perfdb.alerting.notify import outbox_fill_for_upload, outbox_send
from perfdb.alerting.regressions import detection_run
from perfdb.models import Alert, OutboxMessage
from tests.factories import SubscriptionFactory
from tests.perfdb.alerting.builds import check, ingest_runs
from tests.perfdb.alerting.polling import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

POINT = "detection-series"


@pytest.fixture(autouse=True)
def one_series_per_transaction(settings):
    settings.DETECTION_SERIES_PER_TRANSACTION = 1


@pytest.fixture
def queued(monkeypatch):
    """What the check queues (this test is the worker): nothing goes to a session worker,
    which would ingest or check the same uploads at its own moment."""
    sent: dict[str, list] = {"checks": [], "emails": []}
    monkeypatch.setattr(ingest_queue, "ingest_upload", lambda **k: None)
    monkeypatch.setattr(queue, "regressions_check", lambda **k: sent["checks"].append(k))
    monkeypatch.setattr(queue, "notify_upload", lambda **k: sent["emails"].append(k["upload_id"]))
    return sent


def two_series_regression(tmp_path):
    """A patched run slower than stock: throughput and elapsed regress (two series)."""
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
    upload = ingest_runs(tmp_path, "b.tar.gz", [("2.4.20", '["O(1)"]', (11000, 11100, 11050))])
    return upload, [tuple(pair) for pair in sorted(upload.detection_series)]


def run_in_thread(fn, **kwargs) -> threading.Thread:
    def body():
        try:
            fn(**kwargs)
        finally:
            connections.close_all()

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


def test_an_email_filled_between_two_series_loses_no_alert(tmp_path, user, queued, monkeypatch):
    SubscriptionFactory(user=user, email="lab@lab.example", workload_pattern="Volano*")
    upload, series = two_series_regression(tmp_path)
    assert len(series) >= 2
    monkeypatch.setenv("PERFDB_PAUSE_AT", POINT)
    monkeypatch.setenv("PERFDB_PAUSE_DIR", str(tmp_path))
    thread = run_in_thread(detection_run, upload_id=upload.pk, series=series)
    wait_for((tmp_path / f"{POINT}.reached").exists, "the first series committed")
    first = list(Alert.objects.filter(notify_upload=upload, direction="regression"))
    assert len(first) == 1
    # the email worker, woken by whatever was queued so far, fills what it sees
    outbox_fill_for_upload(upload_id=upload.pk)
    (tmp_path / f"{POINT}.release").touch()
    thread.join(60)
    assert not thread.is_alive()
    assert upload.pk in queued["emails"]  # the check's end asks for the email
    for upload_id in queued["emails"]:
        outbox_fill_for_upload(upload_id=upload_id)
    outbox_fill_for_upload(upload_id=upload.pk)  # a sweep's fill: nothing more
    regressions = Alert.objects.filter(notify_upload=upload, direction="regression")
    assert regressions.count() == 2  # throughput and elapsed
    emailed = OutboxMessage.alerts.through.objects.filter(
        outboxmessage__subscription__email="lab@lab.example"
    )
    in_messages = sorted(emailed.values_list("alert_id", flat=True))
    assert in_messages == sorted(regressions.values_list("pk", flat=True))  # each once
    assert not regressions.filter(notified_at__isnull=True).exists()
    assert OutboxMessage.objects.count() == 1  # not sent yet: the alert joined the message


def test_an_alert_confirmed_after_its_uploads_email_was_sent_gets_its_own(tmp_path, user, queued):
    """A check run again (killed after its first series) confirms an alert with an upload
    whose email is already sent: a second message carries that alert alone."""
    SubscriptionFactory(user=user, email="lab@lab.example", workload_pattern="Volano*")
    upload, series = two_series_regression(tmp_path)
    detection_run(upload_id=upload.pk, series=series[:1])  # the first delivery's one series
    (message_id,) = outbox_fill_for_upload(upload_id=upload.pk)  # a sweep emails it
    assert outbox_send(message_id=message_id) == "sent"
    detection_run(upload_id=upload.pk, series=series)  # the delivery again: the second one
    (later,) = outbox_fill_for_upload(upload_id=upload.pk)
    assert outbox_fill_for_upload(upload_id=upload.pk) == []
    first, second = (
        set(OutboxMessage.objects.get(pk=m).alerts.values_list("pk", flat=True))
        for m in (message_id, later)
    )
    regressions = set(
        Alert.objects.filter(notify_upload=upload, direction="regression").values_list(
            "pk", flat=True
        )
    )
    assert len(regressions) == 2 and first | second == regressions and not first & second

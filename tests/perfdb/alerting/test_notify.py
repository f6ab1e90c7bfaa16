"""Alert email through the outbox and a real SMTP server (aiosmtpd).

An upload's regressions are all emailed, once, even when its email is filled while its
check is still running. An upload's check commits a batch of series at a time
(``regressions.detection_run``); in those tests a batch is one series
(``DETECTION_SERIES_PER_TRANSACTION``), so that a batch ends between the upload's two
regressions, as it does between batches of a large upload. In production the email worker is
another process: an email filled after the first series committed, and before the second
did, used to hold the first series' alert only; the second series' alert, confirmed a moment
later with the same upload, found the subscriber's message for that upload already made (one
per subscriber and upload), was marked notified anyway, and was never emailed. The same
happens when a check killed after its first series is run again. There the check runs in a
thread (its own database connection) and stops between its two series (the
``detection-series`` pause point); the test plays the email worker.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections
from django.utils import timezone

from ingest import queue as ingest_queue
from perfdb.alerting import queue
from perfdb.alerting.notify import SendFailed, outbox_fill_for_upload, outbox_send
from perfdb.alerting.regressions import detection_run
from perfdb.models import Alert, OutboxMessage, Subscription
from tests.conftest import free_port
from tests.factories import SubscriptionFactory
from tests.perfdb.alerting.builds import check, ingest_runs
from tests.perfdb.alerting.polling import wait_for


@pytest.fixture
def smtp(smtp_server, settings):
    controller, handler = smtp_server
    # pytest-django swaps in the in-memory backend; these tests use the real SMTP one.
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    handler.messages.clear()
    return handler


def regression_upload(tmp_path):
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
    upload = ingest_runs(tmp_path, "b.tar.gz", [("2.4.20", '["O(1)"]', (11000, 11100, 11050))])
    check(upload)
    return upload


def subscribe(user, **fields) -> Subscription:
    return SubscriptionFactory(user=user, **fields)


@pytest.mark.django_db
def test_one_email_per_subscriber_per_upload(tmp_path, user, staff, smtp):
    subscribe(user, workload_pattern="Volano*")
    subscribe(staff, workload_pattern="SPECjAppServer*")  # does not match
    upload = regression_upload(tmp_path)
    ids = outbox_fill_for_upload(upload_id=upload.pk)
    assert len(ids) == 1
    assert outbox_fill_for_upload(upload_id=upload.pk) == []  # a second run adds nothing
    assert outbox_send(message_id=ids[0]) == "sent"
    assert outbox_send(message_id=ids[0]) == "sent"  # never sent twice
    (received,) = smtp.messages
    assert received["To"] == "lab@lab.example"
    assert "VolanoMark" in received["Subject"] and "2.4.20" in received["Subject"]
    parts = {
        p.get_content_type(): p.get_payload(decode=True).decode()
        for p in received.walk()
        if not p.is_multipart()
    }
    assert "-15.2%" in parts["text/plain"] or "-15.1%" in parts["text/plain"]
    assert "/compare/?base=" in parts["text/plain"]
    assert "<table" in parts["text/html"] and "/alerts/" in parts["text/html"]


@pytest.mark.django_db
def test_min_change_filters_small_alerts(tmp_path, user, smtp):
    subscribe(user, min_change_pct=50)
    upload = regression_upload(tmp_path)
    assert outbox_fill_for_upload(upload_id=upload.pk) == []


@pytest.mark.django_db
def test_smtp_down_keeps_the_message_and_retries(tmp_path, user, smtp, settings):
    subscribe(user)
    upload = regression_upload(tmp_path)
    (message_id,) = outbox_fill_for_upload(upload_id=upload.pk)
    good_port = settings.EMAIL_PORT
    settings.EMAIL_PORT = free_port()  # nothing listens there: the server is "down"
    with pytest.raises(SendFailed):
        outbox_send(message_id=message_id)
    message = OutboxMessage.objects.get(pk=message_id)
    assert message.status == "pending" and message.attempts == 1
    assert message.last_error and message.next_attempt_at > timezone.now()
    settings.EMAIL_PORT = good_port
    assert outbox_send(message_id=message_id) == "sent"
    assert len(smtp.messages) == 1


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_upload_to_email_through_a_real_worker(tmp_path, celery_worker, smtp_server, user, client):
    from perfdb.operations.accounts import token_get
    from tests.bundles import make_bundle, manifest_toml, volano_log, volano_run

    _, handler = smtp_server
    handler.messages.clear()
    subscribe(user, workload_pattern="VolanoMark")
    token = token_get(user=user)

    def post(name, kernel, patches, values):
        entries = ", ".join(
            f'{{ path = "t{i}.log", parser = "volanomark", trial = {i} }}'
            for i in range(1, len(values) + 1)
        )
        files = {"manifest.toml": manifest_toml(volano_run(kernel, patches, files=entries))}
        files.update({f"t{i}.log": volano_log(v) for i, v in enumerate(values, start=1)})
        path = make_bundle(tmp_path / name, files)
        with open(path, "rb") as f:
            response = client.post(
                "/api/uploads/", {"bundle": f}, HTTP_AUTHORIZATION=f"Token {token}"
            )
        assert response.status_code == 202, response.content
        return response.json()["id"]

    def wait_done(upload_id):
        for _ in range(120):
            body = client.get(f"/api/uploads/{upload_id}/").json()
            if body["status"] in ("done", "failed"):
                return body
            time.sleep(0.25)
        raise AssertionError(f"upload {upload_id} never finished")

    assert wait_done(post("a.tar.gz", "2.4.20", "[]", (13000, 13100, 12950)))["status"] == "done"
    second = wait_done(post("b.tar.gz", "2.4.20", '["O(1)"]', (11000, 11100, 11050)))
    assert second["status"] == "done"
    for _ in range(120):
        if handler.messages:
            break
        time.sleep(0.25)
    time.sleep(1)  # would a duplicate arrive?
    assert len(handler.messages) == 1
    assert "regression" in handler.messages[0]["Subject"]
    assert OutboxMessage.objects.get().status == "sent"


@pytest.mark.django_db
def test_the_email_is_grouped_by_culprit_build_with_the_list_report(tmp_path, user, smtp):
    """Two builds regress in one upload: still one email, a section per build, each with
    its summary's link and the report for the list."""
    from tests.perfdb.alerting.builds import upload_builds

    subscribe(user)
    upload_builds(tmp_path, "stock.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950), 10)])
    both = [
        ("2.4.20", '["O(1)"]', (11000, 11100, 11050), 10),
        ("2.4.20", '["slow"]', (10000, 10100, 10050), 10),
    ]
    upload = upload_builds(tmp_path, "both.tar.gz", both)
    (message_id,) = outbox_fill_for_upload(upload_id=upload.pk)
    assert outbox_send(message_id=message_id) == "sent"
    (received,) = smtp.messages
    parts = {
        p.get_content_type(): p.get_payload(decode=True).decode()
        for p in received.walk()
        if not p.is_multipart()
    }
    text = parts["text/plain"].replace("\r\n", "\n")  # SMTP line ends
    for build in ("2.4.20+O(1)", "2.4.20+slow"):
        heading = f"== {build} (upload {upload.pk}, both.tar.gz): 2 regressions"
        assert text.count(heading) == 1
        assert text.count(f"build: {build}\n") == 1  # its report's header
    assert text.count("         %stddev     %change         %stddev") == 2
    assert "VolanoMark.throughput (msg/s)" in text and "/alerts/summaries/" in text
    assert parts["text/html"].count('<pre style="font-family: monospace') == 2


POINT = "detection-series"  # where a check stops between two series


@pytest.fixture
def one_series_per_transaction(settings):
    """A check commits each series alone: a batch ends between an upload's two regressions."""
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


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("one_series_per_transaction")
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


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("one_series_per_transaction")
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

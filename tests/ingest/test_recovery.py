"""No upload stuck or unexplained, a way back for each, and the web side surviving the broker
and the cache. In-process; the real-worker faults are in test_faults.py."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerDown

from ingest import queue, services
from ingest.recovery import uploads_recover_stuck
from ingest.services import upload_create, upload_ingest
from perfdb.alerting.notify import outbox_send
from perfdb.models import Kernel, OutboxMessage, Run, Upload
from tests.bundles import make_bundle, manifest_toml, volano_log, volano_run
from tests.factories import OutboxMessageFactory, SubscriptionFactory, UserFactory


def bundle(tmp_path, name, kernel="2.4.20", value=13000, hardware="P8"):
    files = {
        "manifest.toml": manifest_toml(
            volano_run(kernel, files='{ path = "t.log", parser = "volanomark" }').replace(
                'hardware = "P8"', f'hardware = "{hardware}"'
            ),
            hardware=hardware,
        ),
        "t.log": volano_log(value),
    }
    return make_bundle(tmp_path / name, files)


def create(path, **kw):
    with open(path, "rb") as stream:
        return upload_create(stream=stream, filename=path.name, **kw)


@pytest.fixture
def sent(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(queue, "ingest_upload", lambda *, upload_id: calls.append(upload_id))
    return calls


@pytest.mark.django_db(transaction=True)
def test_ten_concurrent_uploads_introducing_the_same_new_kernel(tmp_path, sent, monkeypatch):
    # Their ten regression checks are not this test's subject: queued, the session's worker
    # would run them while the test's tables are truncated (a deadlock in CI).
    monkeypatch.setattr(services.alerting_queue, "regressions_check", lambda **kwargs: None)
    uploads = [
        create(bundle(tmp_path, f"b{i}.tar.gz", kernel="2.6.99", value=10000 + i, hardware="NEW"))[
            0
        ]
        for i in range(10)
    ]
    start = threading.Barrier(10)
    errors: list[BaseException] = []

    def ingest(upload_id):
        try:
            start.wait()
            upload_ingest(upload_id=upload_id)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=ingest, args=(u.pk,)) for u in uploads]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert not errors
    statuses = dict(Upload.objects.values_list("pk", "status"))
    assert set(statuses.values()) == {"done"}, Upload.objects.values_list("error", flat=True)
    assert Kernel.objects.filter(version="2.6.99").count() == 1
    assert Run.objects.count() == 10


@pytest.mark.django_db
def test_a_parser_bug_fails_the_upload_naming_file_parser_and_a_log_reference(
    tmp_path, sent, monkeypatch, caplog
):
    import ingest.bundle

    def broken(name):
        def parse(text, options):
            raise KeyError("oops")

        return parse

    monkeypatch.setattr(ingest.bundle, "get_parser", broken)
    upload, _ = create(bundle(tmp_path, "a.tar.gz"))
    with caplog.at_level(logging.ERROR):
        upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == "failed"
    assert "'t.log'" in upload.error and "volanomark" in upload.error
    ref = upload.error.rsplit("reference ", 1)[1]
    assert any(ref in r.getMessage() and r.exc_info for r in caplog.records)


@pytest.mark.django_db
def test_the_broker_down_still_answers_with_the_upload_id_and_the_sweep_queues_it(
    tmp_path, client, token, monkeypatch
):
    def down(*, upload_id):
        raise BrokerDown("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(queue, "ingest_upload", down)
    with open(bundle(tmp_path, "a.tar.gz"), "rb") as f:
        response = client.post("/api/uploads/", {"bundle": f}, HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 202
    upload = Upload.objects.get(pk=response.json()["id"])
    assert upload.status == "queued" and upload.task_sent_at is None

    calls: list[int] = []
    monkeypatch.setattr(queue, "ingest_upload", lambda *, upload_id: calls.append(upload_id))
    assert uploads_recover_stuck()["requeued"] == []  # within its grace period
    later = timezone.now() + timedelta(minutes=1)
    assert uploads_recover_stuck(now=later)["requeued"] == [upload.pk] == calls
    upload.refresh_from_db()
    assert upload.task_sent_at is not None


@pytest.mark.django_db
def test_pages_answer_when_the_cache_is_unreachable(client):
    dead = {
        "default": {
            "BACKEND": "perfdb.cache.backend.FailSoftRedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        }
    }
    with override_settings(CACHES=dead):
        assert client.get("/").status_code == 200
        assert client.get("/kernels/").status_code == 200


@pytest.mark.django_db
def test_a_failed_upload_can_be_sent_again_and_tried_again(
    tmp_path, client, user, token, sent, django_user_model
):
    path = bundle(tmp_path, "a.tar.gz")
    upload, _ = create(path, user=user)
    services.upload_fail(upload_id=upload.pk, reason="the database was away")
    # The same bytes again: a new attempt of the failed upload, not the old answer.
    with open(path, "rb") as f:
        response = client.post("/api/uploads/", {"bundle": f}, HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 202 and response.json()["status"] == "queued"
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == "done"

    services.upload_fail(upload_id=upload.pk, reason="x")  # done stays done
    response = client.post(f"/api/uploads/{upload.pk}/retry/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 409

    other, _ = create(bundle(tmp_path, "b.tar.gz", value=9000), user=user)
    services.upload_fail(upload_id=other.pk, reason="lost")
    stranger = UserFactory(username="eve")
    client.force_login(stranger)
    assert client.post(f"/api/uploads/{other.pk}/retry/").status_code == 403
    client.force_login(user)
    response = client.post(f"/uploads/{other.pk}/retry/")
    assert response.status_code == 302
    other.refresh_from_db()
    assert other.status == "queued" and not other.error and other.attempts == 0


@pytest.mark.django_db
def test_reingest_replaces_runs_and_delete_removes_everything_audited(
    tmp_path, client, staff, user, sent, caplog
):
    upload, _ = create(bundle(tmp_path, "a.tar.gz"), user=user)
    upload_ingest(upload_id=upload.pk)
    (old_run,) = Run.objects.filter(upload=upload)
    client.force_login(user)
    assert client.post(f"/api/uploads/{upload.pk}/reingest/").status_code == 403
    assert client.delete(f"/api/uploads/{upload.pk}/").status_code == 403
    client.force_login(staff)
    assert client.post(f"/api/uploads/{upload.pk}/reingest/").status_code == 202
    upload_ingest(upload_id=upload.pk)
    (new_run,) = Run.objects.filter(upload=upload)
    assert new_run.pk != old_run.pk and Run.objects.count() == 1
    with caplog.at_level(logging.WARNING):
        response = client.delete(f"/api/uploads/{upload.pk}/")
    assert response.status_code == 200 and response.json()["runs"] == 1
    assert not Upload.objects.filter(pk=upload.pk).exists() and Run.objects.count() == 0
    assert any("AUDIT" in r.getMessage() and "boss" in r.getMessage() for r in caplog.records)


@pytest.mark.django_db
def test_a_message_that_cannot_be_built_fails_with_its_reason(user, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    message = OutboxMessageFactory(
        subscription=SubscriptionFactory(user=user, email="lab@lab.example"),
        to="lab@lab.example\r\nBcc: everyone@lab.example",
        subject="[perfdb] 1 regression: Volano\r\nMark",
        text="x",
        next_attempt_at=timezone.now(),
    )
    assert outbox_send(message_id=message.pk) == "failed"
    message.refresh_from_db()
    assert message.status == "failed" and "could not build" in message.last_error


@pytest.mark.django_db
def test_a_subject_with_cr_lf_is_cleaned_and_sent(user, settings, mailoutbox):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    message = OutboxMessageFactory(
        subscription=SubscriptionFactory(user=user, email="lab@lab.example"),
        to="lab@lab.example",
        subject="[perfdb] 1 regression: Volano\r\nBcc: x@y",
        text="x",
        next_attempt_at=timezone.now(),
    )
    assert outbox_send(message_id=message.pk) == "sent"
    (mail,) = mailoutbox
    assert "\n" not in mail.subject and mail.extra_headers["Message-ID"] == (
        OutboxMessage.objects.get().message_id
    )


@pytest.mark.django_db
def test_status_page_for_staff(client, staff, user):
    client.force_login(user)
    assert client.get("/status/").status_code == 302
    client.force_login(staff)
    response = client.get("/status/?format=json")
    assert response.status_code == 200
    body = response.json()
    assert {"uploads", "outbox", "detections_owed", "workers"} <= body.keys()

"""ingest.services' claim of an upload (three statements in autocommit): a delivery finds an
upload another live worker holds, or one already finished, and leaves it as it was, with
no ingest lock kept; a claimed upload counts its attempt."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from ingest import services, upload_rows
from ingest.services import upload_create, upload_ingest
from perfdb.models import Upload
from tests.bundles import make_bundle, manifest_toml, volano_log, volano_run

pytestmark = pytest.mark.django_db(transaction=True)  # another session sees the rows


@pytest.fixture
def upload(tmp_path, monkeypatch):
    monkeypatch.setattr(services.queue, "ingest_upload", lambda *, upload_id: None)
    monkeypatch.setattr(services.alerting_queue, "regressions_check", lambda **kwargs: None)
    files = {
        "manifest.toml": manifest_toml(
            volano_run("2.4.20", files='{ path = "t.log", parser = "volanomark" }')
        ),
        "t.log": volano_log(13000),
    }
    path = make_bundle(tmp_path / "a.tar.gz", files)
    with open(path, "rb") as stream:
        return upload_create(stream=stream, filename=path.name)[0]


def in_other_session(fn):
    """``fn()`` on a database session of its own (a thread gets its own connection)."""
    out = []

    def run():
        try:
            out.append(fn())
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out[0]


def lock_free(upload_id: int) -> bool:
    return in_other_session(lambda: services.upload_orphaned(upload_id))


def test_an_upload_another_worker_holds_is_left_alone(upload):
    held = threading.Event()
    release = threading.Event()

    def hold():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", (upload_rows.INGEST_LOCK, upload.pk))
        held.set()
        release.wait(30)

    holder = threading.Thread(target=lambda: in_other_session(hold))
    holder.start()
    held.wait(30)
    try:
        assert upload_ingest(upload_id=upload.pk) == []
        upload.refresh_from_db()
        assert upload.status == Upload.Status.QUEUED and upload.attempts == 0
    finally:
        release.set()
        holder.join()
    assert lock_free(upload.pk)


def test_a_claimed_upload_counts_its_attempt_and_keeps_no_lock_when_done(upload):
    run_ids = upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    assert run_ids and upload.status == Upload.Status.DONE and upload.attempts == 1
    assert lock_free(upload.pk)


def test_a_finished_upload_delivered_again_is_left_alone_and_unlocked(upload):
    run_ids = upload_ingest(upload_id=upload.pk)
    assert upload_ingest(upload_id=upload.pk) == []  # a duplicate delivery
    upload.refresh_from_db()
    assert upload.status == Upload.Status.DONE and upload.attempts == 1
    assert upload.run_ids == run_ids
    assert lock_free(upload.pk)

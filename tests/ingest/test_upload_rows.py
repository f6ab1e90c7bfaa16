"""The upload row's statements in plain SQL (ingest/upload_rows.py): the row ends as the ORM
wrote it, and a claim moves it once. A delivery finds an upload another live worker holds,
or one already finished, and leaves it as it was, with no ingest lock kept; a claimed
upload counts its attempt."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections

from ingest import services, upload_rows
from ingest.services import detection_deadline, upload_create, upload_ingest
from perfdb.models import Result, Run, Upload
from tests.bundles import make_bundle, manifest_toml, volano_bundle, volano_log, volano_run

pytestmark = pytest.mark.django_db


def ingest(path) -> Upload:
    with open(path, "rb") as stream:
        upload, created = upload_create(stream=stream, filename=path.name, source="cli")
    assert created
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    return upload


def volano_files(prefix: str, throughputs: tuple[int, ...]) -> tuple[str, dict[str, str]]:
    names = [f"{prefix}{i}.log" for i in range(1, len(throughputs) + 1)]
    manifest = ", ".join(
        f'{{ path = "{name}", parser = "volanomark", trial = {i} }}'
        for i, name in enumerate(names, start=1)
    )
    return manifest, {name: volano_log(v) for name, v in zip(names, throughputs, strict=True)}


def test_the_upload_row_holds_the_outcome_warnings_runs_and_the_check_owed(tmp_path):
    throughputs = (13000, 13500, 13200)
    first = ingest(volano_bundle(tmp_path / "a.tar.gz", throughputs=throughputs))
    (stored,) = first.run_ids
    same, same_files = volano_files("t", throughputs)  # the first bundle's run, byte for byte
    new, new_files = volano_files("u", (12000, 12100, 11900))
    manifest = manifest_toml(volano_run("2.5.25", files=same), volano_run("2.5.26", files=new))
    second = ingest(
        make_bundle(tmp_path / "b.tar.gz", {"manifest.toml": manifest, **same_files, **new_files})
    )

    assert second.status == Upload.Status.DONE and second.error == ""
    (created,) = Run.objects.filter(upload=second).values_list("pk", flat=True)
    assert second.run_ids == [created, stored]
    assert second.warnings == [
        f"run 1 (VolanoMark 2.5.25) is identical to run {stored}, already stored; not added"
    ]
    touched = Result.objects.filter(run_id=created).values_list("setup_id", "metric_id")
    assert second.detection_series == [list(s) for s in sorted(set(touched))]
    assert second.detection_due_at - second.finished_at == pytest.approx(
        detection_deadline(), abs=timedelta(seconds=1)
    )
    assert second.started_at <= second.finished_at
    assert second.attempts == 1 and second.files_done == second.files_total == 6


def test_a_claim_returns_the_upload_with_what_the_ingest_reads(tmp_path):
    from ingest import upload_rows

    path = volano_bundle(tmp_path / "a.tar.gz")
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name)
    claimed = upload_rows.claim(upload.pk)
    assert claimed is not None
    assert (claimed.pk, claimed.file.name, claimed.attempts) == (upload.pk, upload.file.name, 1)
    upload.refresh_from_db()
    assert upload.status == Upload.Status.PROCESSING and upload.attempts == 1
    upload_rows.unlock(upload.pk)
    Upload.objects.filter(pk=upload.pk).update(status=Upload.Status.DONE)
    assert upload_rows.claim(upload.pk) is None  # finished: left as it is
    upload.refresh_from_db()
    assert upload.attempts == 1


# --- the claim, seen from another session ---


@pytest.fixture
def queued_upload(tmp_path, monkeypatch):
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


# Another session must see the rows: committed, not in a test's transaction.
@pytest.mark.django_db(transaction=True)
def test_an_upload_another_worker_holds_is_left_alone(queued_upload):
    held = threading.Event()
    release = threading.Event()

    def hold():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_lock(%s, %s)", (upload_rows.INGEST_LOCK, queued_upload.pk)
            )
        held.set()
        release.wait(30)

    holder = threading.Thread(target=lambda: in_other_session(hold))
    holder.start()
    held.wait(30)
    try:
        assert upload_ingest(upload_id=queued_upload.pk) == []
        queued_upload.refresh_from_db()
        assert queued_upload.status == Upload.Status.QUEUED and queued_upload.attempts == 0
    finally:
        release.set()
        holder.join()
    assert lock_free(queued_upload.pk)


# Another session must see the rows: committed, not in a test's transaction.
@pytest.mark.django_db(transaction=True)
def test_a_claimed_upload_counts_its_attempt_and_keeps_no_lock_when_done(queued_upload):
    run_ids = upload_ingest(upload_id=queued_upload.pk)
    queued_upload.refresh_from_db()
    assert run_ids and queued_upload.status == Upload.Status.DONE and queued_upload.attempts == 1
    assert lock_free(queued_upload.pk)


# Another session must see the rows: committed, not in a test's transaction.
@pytest.mark.django_db(transaction=True)
def test_a_finished_upload_delivered_again_is_left_alone_and_unlocked(queued_upload):
    run_ids = upload_ingest(upload_id=queued_upload.pk)
    assert upload_ingest(upload_id=queued_upload.pk) == []  # a duplicate delivery
    queued_upload.refresh_from_db()
    assert queued_upload.status == Upload.Status.DONE and queued_upload.attempts == 1
    assert queued_upload.run_ids == run_ids
    assert lock_free(queued_upload.pk)

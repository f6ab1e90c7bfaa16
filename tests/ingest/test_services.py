"""ingest/services.py against the real database: outcomes, failures, atomicity, idempotency;
the upload row's statements in plain SQL (the row ends as the ORM wrote it, a claim moves it
once, a delivery leaves an upload another live worker holds or one already finished as it
was, with no ingest lock kept)."""

from __future__ import annotations

import io
import tarfile
import threading
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from ingest import services
from ingest.recovery import uploads_recover_stuck
from ingest.services import detection_deadline, upload_create, upload_ingest
from perfdb.models import Hardware, Result, Run, Upload
from tests.bundles import make_bundle, manifest_toml, volano_bundle, volano_log, volano_run

pytestmark = pytest.mark.django_db


def create(path) -> Upload:
    with open(path, "rb") as stream:
        upload, created = upload_create(stream=stream, filename=path.name, source="cli")
    assert created
    return upload


def ingest(path) -> Upload:
    upload = create(path)
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    return upload


def counts() -> tuple[int, int, int]:
    return Run.objects.count(), Result.objects.count(), Hardware.objects.count()


def test_a_bundle_becomes_runs_with_trials_and_results(tmp_path):
    upload = ingest(volano_bundle(tmp_path / "b.tar.gz", throughputs=(13000, 13500, 13200)))
    assert upload.status == "done", upload.error
    assert upload.files_done == upload.files_total == 3
    (run,) = Run.objects.filter(pk__in=upload.run_ids)
    assert run.kernel.version == "2.5.25"
    assert run.setup.params == {"rooms": 10, "messages": 1000}
    values = sorted(
        Result.objects.filter(run=run, metric__name="throughput").values_list("value", flat=True)
    )
    assert values == [13000, 13200, 13500]


def test_the_same_bundle_twice_is_one_upload(tmp_path):
    path = volano_bundle(tmp_path / "b.tar.gz")
    first = ingest(path)
    with open(path, "rb") as stream:
        again, created = upload_create(stream=stream, filename="b.tar.gz")
    assert not created and again.pk == first.pk
    assert Run.objects.count() == 1


def test_running_the_ingest_twice_changes_nothing(tmp_path):
    upload = ingest(volano_bundle(tmp_path / "b.tar.gz"))
    before = counts()
    # A redelivered message finds the upload done and does nothing.
    assert upload_ingest(upload_id=upload.pk) == []
    # Ingesting it again (re-ingest) replaces its runs with the same data: nothing added.
    Upload.objects.filter(pk=upload.pk).update(status="processing")
    assert len(upload_ingest(upload_id=upload.pk)) == len(upload.run_ids)
    assert counts() == before


def test_identical_runs_in_a_new_bundle_are_recognised(tmp_path):
    ingest(volano_bundle(tmp_path / "a.tar.gz"))
    # Same runs, different archive bytes (another gzip level) -> a new upload, no new run.
    with tarfile.open(tmp_path / "a.tar.gz") as src:
        files = {m.name: src.extractfile(m).read() for m in src.getmembers()}
    second = ingest(make_bundle(tmp_path / "b.tar.gz", {**files, "extra.txt": "x"}))
    assert second.status == "done"
    assert Run.objects.count() == 1
    assert any("identical to run" in w for w in second.warnings)


def bad_bundle(tmp_path, name, **files):
    return make_bundle(tmp_path / name, files)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"manifest.toml": "format = 3\n"},
            "supported: 1, 2",
        ),
        (
            {
                "manifest.toml": manifest_toml(
                    volano_run("2.5.25", files='{ path = "t1.log", parser = "volanomark" }'),
                    volano_run("2.5.26", files='{ path = "t2.log", parser = "volanomark" }'),
                ),
                "t1.log": volano_log(13000),
                "t2.log": volano_log(13000).replace(
                    "Average throughput = 13000", "Average throughput = 13,000"
                ),
            },
            "t2.log",
        ),
        (
            {
                "manifest.toml": manifest_toml(
                    volano_run("2.5.25", files='{ path = "t1.log", parser = "nosuchparser" }')
                ),
                "t1.log": volano_log(13000),
            },
            "nosuchparser",
        ),
        (
            {
                "manifest.toml": manifest_toml(
                    volano_run("2.5.25", files='{ path = "t1.log", parser = "volanomark" }')
                ).replace('hardware = "P8"', 'hardware = "Z9"'),
                "t1.log": volano_log(13000),
            },
            "hardware 'Z9' is not defined",
        ),
        (
            {
                "manifest.toml": manifest_toml(
                    volano_run("linux-2.5", files='{ path = "t1.log", parser = "volanomark" }')
                ),
                "t1.log": volano_log(13000),
            },
            "is not a kernel version",
        ),
        (
            {
                "manifest.toml": manifest_toml(
                    volano_run("2.5.25", extra="metrics = { made_up = 3 }")
                ).replace("files = []", ""),
            },
            "made_up",
        ),
    ],
    ids=["format", "bad-number-in-second-run", "parser", "hardware", "kernel", "metric"],
)
def test_a_bad_bundle_fails_with_its_reason_and_stores_nothing(tmp_path, files, message):
    ingest(volano_bundle(tmp_path / "good.tar.gz"))
    before = counts()
    upload = ingest(bad_bundle(tmp_path, "bad.tar.gz", **files))
    assert upload.status == "failed"
    assert message in upload.error
    assert counts() == before
    assert upload.run_ids == []


def test_a_hostile_archive_is_refused(tmp_path):
    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("manifest.toml")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tar.addfile(info)
    upload = ingest(path)
    assert upload.status == "failed"
    assert "manifest.toml" in upload.error
    assert Run.objects.count() == 0


def test_redefining_stored_hardware_is_refused(tmp_path):
    ingest(volano_bundle(tmp_path / "a.tar.gz"))
    manifest = manifest_toml(
        volano_run("2.5.26", files='{ path = "t1.log", parser = "volanomark" }')
    ).replace("mhz = 700", "mhz = 900")
    upload = ingest(
        bad_bundle(tmp_path, "b.tar.gz", **{"manifest.toml": manifest, "t1.log": volano_log(1)})
    )
    assert upload.status == "failed"
    assert "mhz" in upload.error and "P8" in upload.error


def test_not_an_archive(tmp_path):
    path = tmp_path / "notes.tar.gz"
    path.write_bytes(b"just some text, not an archive")
    upload = ingest(path)
    assert upload.status == "failed"
    assert "archive" in upload.error


def test_warm_up_trial_is_kept_but_left_out(tmp_path):
    files = ", ".join(
        f'{{ path = "t{i}.log", parser = "volanomark", trial = {i} }}' for i in (1, 2, 3)
    )
    manifest = manifest_toml(volano_run("2.5.25", files=files, extra="discard_first_trial = true"))
    upload = ingest(
        make_bundle(
            tmp_path / "w.tar.gz",
            {
                "manifest.toml": manifest,
                "t1.log": volano_log(9000),
                "t2.log": volano_log(13000),
                "t3.log": volano_log(14000),
            },
        )
    )
    from perfdb.queries import run_results

    result = run_results(run_id=upload.run_ids[0])["throughput"]
    assert result["values"] == [9000, 13000, 14000]
    assert result["discarded_trials"] == [1]
    assert result["n"] == 2 and result["mean"] == 13500


def test_stuck_uploads_are_requeued_then_failed(tmp_path):
    upload = create(volano_bundle(tmp_path / "b.tar.gz"))
    long_ago = timezone.now() - timedelta(hours=2)
    Upload.objects.filter(pk=upload.pk).update(status="processing", started_at=long_ago, attempts=1)
    assert uploads_recover_stuck() == {"requeued": [upload.pk], "failed": []}
    Upload.objects.filter(pk=upload.pk).update(attempts=3)
    assert uploads_recover_stuck() == {"requeued": [], "failed": [upload.pk]}
    upload.refresh_from_db()
    assert upload.status == "failed" and "after 3 attempts" in upload.error


def test_a_bundle_too_large_is_refused(settings):
    settings.BUNDLE_MAX_BYTES = 10
    from ingest.services import UploadTooLarge

    with pytest.raises(UploadTooLarge, match="limit is 10 bytes"):
        upload_create(stream=io.BytesIO(b"x" * 11), filename="big.tar.gz")
    assert Upload.objects.count() == 0


def test_a_declared_baseline_links_the_runs(tmp_path):
    manifest = manifest_toml(
        volano_run(
            "2.4.20", files='{ path = "a.log", parser = "volanomark" }', extra='label = "Base1"'
        ),
        volano_run(
            "2.5.59", files='{ path = "b.log", parser = "volanomark" }', extra='baseline = "Base1"'
        ),
    )
    files = {"manifest.toml": manifest, "a.log": volano_log(13000), "b.log": volano_log(12000)}
    upload = ingest(make_bundle(tmp_path / "b.tar.gz", files))
    base, new = Run.objects.filter(pk__in=upload.run_ids).order_by("kernel__sort_key")
    assert new.baseline == base and base.baseline is None


def test_a_baseline_naming_no_run_is_refused(tmp_path):
    manifest = manifest_toml(
        volano_run(
            "2.5.59", files='{ path = "b.log", parser = "volanomark" }', extra='baseline = "Base9"'
        ),
    )
    upload = ingest(
        make_bundle(tmp_path / "b.tar.gz", {"manifest.toml": manifest, "b.log": volano_log(12000)})
    )
    assert upload.status == "failed"
    assert "no run in this bundle has label 'Base9'" in upload.error


# --- the upload row's statements: the row ends as the ORM wrote it, and a claim moves it once


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
    path = volano_bundle(tmp_path / "a.tar.gz")
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name)
    claimed = services.claim(upload.pk)
    assert claimed is not None
    assert (claimed.pk, claimed.file.name, claimed.attempts) == (upload.pk, upload.file.name, 1)
    upload.refresh_from_db()
    assert upload.status == Upload.Status.PROCESSING and upload.attempts == 1
    services.unlock(upload.pk)
    Upload.objects.filter(pk=upload.pk).update(status=Upload.Status.DONE)
    assert services.claim(upload.pk) is None  # finished: left as it is
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
                "SELECT pg_advisory_lock(%s, %s)", (services.INGEST_LOCK, queued_upload.pk)
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

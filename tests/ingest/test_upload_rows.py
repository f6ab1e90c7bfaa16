"""The upload row's statements in plain SQL (ingest/upload_rows.py): the row ends as the ORM
wrote it, and a claim moves it once."""

from __future__ import annotations

from datetime import timedelta

import pytest

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

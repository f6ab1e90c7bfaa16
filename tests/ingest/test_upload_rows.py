"""The ingest's statements in plain SQL (ingest/upload_rows.py, ingest.keys.stored_rows):
the upload's row ends as the ORM wrote it, and the keys read are the rows the ORM reads."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ingest.keys import stored_rows
from ingest.services import detection_deadline, upload_create, upload_ingest
from perfdb.models import Hardware, Kernel, Metric, Result, Run, Setup, Upload
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


def test_stored_rows_are_the_rows_the_orm_reads(tmp_path):
    ingest(volano_bundle(tmp_path / "a.tar.gz"))
    for model, where, params, orm in [
        (Hardware, "name = ANY(%s)", [["P8", "nowhere"]], {"name__in": ["P8", "nowhere"]}),
        (Kernel, "version = ANY(%s)", [["2.5.25"]], {"version__in": ["2.5.25"]}),
        (Metric, "name = ANY(%s)", [["throughput", "x"]], {"name__in": ["throughput", "x"]}),
    ]:
        fields = [f.attname for f in model._meta.concrete_fields]  # id first
        read = sorted(
            [getattr(row, f) for f in fields] for row in stored_rows(model, where, params)
        )
        expected = model.objects.filter(**orm).order_by("pk").values_list(*fields)
        assert read and read == [list(r) for r in expected]

    (setup,) = stored_rows(Setup, "mode = %s", ["UP"], skip=["params"])
    orm = Setup.objects.get()
    assert (setup.pk, setup.workload_id, setup.hardware_id, setup.mode, setup.params_digest) == (
        orm.pk,
        orm.workload_id,
        orm.hardware_id,
        orm.mode,
        orm.params_digest,
    )
    assert setup.get_deferred_fields() == {"params"}
    assert setup.params == orm.params == {"rooms": 10, "messages": 1000}  # read when asked


def test_a_claim_returns_the_upload_with_what_the_ingest_reads(tmp_path):
    from ingest import upload_rows

    path = volano_bundle(tmp_path / "a.tar.gz")
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name)
    locked, claimed = upload_rows.claim(upload.pk)
    assert locked and claimed is not None
    assert (claimed.pk, claimed.file.name, claimed.attempts) == (upload.pk, upload.file.name, 1)
    upload.refresh_from_db()
    assert upload.status == Upload.Status.PROCESSING and upload.attempts == 1
    upload_rows.unlock(upload.pk)
    Upload.objects.filter(pk=upload.pk).update(status=Upload.Status.DONE)
    assert upload_rows.claim(upload.pk) == (True, None)  # finished: left as it is
    upload_rows.unlock(upload.pk)
    upload.refresh_from_db()
    assert upload.attempts == 1


def test_runs_rows_insert_gives_each_run_its_row_and_id(tmp_path):
    from ingest.writer import runs_rows_insert

    upload = ingest(volano_bundle(tmp_path / "a.tar.gz"))
    stored = Run.objects.get(pk=upload.run_ids[0])
    runs = [
        Run(
            setup_id=stored.setup_id,
            kernel_id=stored.kernel_id,
            patch_set_id=stored.patch_set_id,
            upload=upload,
            label=f"copy {i}",
            notes="n" * i,
            discard_first_trial=bool(i % 2),
            fingerprint=f"{i:064x}",
        )
        for i in range(5)
    ]
    runs_rows_insert(runs, batch=2)  # three statements
    assert len({run.pk for run in runs}) == 5 and not any(run._state.adding for run in runs)
    for run in runs:
        row = Run.objects.get(fingerprint=run.fingerprint)
        assert row.pk == run.pk and row.created_at == run.created_at
        assert (row.label, row.notes, row.discard_first_trial, row.upload_id) == (
            run.label,
            run.notes,
            run.discard_first_trial,
            upload.pk,
        )
        assert row.baseline_id is None and row.synthetic is False


def test_stored_keys_reads_in_one_round_trip_what_the_writer_looks_up(tmp_path):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ingest.bundle import bundle_parse, read_bundle
    from ingest.bundle_keys import setup_key, stored_keys
    from ingest.writer import FileDigests, run_fingerprint
    from perfdb.models import Claim

    path = volano_bundle(tmp_path / "a.tar.gz")
    (run,) = Run.objects.filter(pk__in=ingest(path).run_ids)
    bundle = read_bundle(path)
    manifest, plan, _ = bundle_parse(bundle)
    (spec,) = [p.spec for p in plan]
    fingerprint = run_fingerprint(spec, FileDigests(bundle.files))

    def read():
        with CaptureQueriesContext(connection) as queries:
            found = stored_keys(manifest, [spec], [fingerprint], ["throughput", "x"])
        assert len(queries.captured_queries) == 1
        return found

    found = read()
    assert [hw.pk for hw in found.hardware] == [run.setup.hardware_id]
    assert [k.pk for k in found.kernels] == [run.kernel_id]
    assert [m.name for m in found.metrics] == ["throughput"]
    assert found.fingerprints == {fingerprint: run.pk}
    assert {k: s.pk for k, s in found.setups.items()} == {setup_key(spec): run.setup_id}
    assert {k: p.pk for k, p in found.patch_sets.items()} == {(): run.patch_set_id}
    assert found.claims is False
    Claim.objects.create(
        fingerprint="c" * 64,
        setup_id=run.setup_id,
        setup_text="",
        metric_name="throughput",
        baseline="2.5.25",
        candidate="2.5.25",
        stated_change_pct=0.0,
        tolerance_pct=0.5,
        source="",
    )
    assert read().claims is True
    empty = stored_keys(manifest, [], [], [])  # no runs: nothing asked of the setups
    assert not empty.setups and not empty.fingerprints and empty.claims is False


def test_stored_keys_leaves_a_setup_newer_than_its_hardware_read_to_the_writer(
    tmp_path, monkeypatch
):
    """Each statement of the round trip has its own snapshot: an upload committing between
    the hardware read and the setup read shows a setup whose hardware was not read. That
    setup is not a key the writer can use (it was a KeyError, failing one of ten concurrent
    uploads of a new machine); the writer looks it up itself and the upload succeeds."""
    from ingest import bundle_keys
    from ingest.bundle import bundle_parse, read_bundle
    from ingest.writer import FileDigests, run_fingerprint

    path = volano_bundle(tmp_path / "a.tar.gz")
    ingest(path)
    read_all = bundle_keys.stored_rows_at_once

    def hardware_not_yet_seen(queries):
        rows = read_all(queries)
        return [[], *rows[1:]]  # the hardware statement ran before the other upload's commit

    monkeypatch.setattr(bundle_keys, "stored_rows_at_once", hardware_not_yet_seen)
    bundle = read_bundle(path)
    manifest, plan, _ = bundle_parse(bundle)
    (spec,) = [p.spec for p in plan]
    fingerprint = run_fingerprint(spec, FileDigests(bundle.files))
    found = bundle_keys.stored_keys(manifest, [spec], [fingerprint], ["throughput"])
    assert found.setups == {} and found.hardware == []
    again = ingest(volano_bundle(tmp_path / "b.tar.gz", kernel="2.5.26"))
    assert again.status == "done" and len(again.run_ids) == 1
    assert Setup.objects.count() == 1 and Hardware.objects.count() == 1


def test_stored_keys_one_statement_at_a_time_without_client_side_binding(tmp_path, monkeypatch):
    """A connection that binds on the server cannot send several statements in one message:
    the same rows, read one statement at a time."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ingest import keys

    ingest(volano_bundle(tmp_path / "a.tar.gz"))
    queries = [
        (Hardware, "name = ANY(%s)", [["P8"]], ()),
        (Kernel, "version = ANY(%s)", [["2.5.25", "9.9"]], ()),
        (Setup, "mode = %s", ["UP"], ["params"]),
    ]
    together = keys.stored_rows_at_once(queries)
    monkeypatch.setattr(keys.psycopg, "ClientCursor", type("NotThisCursor", (), {}))
    with CaptureQueriesContext(connection) as sent:
        apart = keys.stored_rows_at_once(queries)
    assert len(sent.captured_queries) == 3
    assert [[r.pk for r in rows] for rows in apart] == [[r.pk for r in rows] for rows in together]
    assert all(len(rows) == 1 for rows in together)

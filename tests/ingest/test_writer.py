"""The writer (ingest/writer.py): a many-run bundle stored with its keys looked up once per
bundle, runs identical to one stored (or to an earlier run of the same bundle) recognised,
and the page cache moved once per scope and setup at commit, not once per run; the raw
files stored byte for byte (COPY's binary format, ingest.copy_rows.copy_rows_binary) with
their digest, parser, trial and warnings; and uploads of the same runs ingested at the same
moment, each in its own session, all ending done with the runs stored once."""

from __future__ import annotations

import hashlib
import threading

import pytest
from django.core.cache import cache
from django.db import connection

from ingest.services import upload_create, upload_ingest
from perfdb import cache as page_cache
from perfdb.models import Kernel, Metric, PatchSet, RawFile, Result, Run, Setup, Upload
from tests.bundles import (
    ingest_bundle,
    make_bundle,
    manifest_toml,
    volano_bundle,
    volano_log,
    volano_run,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def unqueued(monkeypatch):
    """No broker: the test runs each ingest itself."""
    from ingest import queue

    monkeypatch.setattr(queue, "ingest_upload", lambda *, upload_id: None)


# --- a many-run bundle ------------------------------------------------------------------------

KERNELS = ["2.4.18", "2.4.19", "2.4.20", "2.5.1", "2.5.2", "2.5.3"]


def bundle(tmp_path, name, runs, logs):
    files = {"manifest.toml": manifest_toml(*runs), **logs}
    return make_bundle(tmp_path / name, files)


def ingest(path, sent) -> Upload:
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name, source="cli")
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    return upload


def volano_runs(kernels, mode="UP"):
    runs, logs = [], {}
    for i, kernel in enumerate(kernels):
        name = f"{mode}-{i}.log"
        run = volano_run(kernel, files=f'{{ path = "{name}", parser = "volanomark" }}')
        runs.append(run.replace('mode = "UP"', f'mode = "{mode}"'))
        logs[name] = volano_log(13000 + 10 * i)
    return runs, logs


@pytest.fixture
def sent(monkeypatch):
    from ingest import queue

    calls: list[int] = []
    monkeypatch.setattr(queue, "ingest_upload", lambda *, upload_id: calls.append(upload_id))
    return calls


def test_many_runs_of_two_setups_are_stored_each_on_its_setup_and_kernel(tmp_path, sent):
    up, up_logs = volano_runs(KERNELS, "UP")
    smp, smp_logs = volano_runs(KERNELS, "SMP")
    upload = ingest(bundle(tmp_path, "b.tar.gz", up + smp, {**up_logs, **smp_logs}), sent)
    assert upload.status == "done", upload.error
    runs = Run.objects.filter(pk__in=upload.run_ids).select_related("setup", "kernel")
    assert len(runs) == 12
    assert Setup.objects.count() == 2
    assert {(r.setup.mode, r.kernel.version) for r in runs} == {
        (mode, k) for mode in ("UP", "SMP") for k in KERNELS
    }
    assert Kernel.objects.count() == len(KERNELS)


def test_a_run_repeated_inside_one_bundle_is_stored_once(tmp_path, sent):
    runs, logs = volano_runs(["2.4.20"])
    upload = ingest(bundle(tmp_path, "b.tar.gz", runs + runs, logs), sent)
    assert upload.status == "done", upload.error
    (run,) = Run.objects.all()
    assert set(upload.run_ids) == {run.pk}  # the second names the first
    assert any("identical to run" in w for w in upload.warnings)


def _versions(setups) -> list[object]:
    keys = [page_cache.VERSION_KEY]
    keys += [
        page_cache.SCOPE_VERSION_PREFIX + page_cache.scope_key(s.workload_id, s.hardware_id, s.mode)
        for s in setups
    ]
    keys += [page_cache.SETUP_VERSION_PREFIX + str(s.pk) for s in setups]
    return [cache.get(k) for k in keys]


def test_the_page_cache_moves_once_per_bundle_at_commit(
    tmp_path, sent, django_capture_on_commit_callbacks
):
    first, logs = volano_runs(KERNELS[:1], "UP")
    smp, smp_logs = volano_runs(KERNELS[:1], "SMP")
    with django_capture_on_commit_callbacks(execute=True):
        ingest(bundle(tmp_path, "a.tar.gz", first + smp, {**logs, **smp_logs}), sent)
    setups = list(Setup.objects.order_by("mode"))
    before = _versions(setups)
    assert all(isinstance(v, int) for v in before)
    up, up_logs = volano_runs(KERNELS[1:], "UP")
    smp, smp_logs = volano_runs(KERNELS[1:], "SMP")
    path = bundle(tmp_path, "b.tar.gz", up + smp, {**up_logs, **smp_logs})
    with django_capture_on_commit_callbacks(execute=True):
        upload = ingest(path, sent)
    assert len(upload.run_ids) == 10
    after = _versions(setups)
    # 10 runs, one move each of the data version, the two scopes and the two setups
    assert [a - b for a, b in zip(after, before, strict=True)] == [1] * len(before)


# --- raw files --------------------------------------------------------------------------------

VMSTAT = (
    b"procs -----------memory---------- ---swap-- -----io---- --system-- ----cpu----\n"
    b" r  b   swpd   free   buff  cache   si   so    bi    bo   in    cs us sy id wa\n"
    + b" 1  0      0 503112  41208 312452    0    0    18    11 1021   130  2  1 96  1\n" * 6
    + b"noise \\ ' \" \x00 \xff\xfe \\x00 {} \r\n"  # Latin-1, a NUL, escapes COPY text would need
    + b" 4  0      0 502984  41208 312452    0    0     0     0 1012  5122 60 12 28  0\n"
)

RUN = """
[[run]]
workload = "vmstat-raw"
kernel = "2.6.0"
hardware = "P8"
mode = "SMP"
files = [{ path = "logs/one.txt", parser = "vmstat", trial = 1 },
         { path = "two.txt", parser = "vmstat", trial = 2 }]
"""


def test_raw_files_are_stored_byte_for_byte(tmp_path, unqueued):
    second = VMSTAT.replace(b"503112", b"503113") + bytes(range(256))
    path = make_bundle(
        tmp_path / "raw.tar.gz",
        {"manifest.toml": manifest_toml(RUN), "logs/one.txt": VMSTAT, "two.txt": second},
    )
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name, source="cli")
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == Upload.Status.DONE, upload.error
    stored = {f.path: f for f in RawFile.objects.filter(run_id__in=upload.run_ids)}
    assert set(stored) == {"logs/one.txt", "two.txt"}
    for name, data, trial in (("logs/one.txt", VMSTAT, 1), ("two.txt", second, 2)):
        raw = stored[name]
        assert bytes(raw.content) == data
        assert raw.sha256 == hashlib.sha256(data).hexdigest()
        assert (raw.parser, raw.trial) == ("vmstat", trial)
        assert any("not vmstat output, skipped" in w for w in raw.warnings), raw.warnings
        assert all(isinstance(w, str) for w in raw.warnings)


# --- the same runs uploaded at the same moment ---------------------------------------------------

COPIES = 10


def same_runs_bundles(tmp_path) -> list[Upload]:
    """COPIES bundles whose runs are identical (same keys, values and raw files: the same
    fingerprints) but whose bytes differ (a comment in the manifest), so each is an upload
    of its own. Every key is new: kernel, patch set, hardware, workload, setup, metrics."""
    runs = [
        volano_run(
            kernel, patches='["O(1)-K3"]', files=f'{{ path = "{i}.log", parser = "volanomark" }}'
        )
        for i, kernel in enumerate(["2.5.25", "2.5.26"])
    ]
    logs = {f"{i}.log": volano_log(13000 + 100 * i) for i in range(2)}
    uploads = []
    for copy in range(COPIES):
        manifest = f"# copy {copy}\n" + manifest_toml(*runs)
        path = make_bundle(tmp_path / f"copy-{copy}.tar.gz", {"manifest.toml": manifest, **logs})
        with open(path, "rb") as stream:
            upload, created = upload_create(stream=stream, filename=path.name, source="cli")
        assert created
        uploads.append(upload)
    return uploads


def ingest_at_once(upload_ids: list[int]) -> list[BaseException]:
    """Each upload ingested by a thread of its own (Django gives each thread its own
    connection), all released together."""
    start = threading.Barrier(len(upload_ids))
    errors: list[BaseException] = []

    def work(upload_id: int) -> None:
        try:
            start.wait()
            upload_ingest(upload_id=upload_id)
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(pk,)) for pk in upload_ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


@pytest.mark.django_db(transaction=True)
def test_ten_identical_uploads_at_once_all_end_done_with_the_runs_stored_once(tmp_path, unqueued):
    uploads = same_runs_bundles(tmp_path)
    assert ingest_at_once([u.pk for u in uploads]) == []
    finished = list(Upload.objects.filter(pk__in=[u.pk for u in uploads]))
    assert [(u.status, u.error) for u in finished] == [("done", "")] * COPIES
    runs = set(Run.objects.values_list("pk", flat=True))
    assert len(runs) == 2
    # Every upload names the two stored runs: its own, or those another stored first.
    assert all(set(u.run_ids) == runs for u in finished)
    assert sum(1 for u in finished if Run.objects.filter(upload=u).exists()) == 1
    assert Kernel.objects.count() == 2 and PatchSet.objects.count() == 1
    assert Setup.objects.count() == 1
    assert Metric.objects.count() == Result.objects.values("metric").distinct().count()
    # Nothing half-written: each run has its results once.
    assert Result.objects.count() == 2 * Result.objects.filter(run_id=min(runs)).count()


def test_runs_rows_insert_gives_each_run_its_row_and_id(tmp_path):
    from ingest.writer import runs_rows_insert

    upload = ingest_bundle(volano_bundle(tmp_path / "a.tar.gz"))
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

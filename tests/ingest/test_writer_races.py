"""ingest/writer.py under concurrency: uploads of the same runs ingested at the same moment,
each in its own database session, all end done; the runs are stored once and every upload
names them (recognised as already stored), never a unique-key error."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from ingest.services import upload_create, upload_ingest
from perfdb.models import Kernel, Metric, PatchSet, Result, Run, Setup, Upload
from tests.bundles import make_bundle, manifest_toml, volano_log, volano_run

pytestmark = pytest.mark.django_db(transaction=True)

COPIES = 10


@pytest.fixture
def unqueued(monkeypatch):
    """No broker: the test runs each ingest itself."""
    from ingest import queue

    monkeypatch.setattr(queue, "ingest_upload", lambda *, upload_id: None)


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

"""ingest/writer.py over a many-run bundle: keys looked up once per bundle, runs identical to
one stored (or to an earlier run of the same bundle) recognised, and the page cache moved
once per scope and setup at commit, not once per run."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from ingest.services import upload_create, upload_ingest
from perfdb import cache as page_cache
from perfdb.models import Kernel, Run, Setup, Upload
from tests.bundles import make_bundle, manifest_toml, volano_log, volano_run

pytestmark = pytest.mark.django_db

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
        page_cache.SCOPE_VERSION_PREFIX
        + page_cache.scope_key(s.workload_id, s.hardware_id, s.mode)
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

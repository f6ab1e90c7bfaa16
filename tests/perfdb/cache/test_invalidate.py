"""Moving the versions when the stored data change (perfdb/cache/invalidate.py): runs added
to a scope move that scope's version and the data version only, so entries of other scopes
survive an upload and values read from every run do not; runs removed or edited move every
version; and every writer of runs (the ingest, the synthetic history, the demo, the ORM)
moves them on commit, never before."""

from __future__ import annotations

import pytest

from ingest.demo import demo_remove
from ingest.synthetic import history_remove, history_write
from perfdb import cache as page_cache
from perfdb.models import Run, Setup
from tests.dashboards.data import load
from tests.dashboards.scopes import ingest_on_hardware, scope_key
from tests.perfdb.cache.counting import counter

pytestmark = pytest.mark.django_db


def test_a_scope_entry_survives_runs_added_elsewhere_not_its_own():
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1
    page_cache.runs_added(["2-1-SMP"])
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 2
    page_cache.data_changed()  # runs removed or edited: every scope
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 3


def test_runs_added_still_moves_the_data_version():
    """Values cached with ``cached`` read every run: any upload makes them stale."""
    compute = counter()
    assert page_cache.cached("t:all", compute) == 1
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached("t:all", compute) == 2


def test_an_upload_recomputes_its_scope_only(tmp_path, django_capture_on_commit_callbacks):
    load(tmp_path)
    first = Setup.objects.order_by("id").first()
    compute = counter()
    key = scope_key(first)
    page_cache.cached_in_scope("t:first-scope-chart", key, compute)
    with django_capture_on_commit_callbacks(execute=True):
        upload = ingest_on_hardware(tmp_path, "P9")  # a new scope
    new_scope = scope_key(Run.objects.get(pk=upload.run_ids[0]).setup)
    assert new_scope != key
    assert page_cache.cached_in_scope("t:first-scope-chart", key, compute) == 1


def remove_a_run() -> None:
    run = Run.objects.order_by("id").last()
    assert run is not None
    run.delete()


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(lambda: history_write(scale=1, seed=3), id="synthetic history_write"),
        pytest.param(history_remove, id="synthetic history_remove"),
        pytest.param(demo_remove, id="demo_remove"),
        pytest.param(remove_a_run, id="a run deleted through the ORM (admin)"),
    ],
)
def test_every_writer_of_runs_moves_the_data_version_on_commit(
    data, django_capture_on_commit_callbacks, write
):
    before = page_cache.data_version()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        write()
    assert page_cache.data_version() == before, "bumped before the commit"
    for callback in callbacks:
        callback()
    assert page_cache.data_version() > before

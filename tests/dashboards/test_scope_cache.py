"""Targeted invalidation (issue 18): an upload recomputes only the scopes it wrote to.

Entries cached per scope (its charts, its setups' run counts) survive an upload to another
scope; the overview and the scope picker, rebuilt from those entries after every upload, show
the new runs at once without reading every run again.
"""

from __future__ import annotations

import pytest

from dashboards import scope_stats
from perfdb import cache as page_cache
from perfdb.models import Run, Setup
from tests.dashboards.data import load
from tests.dashboards.test_page_cache import ingest_on_hardware, scope_key

pytestmark = pytest.mark.django_db


def counter():
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    return compute


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


def test_cached_per_scope_computes_only_the_missing_scopes():
    asked: list[list[str]] = []

    def compute(scopes):
        asked.append(list(scopes))
        return {s: f"value of {s}" for s in scopes}

    scopes = ["1-1-SMP", "2-1-SMP", "3-1-UP"]
    assert page_cache.cached_per_scope("t:per", scopes, compute)["3-1-UP"] == "value of 3-1-UP"
    page_cache.runs_added(["2-1-SMP"])
    page_cache.cached_per_scope("t:per", scopes, compute)
    assert asked == [scopes, ["2-1-SMP"]]


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


def test_the_overview_counts_follow_uploads(tmp_path, django_capture_on_commit_callbacks):
    load(tmp_path)
    workloads, hardware, latest = scope_stats.overview()
    assert sum(w.run_count for w in workloads) == Run.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        upload = ingest_on_hardware(tmp_path, "P9")
    workloads, hardware, latest = page_cache.cached("t:overview", scope_stats.overview)
    assert sum(w.run_count for w in workloads) == Run.objects.count()
    assert sum(h.run_count for h in hardware) == Run.objects.count()
    newest = Run.objects.filter(pk__in=upload.run_ids).order_by("-created_at", "-id").first()
    assert newest.pk in {r.pk for r in latest}
    setups = scope_stats.setups_with_counts()
    counts = {s["id"]: s["run_count"] for s in setups}
    for setup in Setup.objects.all():
        assert counts.get(setup.pk, 0) == setup.runs.count()

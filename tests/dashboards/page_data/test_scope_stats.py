"""What reads every scope (dashboards/page_data/scope_stats.py): the overview's run counts
per workload and per hardware and its latest runs follow each upload at once, and each
scope's setups count exactly the runs they have."""

from __future__ import annotations

import pytest

from dashboards.page_data import scope_stats
from perfdb import cache as page_cache
from perfdb.models import Run, Setup
from tests.dashboards.data import load
from tests.dashboards.scopes import ingest_on_hardware

pytestmark = pytest.mark.django_db


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
    every = scope_stats.scope_runs(scope_stats.scopes_all())
    counts = {r.setup_id: r.run_count for rows in every.values() for r in rows}
    for setup in Setup.objects.all():
        assert counts.get(setup.pk, 0) == setup.runs.count()

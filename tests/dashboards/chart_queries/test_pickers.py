"""The pickers' choice lists (dashboards/chart_queries/pickers.py): a setup with its metrics
in one query, as the two reads it replaces give them.

The activity page's run picker (chart_queries.run_choices with a sample source): the
newest runs that have a time series of that source, found from the samples' side, give the
same runs as asking every run whether it has one."""

from __future__ import annotations

import pytest
from django.db.models import Exists, OuterRef

from dashboards import chart_queries as cq
from perfdb.models import Run, Sample, Setup
from tests.dashboards.data import load
from tests.factories import SampleFactory

pytestmark = pytest.mark.django_db


def test_a_setup_with_its_metrics_is_what_the_pickers_list(tmp_path, django_assert_num_queries):
    load(tmp_path)
    for setup in Setup.objects.all():
        with django_assert_num_queries(1):
            found, metrics = cq.setup_metrics(setup_id=setup.pk)
        (expected,) = cq.setup_choices(setup_id=setup.pk) or [None]
        assert found == expected
        assert metrics == (cq.metric_choices(setup_ids=[setup.pk]) if expected else [])


def test_a_setup_without_runs_has_no_choices(db):
    assert cq.setup_metrics(setup_id=987654) == (None, [])


def reference(source: str, limit: int) -> list[int]:
    having = Exists(Sample.objects.filter(run_id=OuterRef("pk"), source=source))
    runs = Run.objects.filter(having).order_by("-created_at", "-id")
    return list(runs.values_list("id", flat=True)[:limit])


@pytest.mark.parametrize("limit", [1, 2, 100])
def test_the_picker_lists_the_newest_runs_with_the_series(tmp_path, limit):
    load(tmp_path)
    with_vmstat = set(Sample.objects.filter(source="vmstat").values_list("run_id", flat=True))
    assert with_vmstat and Run.objects.exclude(pk__in=with_vmstat).exists()
    ids = [c["id"] for c in cq.run_choices(vmstat_only=True, limit=limit)]
    assert ids == reference("vmstat", limit)
    assert set(ids) <= with_vmstat


def test_a_source_no_run_has_lists_nothing(tmp_path):
    load(tmp_path)
    assert cq.run_choices(sample_source="no-such-tool") == []


def test_every_source_is_listed_vmstat_first(tmp_path):
    load(tmp_path)
    run = Run.objects.order_by("pk").first()
    for source in ("sar", "iostat", "perf-stat"):
        SampleFactory(run=run, trial=9, source=source, column="x", values=[1.0])
    distinct = set(Sample.objects.values_list("source", flat=True).distinct())
    assert cq.sample_sources() == ["vmstat", "iostat", "perf-stat", "sar"]
    assert set(cq.sample_sources()) == distinct

"""The pickers' choice lists (dashboards/chart_queries/pickers.py): a setup with its metrics
in one query, as the two reads it replaces give them; a scope's metrics, made of each
setup's (cached per setup), are metric_choices' own list in its order; each setup's metrics
read in one query whether by a loose index scan or one DISTINCT; and no picker makes more
queries as runs are added.

The activity page's run picker (chart_queries.run_choices with a sample source): the
newest runs that have a time series of that source, found from the samples' side, give the
same runs as asking every run whether it has one."""

from __future__ import annotations

import pytest
from django.db.models import Exists, OuterRef

from dashboards import chart_queries as cq
from perfdb.models import Metric, Result, Run, Sample, Setup
from tests.dashboards.chart_queries.query_counts import assert_query_counts, load_with_copies
from tests.dashboards.data import load, setup_ids
from tests.factories import SampleFactory, SetupFactory

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


@pytest.mark.parametrize("extra_copies", [0, 2])
def test_query_counts_do_not_grow_with_runs(tmp_path, extra_copies, django_assert_num_queries):
    """Loading more data must not add queries (no N+1)."""
    load_with_copies(tmp_path, extra_copies)
    ids = setup_ids()
    calls = {
        "setup_choices": (lambda: cq.setup_choices(), 1),
        # the setups' metric ids, then those metrics
        "metric_choices": (lambda: cq.metric_choices(setup_ids=ids), 2),
        "run_choices": (lambda: cq.run_choices(vmstat_only=True), 1),
    }
    assert_query_counts(django_assert_num_queries, calls)


def test_metrics_kept_per_setup_give_the_scopes_metric_choices(data):
    """A scope's metrics made of each setup's (cached per setup) are metric_choices' own list,
    order included, for any set of setups; a setup without results has none."""
    from dashboards.page_data import series_data

    ids = sorted(Setup.objects.values_list("pk", flat=True))
    empty = SetupFactory(hardware=Setup.objects.get(pk=ids[0]).hardware, params={"rooms": 999})
    assert cq.metrics_by_setup(setup_ids=[*ids, empty.pk])[empty.pk] == []
    for chosen in (ids, ids[:1], ids[::2], [empty.pk, *ids[1:3]]):
        used = Result.objects.filter(setup_id__in=chosen).values_list("metric_id", flat=True)
        rows = Metric.objects.filter(pk__in=set(used)).order_by("name", "unit", "id")
        expected = list(rows.values("id", "name", "unit", "better"))
        assert cq.metric_choices(setup_ids=chosen) == expected
        assert series_data.metrics_of_setups(chosen) == expected  # per setup, cached
        assert series_data.metrics_of_setups(chosen) == expected  # read back from the cache
    assert len(cq.metric_choices(setup_ids=ids)) > 1  # more than one metric: the order matters


def test_metrics_by_setup_loose_scan_and_distinct_agree(data, django_assert_num_queries):
    """A few setups are read by a loose index scan each, more by one DISTINCT: both are one
    query and give each setup exactly the metrics it has results for."""
    from dashboards.chart_queries import pickers

    ids = sorted(Setup.objects.values_list("pk", flat=True))
    empty = SetupFactory(hardware=Setup.objects.get(pk=ids[0]).hardware, params={"rooms": 998})
    every = [*ids, empty.pk]
    assert len(every) > pickers.LOOSE_SCAN_SETUPS
    expected = {
        s: sorted(set(Result.objects.filter(setup_id=s).values_list("metric_id", flat=True)))
        for s in every
    }
    assert any(len(m) > 1 for m in expected.values()) and expected[empty.pk] == []
    for chosen in (every, every[: pickers.LOOSE_SCAN_SETUPS], every[-2:], [ids[0]], []):
        with django_assert_num_queries(1 if chosen else 0):
            found = cq.metrics_by_setup(setup_ids=chosen)
        assert found == {s: expected[s] for s in chosen}

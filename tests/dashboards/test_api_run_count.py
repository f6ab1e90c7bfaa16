"""What is read from the per-setup summaries instead of counting runs: ``/api/runs/``'s count
when every filter is the setup's (counted from the runs otherwise; either way the number
of runs the filters give, with the pages it implies: the last one partly full, the one after
it a 404), and the busiest setup."""

from __future__ import annotations

import pytest

from dashboards.chart_queries.pickers import setup_choices
from dashboards.chart_queries.summaries import busiest_setup_id
from ingest import synthetic
from perfdb import queries
from perfdb.models import Run, Setup


@pytest.fixture
def history(db):
    """The synthetic history's first unit: every workload, several machines, UP and SMP."""
    synthetic.history_write(scale=1, seed=1)


def filters_to_try() -> list[dict[str, str]]:
    setup = Setup.objects.select_related("workload", "hardware").order_by("pk").first()
    kernel = Run.objects.select_related("kernel").order_by("pk").first().kernel.version
    return [
        {},
        {"workload": setup.workload.name},
        {"hardware": setup.hardware.name},
        {"mode": "SMP" if setup.mode == "UP" else "UP"},
        {"workload": setup.workload.name, "hardware": setup.hardware.name, "mode": setup.mode},
        {"workload": "no such workload"},
        {"kernel": kernel},  # a run's own filter: counted from the runs
        {"patches": "stock"},
    ]


def test_the_count_is_the_runs_the_filters_give(client, history):
    for filters in filters_to_try():
        body = client.get("/api/runs/", filters).json()
        expected = queries.runs_filtered(**filters).count()
        assert body["count"] == expected, filters
        assert len(body["results"]) == min(expected, 50)
    assert queries.runs_filtered_count() == Run.objects.count() > 50
    assert queries.runs_filtered_count(kernel="2.6.9") is None


def test_the_count_follows_runs_removed_and_sets_the_last_page(client, history):
    Run.objects.filter(pk__in=Run.objects.order_by("pk").values("pk")[:7]).delete()
    total = Run.objects.count()
    assert client.get("/api/runs/").json()["count"] == total
    last = -(-total // 50)
    page = client.get("/api/runs/", {"page": last}).json()
    assert page["next"] is None and len(page["results"]) == total - 50 * (last - 1)
    assert client.get("/api/runs/", {"page": last + 1}).status_code == 404


def busiest_by_hand() -> int:
    """The setup with the most runs, the first in picker order among equals."""
    setups = setup_choices()
    return max(setups, key=lambda s: s["run_count"])["id"]


def test_the_busiest_setup_is_the_first_of_those_with_most_runs(history):
    """From the summaries: ties (every synthetic setup has as many runs) go to the first in
    picker order; a setup given one more run, or made busiest by removals, is found."""
    assert busiest_setup_id() == busiest_by_hand()
    last = Setup.objects.filter(summary__isnull=False).order_by("-pk").first()
    run = last.runs.first()
    run.pk, run.fingerprint = None, "one-more"
    run.save()
    assert busiest_setup_id() == last.pk == busiest_by_hand()
    Run.objects.filter(pk__in=Run.objects.filter(setup=last).values("pk")[:2]).delete()
    assert busiest_setup_id() == busiest_by_hand() != last.pk


def test_no_busiest_setup_without_runs(db):
    assert busiest_setup_id() is None

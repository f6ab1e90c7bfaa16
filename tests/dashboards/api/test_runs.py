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


def filters_to_try() -> list[tuple[dict[str, str], int]]:
    """API filters, each with the number of runs it should give, counted from the runs."""
    setup = Setup.objects.select_related("workload", "hardware").order_by("pk").first()
    workload, hardware = setup.workload.name, setup.hardware.name
    other_mode = "SMP" if setup.mode == "UP" else "UP"
    kernel = Run.objects.select_related("kernel").order_by("pk").first().kernel.version
    runs = Run.objects
    return [
        ({}, runs.count()),
        ({"workload": workload}, runs.filter(setup__workload__name=workload).count()),
        ({"hardware": hardware}, runs.filter(setup__hardware__name=hardware).count()),
        ({"mode": other_mode}, runs.filter(setup__mode=other_mode).count()),
        (
            {"workload": workload, "hardware": hardware, "mode": setup.mode},
            runs.filter(
                setup__workload__name=workload,
                setup__hardware__name=hardware,
                setup__mode=setup.mode,
            ).count(),
        ),
        ({"workload": "no such workload"}, 0),
        ({"kernel": kernel}, runs.filter(kernel__version=kernel).count()),  # the run's own
        ({"patches": "stock"}, runs.filter(patch_set__name="").count()),
    ]


def test_the_count_is_the_runs_the_filters_give(client, history):
    for filters, expected in filters_to_try():
        body = client.get("/api/runs/", filters).json()
        assert body["count"] == expected, filters
        assert len(body["results"]) == min(expected, 50)
        assert filters == {} or expected < Run.objects.count()  # each filter narrows
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

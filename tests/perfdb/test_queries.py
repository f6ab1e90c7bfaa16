"""Reads of the data model (perfdb/queries.py) on rows from the factories: the API's run
filters, the count they take from the per-setup summaries, and a run's results per metric
with its warm-up trials listed but left out of the statistics."""

from __future__ import annotations

import pytest

from perfdb import queries
from tests.factories import (
    HardwareFactory,
    MetricFactory,
    ResultFactory,
    RunFactory,
    SetupFactory,
    UploadFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs():
    """Three VolanoMark runs on P8 (stock 2.4.20 UP, 2.4.20+O(1) UP, 2.5.59 SMP) and a dbench
    run on another machine."""
    up, smp = SetupFactory(), SetupFactory(mode="SMP")
    return {
        "stock": RunFactory(setup=up, kernel__version="2.4.20"),
        "o1": RunFactory(setup=up, kernel__version="2.4.20", patch_set__name="O(1)"),
        "smp": RunFactory(setup=smp, kernel__version="2.5.59"),
        "dbench": RunFactory(
            setup=SetupFactory(workload__name="dbench", hardware=HardwareFactory(name="Q4")),
            kernel__version="2.5.59",
        ),
    }


def names(found) -> set[str]:
    return {f"{r.setup.workload.name} {r.build} {r.setup.mode}" for r in found}


def test_runs_filtered_by_the_setups_keys_kernel_and_patch_set(runs):
    assert len(queries.runs_filtered()) == 4
    assert names(queries.runs_filtered(workload="dbench")) == {"dbench 2.5.59 UP"}
    assert names(queries.runs_filtered(mode="smp")) == {"VolanoMark 2.5.59 SMP"}  # any case
    assert names(queries.runs_filtered(hardware="P8", kernel="2.4.20")) == {
        "VolanoMark 2.4.20 UP",
        "VolanoMark 2.4.20+O(1) UP",
    }
    stock = {"VolanoMark 2.4.20 UP", "VolanoMark 2.5.59 SMP", "dbench 2.5.59 UP"}
    assert names(queries.runs_filtered(patches="stock")) == stock
    assert names(queries.runs_filtered(patches="")) == stock
    assert names(queries.runs_filtered(patches="O(1)")) == {"VolanoMark 2.4.20+O(1) UP"}
    assert [r.pk for r in queries.runs_filtered()] == sorted(
        (r.pk for r in runs.values()), reverse=True
    )


def test_the_count_comes_from_the_summaries_for_setup_filters_only(runs):
    assert queries.runs_filtered_count() == 4
    assert queries.runs_filtered_count(hardware="P8") == 3
    assert queries.runs_filtered_count(workload="VolanoMark", mode="up") == 2
    assert queries.runs_filtered_count(workload="nothing") == 0
    # A kernel or patch filter is not a setup's: the caller counts the runs.
    assert queries.runs_filtered_count(kernel="2.4.20") is None
    assert queries.runs_filtered_count(patches="stock") is None


def test_a_runs_results_per_metric_leave_the_warm_up_out(django_assert_num_queries):
    run = RunFactory()
    throughput, latency = MetricFactory(), MetricFactory(name="latency", unit="us", better="lower")
    for trial, value in ((1, 9000.0), (2, 13000.0), (3, 13200.0)):
        ResultFactory(run=run, metric=throughput, trial=trial, value=value, discarded=trial == 1)
    ResultFactory(run=run, metric=latency, value=42.0)
    with django_assert_num_queries(1):
        found = queries.run_results(run_id=run.pk)
    assert found["throughput"] == {
        "unit": "msg/s",
        "better": "higher",
        "trials": [1, 2, 3],
        "values": [9000.0, 13000.0, 13200.0],
        "discarded_trials": [1],
        "n": 2,
        "mean": 13100.0,
        "sd": pytest.approx(141.42, abs=0.01),
    }
    assert (found["latency"]["n"], found["latency"]["mean"], found["latency"]["sd"]) == (
        1,
        42.0,
        None,
    )
    assert queries.run_results(run_id=run.pk + 1000) == {}


def test_a_run_with_its_keys_in_one_query(django_assert_num_queries):
    run = RunFactory(upload=UploadFactory(), kernel__version="2.5.25", patch_set__name="task+sched")
    with django_assert_num_queries(1):
        found = queries.run_with_keys(run_id=run.pk)
        assert (found.build, found.setup.hardware.name, found.upload.pk) == (
            "2.5.25+task+sched",
            "P8",
            run.upload.pk,
        )
    assert queries.run_with_keys(run_id=run.pk + 1000) is None


def test_demo_uploads_name_the_document_each_reproduces():
    UploadFactory(filename="001-volano.tar.gz", source="demo")
    UploadFactory(filename="other.tar.gz", source="demo")
    UploadFactory(filename="002-lab.tar.gz", source="api")  # not the demo's
    found = [(u.filename, source[:20]) for u, source in queries.demo_uploads()]
    assert found == [("001-volano.tar.gz", "Hartner, “[PATCH] [P"), ("other.tar.gz", "")]

"""The synthetic history: the shapes it promises, reproducibility, and a clean --remove."""

from __future__ import annotations

from statistics import fmean

import pytest
from django.core.management import call_command
from django.db import connection

from ingest import synthetic
from ingest.services import upload_create, upload_ingest
from perfdb.kernels import parse_kernel
from perfdb.models import (
    Hardware,
    Kernel,
    Metric,
    ProfileEntry,
    Result,
    Run,
    Sample,
    Setup,
    Trial,
    Workload,
)
from tests.bundles import volano_bundle

# --- the pure generator ----------------------------------------------------------------------


def test_one_unit_covers_every_workload_and_machine():
    setups = synthetic.setups_of_unit(0)
    assert {s.workload.name for s in setups} == {w.name for w in synthetic.WORKLOADS}
    assert {s.hardware.name for s in setups} == {h.name for h in synthetic.HARDWARE}
    assert len(synthetic.WORKLOADS) >= 12 and len(synthetic.HARDWARE) >= 8


def test_builds_span_2_2_to_2_6_with_prereleases_and_patch_sets():
    kernels = [parse_kernel(k) for k, _ in synthetic.BUILDS]
    assert {k.series for k in kernels} == {"2.2", "2.4", "2.5", "2.6"}
    assert {k.stage for k in kernels} >= {"pre", "rc", "test"}
    sort_keys = [k.sort_key for k in dict.fromkeys(kernels)]
    assert sort_keys == sorted(sort_keys), "runs come in kernel order"
    assert len({p for _, p in synthetic.BUILDS if p}) >= 3


def test_metrics_produced_are_at_least_twenty():
    runs = [r for s in synthetic.setups_of_unit(0) for r in synthetic.runs_of_setup(s, seed=0)]
    produced = {(name, unit) for r in runs for name, unit, _, _ in r.results}
    assert len(produced) >= 20
    assert produced == {(m.name, m.unit) for m in synthetic.metric_defs()}


def test_setups_are_distinct_across_units():
    keys = [
        (s.workload.name, s.hardware.name, s.mode, s.params)
        for unit in range(40)
        for s in synthetic.setups_of_unit(unit)
    ]
    assert len(set(keys)) == len(keys)


@pytest.mark.parametrize("index", [0, 5, 37])
def test_same_seed_same_runs_other_seed_same_shape(index):
    setup = synthetic.setup_spec(index)
    first = list(synthetic.runs_of_setup(setup, seed=7))
    again = list(synthetic.runs_of_setup(setup, seed=7))
    other = list(synthetic.runs_of_setup(setup, seed=8))
    assert first == again
    assert [r.results for r in first] != [r.results for r in other]
    shape = [(len(r.results), len(r.profile), len(r.vmstat)) for r in first]
    assert shape == [(len(r.results), len(r.profile), len(r.vmstat)) for r in other]


def _stock_means(setup, metric: str, seed: int = 1) -> dict[str, float]:
    out = {}
    for run in synthetic.runs_of_setup(setup, seed):
        if not run.patches:
            values = [v for name, _, trial, v in run.results if name == metric and trial > 1]
            out[run.kernel] = fmean(values)
    return out


@pytest.mark.parametrize(
    ("workload", "metric", "before", "after", "low", "high"),
    [
        ("VolanoMark", "throughput", "2.5.1", "2.5.2", 1.15, 1.35),  # O(1) scheduler, +25 %
        ("dbench", "throughput", "2.4.19", "2.4.20", 1.10, 1.25),  # the regression fixed
        ("LMBench", "lat_ctx_us", "2.5.75", "2.6.0-test1", 1.05, 1.16),  # 10 % slower
    ],
)
def test_the_real_steps_stand_out_of_the_noise(workload, metric, before, after, low, high):
    index = next(
        i
        for i in range(synthetic.SETUPS_PER_UNIT)
        if synthetic.setup_spec(i).workload.name == synthetic.PREFIX + workload
    )
    means = _stock_means(synthetic.setup_spec(index), metric)
    assert low < means[after] / means[before] < high


# --- the writer ----------------------------------------------------------------------------

pytestmark_db = pytest.mark.django_db


def _stored_values() -> list[tuple[str, str, str, int, float]]:
    return sorted(
        Result.objects.filter(run__synthetic=True).values_list(
            "run__fingerprint", "metric__name", "metric__unit", "trial", "value"
        )
    )


@pytestmark_db
def test_write_stores_the_counted_rows_all_marked_synthetic():
    report = synthetic.history_write(scale=1, seed=3)
    expected = synthetic.counts([0])
    assert report.counts == expected
    assert Result.objects.count() == expected.results == synthetic.results_per_unit()
    assert Run.objects.filter(synthetic=True).count() == expected.runs == Run.objects.count()
    stored = sum(
        len(v) for v in Sample.objects.filter(source="vmstat").values_list("values", flat=True)
    )
    assert stored == expected.samples > 0
    assert ProfileEntry.objects.count() == expected.profile_entries > 0
    assert Trial.objects.filter(discarded=True).count() == sum(
        1 for s in synthetic.setups_of_unit(0) if s.workload.discard_first_trial
    ) * len(synthetic.BUILDS)
    assert all(
        n.startswith(synthetic.PREFIX) for n in Workload.objects.values_list("name", flat=True)
    )
    assert Setup.objects.count() == synthetic.SETUPS_PER_UNIT
    # One series per (setup, metric) holds one run per build.
    setup = Setup.objects.first()
    metric_id = Result.objects.filter(setup=setup).values_list("metric_id", flat=True).first()
    runs = Result.objects.filter(setup=setup, metric_id=metric_id).values("run_id").distinct()
    assert runs.count() == len(synthetic.BUILDS)


@pytestmark_db
def test_growing_gives_the_same_data_as_building_at_once():
    synthetic.history_write(scale=1, seed=5)
    grown = synthetic.history_write(scale=2, seed=5)
    assert grown.units == (1,)
    values = _stored_values()
    synthetic.history_remove()
    synthetic.history_write(scale=2, seed=5)
    assert _stored_values() == values


@pytestmark_db
def test_remove_leaves_real_data_untouched(tmp_path):
    # A real run on a kernel and with a metric (throughput, msg/s) the synthetic data shares.
    path = volano_bundle(tmp_path / "real.tar.gz", kernel="2.4.20")
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename="real.tar.gz")
    upload_ingest(upload_id=upload.pk)
    real = list(Result.objects.values_list("run_id", "metric__name", "trial", "value"))
    real_names = (
        set(Hardware.objects.values_list("name", flat=True)),
        set(Workload.objects.values_list("name", flat=True)),
        set(Kernel.objects.values_list("version", flat=True)),
        set(Metric.objects.values_list("name", "unit")),
    )
    assert real

    call_command("synth_history", "--scale", "1", "--seed", "2")
    assert Result.objects.count() == len(real) + synthetic.results_per_unit()
    call_command("synth_history", "--remove")

    assert list(Result.objects.values_list("run_id", "metric__name", "trial", "value")) == real
    assert Run.objects.filter(synthetic=True).count() == 0
    assert Sample.objects.count() == 0 and ProfileEntry.objects.count() == 0
    assert (
        set(Hardware.objects.values_list("name", flat=True)),
        set(Workload.objects.values_list("name", flat=True)),
        set(Kernel.objects.values_list("version", flat=True)),
        set(Metric.objects.values_list("name", "unit")),
    ) == real_names


def _planned_results() -> int:
    """The planner's row count of the results: its partitions' statistics added up."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT sum(reltuples)::bigint FROM pg_class WHERE oid IN "
            "(SELECT inhrelid FROM pg_inherits WHERE inhparent = 'perfdb_result'::regclass)"
        )
        return int(cursor.fetchone()[0])


@pytestmark_db
def test_the_command_leaves_the_planner_statistics_of_what_it_wrote():
    # a benchmark run right after a build must not plan on the empty tables' statistics
    call_command("synth_history", "--scale", "1", "--seed", "2")
    assert _planned_results() == Result.objects.count() == synthetic.results_per_unit()


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_refresh_vacuums_too():
    synthetic.history_write(scale=1, seed=2)
    synthetic.statistics_refresh()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_user_tables WHERE relname LIKE 'perfdb_result_p%%' "
            "AND last_vacuum IS NOT NULL AND last_analyze IS NOT NULL"
        )
        assert cursor.fetchone()[0] > 0
    assert _planned_results() == Result.objects.count()

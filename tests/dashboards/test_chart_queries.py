"""Chart selectors: the plain data they return, kernel order, warm-ups left out, and a pinned
number of queries however many runs there are."""

from __future__ import annotations

import tarfile
from statistics import fmean, stdev

import pytest

from dashboards import chart_queries as cq
from perfdb.models import Metric, Result, Run, Setup
from tests.bundles import make_bundle
from tests.dashboards.data import SERIES, WAKEUPS, dashboard_bundle, ingest, load
from tests.factories import SetupFactory

pytestmark = pytest.mark.django_db


def throughput() -> dict:
    m = Metric.objects.get(name="throughput")
    return {"id": m.pk, "name": m.name, "unit": m.unit, "better": m.better}


def base_setup_id() -> int:
    return Setup.objects.get(params={"rooms": 10, "messages": 1000}).pk


def scope_setup_ids() -> list[int]:
    return list(Setup.objects.values_list("id", flat=True))


def test_series_points_are_in_kernel_order_with_warmups_left_out(data, django_assert_num_queries):
    metric, setup_id = throughput(), base_setup_id()
    with django_assert_num_queries(2):  # the setup's run ids (what an update skips), the rows
        result = cq.series_points(setup_id=setup_id, metric=metric)
    series = result.series
    assert series.kernels == ("2.3.99-pre3", "2.4.20", "2.5.25")
    by_build = {p.run.build: p for p in series.points}
    for kernel, patches, label, values, discard in SERIES:
        point = by_build["+".join((kernel, *patches))]
        kept = values[1:] if discard else values
        assert point.value == pytest.approx(fmean(kept))
        assert point.sd == (pytest.approx(stdev(kept)) if len(kept) > 1 else None)
        assert point.run.n_trials == len(kept)
        assert result.labels[point.run.run_id] == label
    assert series.metric.higher_is_better


def _series_points_per_row(setup_id: int, metric: dict) -> cq.KernelSeries:
    """``series_points`` as it read before its rows came as tuples: a dict per row with every
    run key joined (the setup's params decoded per row), grouped by ``RunValues``."""
    from dashboards.chart_queries import charts
    from dashboards.pure.chartdata import Point, Series

    rows = (
        Result.objects.filter(setup_id=setup_id, metric_id=metric["id"], discarded=False)
        .values("run_id", "value", **charts.RUN_EXPRESSIONS)
        .order_by(*charts.KERNEL_ORDER, "trial")
    )
    runs: dict[int, charts.RunValues] = {}
    for row in rows:
        runs.setdefault(row["run_id"], charts.RunValues(keys=row)).values.append(row["value"])
    series = Series(
        metric=charts.metric_data(metric),
        kernels=tuple(dict.fromkeys(r.keys["kernel"] for r in runs.values())),
        points=tuple(Point(run=r.info(), value=r.mean, sd=r.sd) for r in runs.values()),
    )
    return cq.KernelSeries(series, {rid: r.keys["label"] for rid, r in runs.items()})


def test_series_points_read_what_a_row_per_dict_read(data):
    """Every series of the dashboard data, its setups' params made awkward (floats, big
    integers, nesting, markup, non-ASCII keys): the same points, labels and kernels."""
    odd = {"ratio": 0.1, "big": 2**60, "nested": {"a": [1, 2.5]}, "ü<b>": "x&y", "e": 1e-7}
    base_id = base_setup_id()
    Setup.objects.filter(pk=base_id).update(params=odd)
    pairs = Result.objects.values_list("setup_id", "metric_id").distinct()
    assert len(pairs) > 5
    for setup_id, metric_id in pairs:
        m = Metric.objects.get(pk=metric_id)
        metric = {"id": m.pk, "name": m.name, "unit": m.unit, "better": m.better}
        read = cq.series_points(setup_id=setup_id, metric=metric)
        per_row = _series_points_per_row(setup_id, metric)
        assert (read.series, read.labels) == (per_row.series, per_row.labels)
    base = cq.series_points(setup_id=base_id, metric=throughput()).series.points
    assert dict(base[0].run.params)["ratio"] == "0.1"


@pytest.mark.parametrize("extra_copies", [0, 2])
def test_query_counts_do_not_grow_with_runs(tmp_path, extra_copies, django_assert_num_queries):
    """Loading more data must not add queries (no N+1)."""
    load(tmp_path)
    for i in range(extra_copies):  # the same data on other machines: more setups and runs
        _ingest_on_hardware(tmp_path, f"P{i + 9}")
    ids = scope_setup_ids()
    runs = list(Run.objects.values_list("id", flat=True))
    metric = throughput()
    counts = {
        "setup_choices": (lambda: cq.setup_choices(), 1),
        # the setups' metric ids, then those metrics
        "metric_choices": (lambda: cq.metric_choices(setup_ids=ids), 2),
        "run_choices": (lambda: cq.run_choices(vmstat_only=True), 1),
        # the values, then each run's keys once (not with every value)
        "scaling": (lambda: cq.scaling_points(setup_ids=ids, metric=metric, param="rooms"), 2),
        # the values, then the keys of the runs that have them
        "kernel_time": (lambda: cq.kernel_time_points(setup_ids=ids), 2),
        # the runs drawn, then only their profile entries
        "profiles": (lambda: cq.kernel_profiles(setup_ids=ids), 2),
        # the values, then the runs' keys
        "wakeups": (lambda: cq.wakeup_rows(setup_ids=ids), 2),
        "vmstat": (lambda: cq.vmstat_runs(run_ids=runs), 1),
        "run_infos": (lambda: cq.run_infos(run_ids=runs), 1),
        "compare": (lambda: cq.compare_values(base_ids=runs[:3], new_ids=runs[3:]), 2),
        "latest": (lambda: cq.latest_runs_by_scope(), 1),
        "alerts": (lambda: cq.alerts_open(), 1),
    }
    for name, (call, expected) in counts.items():
        with django_assert_num_queries(expected):
            out = call()
        assert out is not None, name


def _ingest_on_hardware(tmp_path, hardware: str) -> None:
    with tarfile.open(dashboard_bundle(tmp_path / f"src-{hardware}.tar.gz")) as src:
        files = {m.name: src.extractfile(m).read() for m in src.getmembers()}
    files["manifest.toml"] = files["manifest.toml"].decode().replace("P8", hardware)
    ingest(make_bundle(tmp_path / f"{hardware}.tar.gz", files))


def test_scaling_points_take_x_from_the_parameter(data):
    chart = cq.scaling_points(setup_ids=scope_setup_ids(), metric=throughput(), param="rooms")
    xs = {(p.run.build, p.x) for p in chart.points}
    assert ("2.4.20", 5.0) in xs and ("2.5.25", 20.0) in xs
    assert chart.param == "rooms"


def test_kernel_time_scales_the_scheduler_share_to_all_ticks(data):
    chart = cq.kernel_time_points(setup_ids=[base_setup_id()])
    point = next(p for p in chart.points if p.run.kernel == "2.4.20")
    busy = (20000 - 8000) / 20000 * 100
    assert point.kernel_pct == pytest.approx(busy)
    assert point.scheduler_pct == pytest.approx(2000 / 20000 * 100)
    assert [p.run.kernel for p in chart.points] == ["2.3.99-pre3", "2.4.20", "2.5.25", "2.5.25"]


def test_profiles_are_the_first_profiled_runs_in_kernel_order(data):
    every = cq.kernel_profiles(setup_ids=scope_setup_ids())
    assert len(every) > 2
    first_two = cq.kernel_profiles(setup_ids=scope_setup_ids(), limit_runs=2)
    assert first_two == every[:2]


def test_profiles_use_the_profilers_total(data):
    profiles = cq.kernel_profiles(setup_ids=[base_setup_id()])
    first = next(p for p in profiles if p.run.kernel == "2.4.20")
    assert first.total == pytest.approx(20000)
    assert dict(first.ticks)["schedule"] == 2000


def test_wakeup_rows_read_nice_values_and_counters(data):
    rows, skipped = cq.wakeup_rows(setup_ids=scope_setup_ids())
    assert len(rows) == len(WAKEUPS)
    assert skipped > 0  # the series and scaling runs have no wakeup counters
    row = next(r for r in rows if (r.server_nice, r.client_nice, r.threshold) == (0, -19, 0))
    assert (row.throughput, row.wakeup_calls, row.preempt_pct) == (13881, 4_420_000, 86.6)


def test_vmstat_runs_keep_the_asked_order_and_header_order(data):
    a, b = data.run("2.5.25"), data.run("2.4.20")
    runs = cq.vmstat_runs(run_ids=[a.pk, b.pk])
    assert [r.run.run_id for r in runs] == [a.pk, b.pk]
    assert runs[0].columns[:4] == ("r", "b", "in", "cs")  # procps groups: procs, system, …
    assert runs[0].first_is_since_boot and len(runs[0].rows) == 7


def test_compare_values_pool_each_side(data):
    base, new = data.run("2.4.20"), data.run("2.5.25")
    found = {m.name: m for m in cq.compare_values(base_ids=[base.pk], new_ids=[new.pk])}
    assert found["throughput"].base == SERIES[0][3]
    assert found["throughput"].new == SERIES[1][3][1:]  # warm-up left out
    assert found["throughput"].better == "higher"


def test_run_baseline_is_stock_of_the_same_kernel_or_the_previous_kernel(data):
    patched, stock = data.run("2.5.25", "pri_preempt"), data.run("2.5.25")
    assert cq.run_baseline_id(run=patched) == stock.pk
    assert cq.run_baseline_id(run=stock) == data.run("2.4.20").pk
    assert cq.run_baseline_id(run=data.run("2.3.99-pre3")) is None


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

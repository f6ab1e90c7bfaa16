"""The across-kernels series (dashboards/chart_queries/kernel_series.py): a setup's metric
as a point a run in kernel order, each the mean and sd of its kept trials (warm-ups left
out) with its run's label, read in two queries; the same points, labels and kernels as a
read of a dict a row, however awkward the setup's params."""

from __future__ import annotations

from statistics import fmean, stdev

import pytest

from dashboards import chart_queries as cq
from perfdb.models import Metric, Result, Setup
from tests.dashboards.data import SERIES, base_setup, throughput

pytestmark = pytest.mark.django_db


def test_series_points_are_in_kernel_order_with_warmups_left_out(data, django_assert_num_queries):
    metric, setup_id = throughput(), base_setup().pk
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
    base_id = base_setup().pk
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

"""The scope charts' selectors (dashboards/chart_queries/charts.py) over the dashboard data:
scaling points take x from the parameter, kernel time scales the scheduler's share to all
ticks, profiles are the first profiled runs in kernel order with the profiler's total, and
wakeup rows read the nice values and counters; none makes more queries as runs are added."""

from __future__ import annotations

import pytest

from dashboards import chart_queries as cq
from tests.dashboards.chart_queries.query_counts import assert_query_counts, load_with_copies
from tests.dashboards.data import WAKEUPS, base_setup, setup_ids, throughput

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("extra_copies", [0, 2])
def test_query_counts_do_not_grow_with_runs(tmp_path, extra_copies, django_assert_num_queries):
    """Loading more data must not add queries (no N+1)."""
    load_with_copies(tmp_path, extra_copies)
    ids, metric = setup_ids(), throughput()
    calls = {
        # the values, then each run's keys once (not with every value)
        "scaling": (lambda: cq.scaling_points(setup_ids=ids, metric=metric, param="rooms"), 2),
        # the values, then the keys of the runs that have them
        "kernel_time": (lambda: cq.kernel_time_points(setup_ids=ids), 2),
        # the runs drawn, then only their profile entries
        "profiles": (lambda: cq.kernel_profiles(setup_ids=ids), 2),
        # the values, then the runs' keys
        "wakeups": (lambda: cq.wakeup_rows(setup_ids=ids), 2),
    }
    assert_query_counts(django_assert_num_queries, calls)


def test_scaling_points_take_x_from_the_parameter(data):
    chart = cq.scaling_points(setup_ids=setup_ids(), metric=throughput(), param="rooms")
    xs = {(p.run.build, p.x) for p in chart.points}
    assert ("2.4.20", 5.0) in xs and ("2.5.25", 20.0) in xs
    assert chart.param == "rooms"


def test_kernel_time_scales_the_scheduler_share_to_all_ticks(data):
    chart = cq.kernel_time_points(setup_ids=[base_setup().pk])
    point = next(p for p in chart.points if p.run.kernel == "2.4.20")
    busy = (20000 - 8000) / 20000 * 100
    assert point.kernel_pct == pytest.approx(busy)
    assert point.scheduler_pct == pytest.approx(2000 / 20000 * 100)
    assert [p.run.kernel for p in chart.points] == ["2.3.99-pre3", "2.4.20", "2.5.25", "2.5.25"]


def test_profiles_are_the_first_profiled_runs_in_kernel_order(data):
    every = cq.kernel_profiles(setup_ids=setup_ids())
    assert len(every) > 2
    first_two = cq.kernel_profiles(setup_ids=setup_ids(), limit_runs=2)
    assert first_two == every[:2]


def test_profiles_use_the_profilers_total(data):
    profiles = cq.kernel_profiles(setup_ids=[base_setup().pk])
    first = next(p for p in profiles if p.run.kernel == "2.4.20")
    assert first.total == pytest.approx(20000)
    assert dict(first.ticks)["schedule"] == 2000


def test_wakeup_rows_read_nice_values_and_counters(data):
    rows, skipped = cq.wakeup_rows(setup_ids=setup_ids())
    assert len(rows) == len(WAKEUPS)
    assert skipped > 0  # the series and scaling runs have no wakeup counters
    row = next(r for r in rows if (r.server_nice, r.client_nice, r.threshold) == (0, -19, 0))
    assert (row.throughput, row.wakeup_calls, row.preempt_pct) == (13881, 4_420_000, 86.6)

"""The overview's reads (dashboards/chart_queries/overview.py): a run's baseline is stock of
its kernel when it is patched, else the previous kernel's, else none; the scopes with runs
and their totals are one query each, however many runs there are."""

from __future__ import annotations

import pytest

from dashboards import chart_queries as cq
from dashboards.chart_queries import overview
from tests.dashboards.chart_queries.query_counts import assert_query_counts, load_with_copies

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("extra_copies", [0, 2])
def test_query_counts_do_not_grow_with_runs(tmp_path, extra_copies, django_assert_num_queries):
    """Loading more data must not add queries (no N+1)."""
    load_with_copies(tmp_path, extra_copies)
    calls = {
        # one query, with jit off for it inside a savepoint (the test's transaction)
        "scopes": (lambda: overview.scopes_with_runs(needs=()), 4),
        "totals": (lambda: overview.scope_totals(None), 1),
    }
    assert_query_counts(django_assert_num_queries, calls)


def test_run_baseline_is_stock_of_the_same_kernel_or_the_previous_kernel(data):
    patched, stock = data.run("2.5.25", "pri_preempt"), data.run("2.5.25")
    assert cq.run_baseline_id(run=patched) == stock.pk
    assert cq.run_baseline_id(run=stock) == data.run("2.4.20").pk
    assert cq.run_baseline_id(run=data.run("2.3.99-pre3")) is None

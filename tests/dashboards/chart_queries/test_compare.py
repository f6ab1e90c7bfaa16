"""The compare page's reads (dashboards/chart_queries/compare.py): each side's trials pooled
per metric with the warm-up left out and the metric's better direction, and the runs' keys;
neither makes more queries as runs are added."""

from __future__ import annotations

import pytest

from dashboards import chart_queries as cq
from perfdb.models import Run
from tests.dashboards.chart_queries.query_counts import assert_query_counts, load_with_copies
from tests.dashboards.data import SERIES

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("extra_copies", [0, 2])
def test_query_counts_do_not_grow_with_runs(tmp_path, extra_copies, django_assert_num_queries):
    """Loading more data must not add queries (no N+1)."""
    load_with_copies(tmp_path, extra_copies)
    runs = list(Run.objects.values_list("id", flat=True))
    calls = {
        "run_infos": (lambda: cq.run_infos(run_ids=runs), 1),
        "compare": (lambda: cq.compare_values(base_ids=runs[:3], new_ids=runs[3:]), 2),
    }
    assert_query_counts(django_assert_num_queries, calls)


def test_compare_values_pool_each_side(data):
    base, new = data.run("2.4.20"), data.run("2.5.25")
    found = {m.name: m for m in cq.compare_values(base_ids=[base.pk], new_ids=[new.pk])}
    assert found["throughput"].base == SERIES[0][3]
    assert found["throughput"].new == SERIES[1][3][1:]  # warm-up left out
    assert found["throughput"].better == "higher"

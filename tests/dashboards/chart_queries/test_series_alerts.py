"""The across-kernels page's alert reads (dashboards/chart_queries/series_alerts.py): a
series' alerts as marks, and the newest open regression a page opens on. Query counts pinned."""

from __future__ import annotations

import pytest

from dashboards import chart_queries as cq
from perfdb.models import Metric
from tests.dashboards.data import load
from tests.factories import make_alert

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(tmp_path):
    return load(tmp_path)


def test_a_series_alerts_come_as_marks_oldest_first_in_one_query(data, django_assert_num_queries):
    throughput = Metric.objects.get(name="throughput")
    run = data.run("2.5.25")
    first = make_alert(run, throughput, status="fixed")
    second = make_alert(data.run("2.5.25", "pri_preempt"), throughput, "pending", "improvement", 8)
    with django_assert_num_queries(1):
        found = cq.series_alert_marks(setup_id=run.setup_id, metric_id=throughput.pk)
    assert [(m.alert_id, m.run_id, m.status, m.direction) for m in found.marks] == [
        (first.pk, run.pk, "fixed", "regression"),
        (second.pk, second.candidate_run_id, "pending", "improvement"),
    ]
    assert found.marks[0].url == f"/alerts/{first.pk}/"
    assert found.marks[1].change_pct == 8
    assert found.metric == {
        "id": throughput.pk,
        "name": throughput.name,
        "unit": throughput.unit,
        "better": throughput.better,
    }


def test_a_series_without_alerts_has_no_metric_and_no_marks(data, django_assert_num_queries):
    throughput = Metric.objects.get(name="throughput")
    other = make_alert(data.run("2.4.20"), throughput)
    with django_assert_num_queries(1):
        found = cq.series_alert_marks(setup_id=other.setup_id + 1000, metric_id=throughput.pk)
    assert found == cq.SeriesAlerts(None, ())


def test_the_newest_open_regression_wins_and_triaged_or_improvements_do_not(
    data, django_assert_num_queries
):
    throughput = Metric.objects.get(name="throughput")
    older = make_alert(data.run("2.4.20"), throughput)
    newer = make_alert(data.run("2.5.25", rooms=20), throughput, status="acknowledged")
    make_alert(data.run("2.5.25", rooms=5), throughput, status="invalid")
    make_alert(data.run("2.4.20", rooms=5), throughput, direction="improvement")
    with django_assert_num_queries(1):
        assert cq.open_regression_series() == (newer.setup_id, throughput.pk)
    setup = older.setup
    scope = (setup.workload_id, setup.hardware_id, setup.mode)
    assert cq.open_regression_series(scope=scope) == (newer.setup_id, throughput.pk)
    newer.status = "fixed"
    newer.save()
    assert cq.open_regression_series(scope=scope) == (older.setup_id, throughput.pk)
    assert cq.open_regression_series(scope=(setup.workload_id, setup.hardware_id, "XX")) is None

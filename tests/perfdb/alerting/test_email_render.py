"""The alert email's subject names the regression the data is surest of, and the rest of
the upload's builds by count."""

from __future__ import annotations

import pytest

from perfdb.alerting.email_render import headline, render
from perfdb.models import Alert
from tests.factories import AlertFactory, MetricFactory, RunFactory

pytestmark = pytest.mark.django_db


def sysbench_alerts() -> list[Alert]:
    """sysbench's latency moved 25 % at p 1e-6; its fairness spread 433 % at p 0.003."""
    run = RunFactory(kernel__version="6.12.0-rc2", setup__workload__name="sysbench-cpu")
    latency = MetricFactory(name="latency_avg_ms", unit="ms", better="lower")
    fairness = MetricFactory(name="fairness_time_stddev_s", unit="s", better="lower")
    return [
        AlertFactory(candidate_run=run, metric=fairness, change_pct=433.0, p_value=0.003),
        AlertFactory(candidate_run=run, metric=latency, change_pct=25.0, p_value=1e-6),
    ]


def test_the_subject_leads_with_the_surest_regression_not_the_largest_move():
    alerts = sysbench_alerts()
    assert headline(alerts).metric.name == "latency_avg_ms"
    subject, text, _ = render(alerts, heading="New regressions")
    assert subject == "[perfdb] 2 regressions: sysbench-cpu 6.12.0-rc2 +25.0% latency_avg_ms"
    assert "fairness_time_stddev_s" in text and "+433.0%" in text and "+25.0%" in text


def test_a_single_value_leads_only_when_nothing_was_tested():
    alerts = sysbench_alerts()
    untested = AlertFactory(
        candidate_run=alerts[0].candidate_run,
        metric=MetricFactory(name="events_per_s", unit="1/s"),
        change_pct=-60.0,
        p_value=None,
    )
    assert headline([*alerts, untested]).metric.name == "latency_avg_ms"
    assert headline([untested]) == untested


def test_an_improvement_never_leads_a_regression_email():
    (fairness, latency) = sysbench_alerts()
    better = AlertFactory(
        candidate_run=latency.candidate_run,
        metric=MetricFactory(name="latency_max_ms", unit="ms", better="lower"),
        change_pct=-30.0,
        p_value=1e-9,
        direction=Alert.Direction.IMPROVEMENT,
    )
    assert headline([better, fairness]) == fairness


def test_other_builds_are_counted_in_the_subject():
    alerts = sysbench_alerts()
    other = AlertFactory(candidate_run=RunFactory(kernel__version="6.12.0-rc3"), p_value=0.01)
    subject, _, _ = render([*alerts, other], heading="New regressions")
    assert subject.endswith("6.12.0-rc2 +25.0% latency_avg_ms (and 1 other build)")

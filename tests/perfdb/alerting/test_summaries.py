"""Alert summaries: alerts grouped by culprit build, their triage, report and the overview's
reads, on data through the real ingest pipeline and regression check."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from perfdb.alerting import summaries
from perfdb.alerting.email_render import headline
from perfdb.alerting.report import report_text
from perfdb.models import Alert, AlertEvent
from tests.factories import AlertFactory, MetricFactory, ResultFactory, RunFactory, UploadFactory
from tests.perfdb.alerting.builds import o1_regression, upload_builds

pytestmark = pytest.mark.django_db


def pending_on(alert: Alert, change_pct: float = -4.0) -> Alert:
    """A pending move on the same culprit run (as the step scan leaves one: not confirmed)."""
    return AlertFactory(
        metric=alert.metric,
        candidate_run=alert.candidate_run,
        upload=alert.upload,
        change_pct=change_pct,
        confidence=0.9,
        method="step",
        status=Alert.Status.PENDING,
    )


def test_one_summary_per_culprit_build_surest_first(tmp_path):
    upload = o1_regression(tmp_path)
    page, found = summaries.summaries_page()
    (summary,) = found
    assert summary.build == "2.4.20+O(1)" and summary.upload == upload
    assert summary.setups == 2 and summary.statuses == "4 untriaged"
    surest = [a.p_value for a in summary.alerts]
    assert None not in surest and surest == sorted(surest) and len(surest) == 4
    assert summary.worst == summary.alerts[0]


def test_the_surest_regression_heads_the_summary_its_email_and_its_report():
    """sysbench on a loaded machine: the fairness spread moved 806 % at p 0.003, events/s
    -41.6 % at p 3e-4 and latency +76 % at p 1.5e-6; an improvement at p 1e-9 never leads."""
    run = RunFactory(kernel__version="6.8.0-41-generic", setup__workload__name="sysbench")
    base = RunFactory(kernel__version="6.8.0-40-generic", setup=run.setup)
    for name, change, p, direction in [
        ("fairness_events_stddev", 805.7, 0.003, "regression"),
        ("events_per_s", -41.6, 3e-4, "regression"),
        ("latency_avg_ms", 76.3, 1.5e-6, "regression"),
        ("latency_min_ms", -10.0, 1e-9, "improvement"),
    ]:
        metric = MetricFactory(name=name)
        alert = AlertFactory(
            candidate_run=run, metric=metric, change_pct=change, p_value=p, direction=direction
        )
        alert.baseline_runs.add(base)
        ResultFactory(run=base, metric=metric, value=100.0)
        ResultFactory(run=run, metric=metric, value=100.0 + change)
    (summary,) = summaries.summaries_page()[1]
    assert [a.metric.name for a in summary.alerts] == [
        "latency_avg_ms",
        "events_per_s",
        "fairness_events_stddev",
        "latency_min_ms",
    ]
    assert summary.worst.metric.name == "latency_avg_ms"
    assert headline(summary.alerts) == summary.worst
    text = report_text(summaries.report(summary=summary, site="", summary_url=""))
    assert text.startswith("perfdb noticed a 76.3% regression of sysbench.latency_avg_ms")


def test_an_improvement_only_build_is_listed_apart(tmp_path):
    o1_regression(tmp_path)
    upload_builds(tmp_path, "fast.tar.gz", [("2.4.20", '["fast"]', (15000, 15100, 15050), 10)])
    _, regressions = summaries.summaries_page(kind="regressions")
    _, improvements = summaries.summaries_page(kind="improvements")
    assert [s.build for s in regressions] == ["2.4.20+O(1)"]
    assert [s.build for s in improvements] == ["2.4.20+fast"]
    assert all(a.direction == "improvement" for a in improvements[0].alerts)


def test_a_page_of_summaries_is_three_queries(tmp_path, django_assert_num_queries):
    o1_regression(tmp_path)
    upload_builds(tmp_path, "fast.tar.gz", [("2.4.20", '["fast"]', (15000, 15100, 15050), 10)])
    with django_assert_num_queries(3):  # count, the page's keys, the page's alerts
        _, found = summaries.summaries_page(kind="regressions")
        assert [a.setup.workload.name for s in found for a in s.alerts]


def test_pending_moves_are_shown_last_and_left_by_triage(tmp_path, staff):
    o1_regression(tmp_path)
    pending = pending_on(Alert.objects.filter(metric__name="throughput").first())
    summary = summaries.summary_get(key=summaries.key_of(pending))
    assert summary is not None and summary.alerts[-1] == pending
    assert summary.pending == [pending] and len(summary.confirmed) == 4
    assert summaries.summary_triage(summary=summary, user=staff, status="acknowledged") == 4
    assert set(Alert.objects.exclude(pk=pending.pk).values_list("status", flat=True)) == {
        "acknowledged"
    }
    pending.refresh_from_db()
    assert pending.status == "pending"
    assert AlertEvent.objects.filter(field="status", new="acknowledged", user=staff).count() == 4


def test_summary_triage_has_single_triage_rules(tmp_path, user):
    o1_regression(tmp_path)
    (summary,) = summaries.summaries_page()[1]
    with pytest.raises(PermissionDenied):
        summaries.summary_triage(summary=summary, user=user, status="invalid")
    assert not Alert.objects.filter(status="invalid").exists()


def test_cleared_alerts_belong_to_no_summary(tmp_path):
    o1_regression(tmp_path)
    Alert.objects.update(status=Alert.Status.CLEARED)
    assert summaries.summaries_page()[1] == []


def test_the_report_shows_each_builds_means_and_the_alerts_change(
    tmp_path, django_assert_num_queries
):
    o1_regression(tmp_path)
    summary = summaries.summary_get(key=summaries.key_of(Alert.objects.first()))
    assert summary is not None
    throughput = Alert.objects.get(metric__name="throughput", setup__params__rooms=10)
    with django_assert_num_queries(2):  # the runs' values, stated spreads
        found = summaries.report(summary=summary, site="http://perfdb", summary_url="http://s/")
    text = report_text(found)
    # (13000, 13100, 12950) against (11000, 11100, 11050): spreads under 2 %, so blank.
    change = f"{throughput.change_pct:+10.1f}%"
    line = f"     13017      {change}      11050        VolanoMark.throughput (msg/s)"
    assert line in text.splitlines()
    assert "workload/hardware/mode/messages/rooms:\n  VolanoMark 2.1.2/P8/UP/1000/10\n" in text
    assert f"compare: http://perfdb/compare/?base={throughput.baseline_runs.get().pk}&new=" in text


def test_pending_moves_are_reported_apart_with_what_confirms_them(tmp_path):
    o1_regression(tmp_path)
    pending = pending_on(Alert.objects.filter(metric__name="throughput").first(), -4.5)
    summary = summaries.summary_get(key=summaries.key_of(pending))
    assert summary is not None
    text = report_text(summaries.report(summary=summary, site="", summary_url=""))
    after = text[text.index("not confirmed yet:") :]
    assert after.splitlines()[1] == "     -4.5%  VolanoMark.throughput (msg/s)"
    assert pending.state_note in after


def test_open_regressions_for_the_overview_in_one_query(tmp_path, django_assert_num_queries):
    o1_regression(tmp_path)
    pending_on(Alert.objects.filter(metric__name="throughput").first())
    # A newer build whose moves are all pending comes after the confirmed one.
    upload_builds(tmp_path, "slow.tar.gz", [("2.4.20", '["slow"]', (10000, 10100, 10050), 10)])
    Alert.objects.filter(candidate_run__patch_set__name="slow").update(status="pending")
    with django_assert_num_queries(1):
        found = summaries.summaries_open()
        builds = [(s.build, bool(s.confirmed)) for s in found]
        assert [a.metric.name for s in found for a in s.alerts]
    assert builds == [("2.4.20+O(1)", True), ("2.4.20+slow", False)]
    Alert.objects.exclude(status="pending").update(status="fixed")
    found = summaries.summaries_open()
    assert [(s.build, len(s.alerts)) for s in found] == [("2.4.20+slow", 2), ("2.4.20+O(1)", 1)]


def test_an_uploads_outcome_counts_the_steps_it_confirmed_and_waits_for_its_check():
    """The overview's outcome of an upload is its page's: an earlier kernel's step the
    upload confirmed counts for it, and while its check is owed it says so."""
    earlier = UploadFactory(status="done", filename="rc1.tar.gz")
    confirming = UploadFactory(status="done", filename="rc2.tar.gz")
    owed = UploadFactory(status="done", filename="rc3.tar.gz", detection_due_at=timezone.now())
    AlertFactory(upload=earlier, notify_upload=confirming, candidate_run__upload=earlier)
    outcomes = {o.upload.filename: o for o in summaries.uploads_with_outcome()}
    assert outcomes["rc2.tar.gz"].regressions == outcomes["rc1.tar.gz"].regressions == 1
    assert [f for f, o in outcomes.items() if o.checking] == [owed.filename]
    assert len(summaries.upload_moves(confirming).regressions) == 1
    assert summaries.upload_moves(owed).checking


def test_uploads_with_their_outcome_in_one_query(tmp_path, django_assert_num_queries):
    upload = o1_regression(tmp_path)
    pending_on(Alert.objects.filter(metric__name="throughput").first())
    with django_assert_num_queries(1):
        outcomes = {o.upload.filename: o for o in summaries.uploads_with_outcome()}
    assert (outcomes["o1.tar.gz"].regressions, outcomes["o1.tar.gz"].pending) == (4, 1)
    assert outcomes["o1.tar.gz"].upload == upload
    assert (outcomes["stock.tar.gz"].regressions, outcomes["stock.tar.gz"].improvements) == (0, 0)

"""The overview (dashboards/pages/overview.py): the latest runs, the uploads and the open
alerts, a patch set's regression named by its culprit build, and no workload without runs,
over data stored by the real ingest pipeline."""

from __future__ import annotations

import pytest

from perfdb.alerting.email_render import render
from perfdb.models import Alert, Hardware, Metric, Run
from tests.factories import AlertFactory, SetupFactory

pytestmark = pytest.mark.django_db


def test_overview_lists_latest_runs_uploads_and_open_alerts(client, data):
    run = data.run("2.5.25")
    metric = Metric.objects.get(name="throughput")
    for status in ("acknowledged", "fixed"):
        AlertFactory(
            metric=metric,
            candidate_run=run,
            change_pct=-12.5 if status == "acknowledged" else 3.0,
            method=f"welch-{status}",
            status=status,
        )
    html = client.get("/").content.decode()
    assert "-12.5 %" in html and "acknowledged" in html
    assert "3.0 %" not in html  # fixed alerts are not open
    latest = Run.objects.get(pk=max(data.upload.run_ids))  # one scope: its newest run
    assert f'href="/kernels/?setup={latest.setup_id}"' in html and "dash.tar.gz" in html
    assert f'href="/runs/{latest.pk}/">#{latest.pk}</a>' in html


def test_overview_without_alerts_says_where_they_will_show(client, data):
    assert "No open regressions" in client.get("/").content.decode()


def test_a_regression_of_a_patch_names_the_patch_on_the_overview_and_in_the_subject(client, data):
    patched = data.run("2.5.25", "pri_preempt")
    alert = AlertFactory(
        candidate_run=patched, upload=patched.upload, change_pct=-20.0, p_value=0.01, method="welch"
    )
    html = client.get("/").content.decode()
    regressed = html.split('id="regressed"', 1)[1].split("</section>", 1)[0]
    assert "<strong>2.5.25+pri_preempt</strong>" in regressed  # the culprit build, patch named
    assert f'href="/alerts/{alert.pk}/"' in regressed
    subject, text, _ = render([Alert.objects.get(pk=alert.pk)], heading="New regressions")
    assert "VolanoMark 2.5.25+pri_preempt -20.0% throughput" in subject


def test_a_workload_without_runs_is_not_listed(client, data):
    SetupFactory(workload__name="probe-experiment", hardware=Hardware.objects.get(name="P8"))
    html = client.get("/").content.decode()
    assert "probe-experiment" not in html
    assert "VolanoMark" in html

"""Reference-kernel control: an alert raised while the reference build moved the same way is
shared with the reference and held out of email until triaged."""

from __future__ import annotations

import pytest

from perfdb.alerting.notify import emailable_alerts
from perfdb.models import Alert, ReferenceHold, Result
from tests.dashboards.evidence_data import (
    reference_candidate,
    reference_history,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def quiet(monkeypatch):
    from ingest import queue
    from perfdb.alerting import queue as alerting_queue

    monkeypatch.setattr(queue, "ingest_upload", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "regressions_check", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "notify_upload", lambda **k: None)


def test_alert_held_when_the_reference_moved_with_it(quiet, tmp_path, client):
    reference_history(tmp_path)
    alert = reference_candidate(tmp_path, (90.0, 90.4))
    hold = ReferenceHold.objects.get(alert=alert)
    assert hold.build == "2.4.20" and hold.shift_pct < -5
    assert alert not in list(emailable_alerts())  # held out of email while untriaged
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    assert 'id="reference-hold"' in page and "Shared with the reference 2.4.20" in page
    assert 'id="reference-figure"' in page
    api = client.get("/api/references/").json()
    assert api["references"][0]["hardware"] == "S8"
    assert api["held_alerts"][0]["alert"] == alert.pk and api["held_alerts"][0]["held"]
    assert f"/api/alerts/{alert.pk}/reference/?format=csv" in page
    _reference_export_matches_the_stored_runs(client, alert, hold)
    alert.status = Alert.Status.ACKNOWLEDGED
    alert.save()
    assert alert in list(emailable_alerts())


def test_alert_not_held_when_the_reference_is_steady(quiet, tmp_path):
    reference_history(tmp_path)
    alert = reference_candidate(tmp_path, (100.1, 100.4))
    assert not ReferenceHold.objects.filter(alert=alert).exists()
    assert alert in list(emailable_alerts())


def _reference_export_matches_the_stored_runs(client, alert, hold):
    """The chart's data, as JSON and CSV: one row per reference run, each the mean of its
    stored trials with their count, the recent ones marked."""
    data = client.get(f"/api/alerts/{alert.pk}/reference/").json()
    assert data["reference"] == "2.4.20" and data["held"] and data["shift_pct"] == hold.shift_pct
    stored: dict[int, list[float]] = {}
    for run_id, value in Result.objects.filter(
        setup_id=hold.reference_setup_id, metric_id=hold.metric_id
    ).values_list("run_id", "value"):
        stored.setdefault(run_id, []).append(value)
    assert [r["run"] for r in data["runs"]] == sorted(stored)
    for row in data["runs"]:
        assert row["trials"] == len(stored[row["run"]])
        assert row["mean"] == pytest.approx(sum(stored[row["run"]]) / row["trials"])
    assert sorted(r["run"] for r in data["runs"] if r["recent"]) == sorted(hold.recent_run_ids)
    csv_text = client.get(f"/api/alerts/{alert.pk}/reference/?format=csv").content.decode()
    lines = csv_text.splitlines()
    assert lines[0] == "run,uploaded,mean,trials,recent"
    assert [int(line.split(",")[0]) for line in lines[1:]] == [r["run"] for r in data["runs"]]


def test_reference_export_of_an_alert_without_a_hold_is_404(quiet, tmp_path, client):
    reference_history(tmp_path)
    alert = reference_candidate(tmp_path, (100.1, 100.4))
    answer = client.get(f"/api/alerts/{alert.pk}/reference/")
    assert answer.status_code == 404 and "not held" in answer.json()["detail"]
    csv_answer = client.get(f"/api/alerts/{alert.pk}/reference/?format=csv")
    assert csv_answer.status_code == 404 and "not held" in csv_answer.content.decode()

"""Reference-kernel control: an alert raised while the reference build moved the same way is
shared with the reference and held out of email until triaged."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from perfdb.alerting.notify import emailable_alerts
from perfdb.alerting.regressions import regressions_check_upload
from perfdb.models import Alert, ReferenceBuild, ReferenceHold, Result, Run
from tests.bundles import make_bundle
from tests.dashboards.data import ingest
from tests.dashboards.evidence_data import HEAD, run_toml

pytestmark = pytest.mark.django_db(transaction=True)

REFERENCE_HW = HEAD.replace(
    "mhz = 900\n", 'mhz = 900\nreference = { kernel = "2.4.20", patches = [] }\n'
)


def _bundle(tmp_path, name, runs):
    return ingest(make_bundle(tmp_path / name, {"manifest.toml": REFERENCE_HW + "".join(runs)}))


def _ref(tops):
    return run_toml("2.4.20", (), tops, workload="refbench")


@pytest.fixture
def quiet(monkeypatch):
    from ingest import queue
    from perfdb.alerting import queue as alerting_queue

    monkeypatch.setattr(queue, "ingest_upload", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "regressions_check", lambda **k: None)
    monkeypatch.setattr(alerting_queue, "notify_upload", lambda **k: None)


def _series(upload):
    return sorted(
        set(Result.objects.filter(run__upload=upload).values_list("setup_id", "metric_id"))
    )


def _history(tmp_path):
    old = _bundle(
        tmp_path,
        "old.tar.gz",
        [
            _ref((100.0, 100.5)),
            _ref((99.5, 100.0)),
            _ref((100.2, 100.8)),
            run_toml("2.5.66", (), (100.0, 101.0, 99.0, 100.5)),
        ],
    )
    Run.objects.filter(upload=old).update(created_at=timezone.now() - timedelta(days=30))
    assert ReferenceBuild.objects.filter(hardware__name="S8", kernel__version="2.4.20").exists()


def _candidate(tmp_path, ref_tops):
    new = _bundle(
        tmp_path,
        "new.tar.gz",
        [_ref(ref_tops), run_toml("2.5.66", ("p1",), (90.0, 91.0, 89.5, 90.5))],
    )
    regressions_check_upload(upload_id=new.pk, series=_series(new))
    return Alert.objects.get(candidate_run__patch_set__name="p1", direction="regression")


def test_alert_held_when_the_reference_moved_with_it(quiet, tmp_path, client):
    _history(tmp_path)
    alert = _candidate(tmp_path, (90.0, 90.4))
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
    _history(tmp_path)
    alert = _candidate(tmp_path, (100.1, 100.4))
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
    _history(tmp_path)
    alert = _candidate(tmp_path, (100.1, 100.4))
    answer = client.get(f"/api/alerts/{alert.pk}/reference/")
    assert answer.status_code == 404 and "not held" in answer.json()["detail"]
    csv_answer = client.get(f"/api/alerts/{alert.pk}/reference/?format=csv")
    assert csv_answer.status_code == 404 and "not held" in csv_answer.content.decode()

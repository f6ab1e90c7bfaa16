"""/api/thresholds/: the detector's settings per workload and metric, read by anyone,
written by staff with the checks the model and the admin make, and used by the next check."""

from __future__ import annotations

import pytest

from perfdb.models import Alert, Metric, Threshold, Workload
from tests.perfdb.alerting.builds import check, ingest_runs

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_auth(staff):
    from perfdb.operations.accounts import token_get

    return {"HTTP_AUTHORIZATION": f"Token {token_get(user=staff)}"}


@pytest.fixture
def pair(tmp_path):
    """VolanoMark's throughput, from one stored stock run."""
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
    return Workload.objects.get(name="VolanoMark"), Metric.objects.get(name="throughput")


def post(client, body, auth):
    return client.post("/api/thresholds/", body, content_type="application/json", **auth)


def test_staff_set_a_threshold_and_anyone_reads_it(client, pair, staff_auth):
    workload, metric = pair
    made = post(
        client, {"workload": workload.pk, "metric": metric.pk, "threshold_pct": 7.5}, staff_auth
    )
    assert made.status_code == 201, made.content
    row = made.json()
    assert row["workload_name"] == "VolanoMark" and row["metric_name"] == "throughput"
    assert row["threshold_pct"] == 7.5 and row["typical_noise_pct"] is None
    assert Threshold.objects.get(pk=row["id"]).threshold_pct == 7.5
    listed = client.get(f"/api/thresholds/?workload={workload.pk}").json()
    assert [r["id"] for r in listed["results"]] == [row["id"]]
    assert client.get(f"/api/thresholds/?metric={metric.pk + 1000}").json()["count"] == 0
    assert client.get(f"/api/thresholds/{row['id']}/").json() == row


def test_only_staff_write(client, pair, token):
    workload, metric = pair
    body = {"workload": workload.pk, "metric": metric.pk, "threshold_pct": 5}
    assert post(client, body, {}).status_code == 401
    assert post(client, body, {"HTTP_AUTHORIZATION": f"Token {token}"}).status_code == 403
    assert not Threshold.objects.exists()


@pytest.mark.parametrize(
    "value",
    [0, -1, 0.0, "5", True, 1e7],
    ids=["zero", "negative", "zero-float", "string", "bool", "over-the-maximum"],
)
def test_a_threshold_the_detector_cannot_use_is_a_400_naming_it(client, pair, staff_auth, value):
    workload, metric = pair
    for field in ("threshold_pct", "typical_noise_pct"):
        body = {"workload": workload.pk, "metric": metric.pk, field: value}
        response = post(client, body, staff_auth)
        assert response.status_code == 400, (field, value, response.content)
        assert response.json()["param"] == field
    assert not Threshold.objects.exists()


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_numbers_that_are_not_finite_never_reach_the_row(client, pair, staff_auth, text):
    # 1e400 is valid JSON that Python reads as infinity; NaN and Infinity are not JSON.
    workload, metric = pair
    body = f'{{"workload": {workload.pk}, "metric": {metric.pk}, "threshold_pct": {text}}}'
    response = client.post("/api/thresholds/", body, content_type="application/json", **staff_auth)
    assert response.status_code == 400, response.content
    assert not Threshold.objects.exists()


@pytest.mark.parametrize("workload", [2**63, 2**70, 0, "1", None, 1.0])
def test_a_malformed_id_is_a_400(client, pair, staff_auth, workload):
    _, metric = pair
    body = {"workload": workload, "metric": metric.pk, "threshold_pct": 5}
    response = post(client, body, staff_auth)
    assert response.status_code == 400 and response.json()["param"] == "workload"


def test_an_id_of_nothing_is_a_404_naming_it(client, pair, staff_auth):
    workload, _ = pair
    body = {"workload": workload.pk, "metric": 999_999, "threshold_pct": 5}
    response = post(client, body, staff_auth)
    assert response.status_code == 404 and response.json() == {"detail": "no metric 999999"}


def test_one_row_per_workload_and_metric(client, pair, staff_auth):
    workload, metric = pair
    body = {"workload": workload.pk, "metric": metric.pk, "threshold_pct": 5}
    assert post(client, body, staff_auth).status_code == 201
    again = post(client, {**body, "threshold_pct": 9}, staff_auth)
    first = Threshold.objects.get()
    assert again.status_code == 409
    assert f"PATCH /api/thresholds/{first.pk}/" in again.json()["detail"]
    assert list(Threshold.objects.values_list("threshold_pct", flat=True)) == [5.0]


def test_change_and_remove(client, pair, staff_auth):
    workload, metric = pair
    body = {"workload": workload.pk, "metric": metric.pk, "threshold_pct": 5}
    row = post(client, body, staff_auth).json()
    url = f"/api/thresholds/{row['id']}/"
    patched = client.patch(
        url, {"typical_noise_pct": 1.5}, content_type="application/json", **staff_auth
    )
    assert patched.status_code == 200
    assert (patched.json()["threshold_pct"], patched.json()["typical_noise_pct"]) == (5.0, 1.5)
    bad = client.patch(url, {"threshold_pct": 0}, content_type="application/json", **staff_auth)
    assert bad.status_code == 400 and bad.json()["param"] == "threshold_pct"
    replaced = client.put(
        url,
        {"workload": workload.pk, "metric": metric.pk},
        content_type="application/json",
        **staff_auth,
    )
    assert replaced.status_code == 200
    assert (replaced.json()["threshold_pct"], replaced.json()["typical_noise_pct"]) == (None, None)
    assert client.delete(url, **staff_auth).status_code == 204
    assert client.get(url).status_code == 404
    assert client.get(f"/api/thresholds/{2**70}/").status_code == 404


def test_the_next_check_uses_what_staff_set(client, pair, staff_auth, tmp_path):
    # The O(1) build is 15 % under stock: an alert with the derived threshold, none once staff
    # say only a change over 50 % counts for VolanoMark's throughput.
    workload, metric = pair
    body = {"workload": workload.pk, "metric": metric.pk, "threshold_pct": 50}
    assert post(client, body, staff_auth).status_code == 201
    check(ingest_runs(tmp_path, "b.tar.gz", [("2.4.20", '["O(1)"]', (11000, 11100, 11050))]))
    assert not Alert.objects.filter(metric=metric).exists()
    Threshold.objects.all().delete()
    check(ingest_runs(tmp_path, "c.tar.gz", [("2.4.20", '["O(1)"]', (11010, 11090, 11040))]))
    assert Alert.objects.filter(metric=metric, direction="regression").exists()

"""The API over everything the pages show: catalog, run parts, series, alerts, subscriptions."""

from __future__ import annotations

import csv
import io

import pytest

from perfdb.models import Alert, AlertEvent, Metric, PatchSet, Run, Setup, Subscription
from tests.factories import SetupFactory, SubscriptionFactory
from tests.perfdb.alerting.builds import check, ingest_runs

pytestmark = pytest.mark.django_db


@pytest.fixture
def alert(alert, tmp_path):
    """The conftest's alert, with a stock 2.4.9 uploaded (and checked) after it: an older
    kernel for the lists."""
    check(ingest_runs(tmp_path, "c.tar.gz", [("2.4.9", "[]", (12000, 12100, 12050))]))
    alert.refresh_from_db()
    return alert


@pytest.mark.parametrize(
    "path",
    [
        "/api/kernels/",
        "/api/patches/",
        "/api/patch-sets/",
        "/api/hardware/",
        "/api/workloads/",
        "/api/metrics/",
        "/api/setups/",
        "/api/baselines/",
        "/api/alerts/",
        "/api/thresholds/",
    ],
)
def test_lists_are_paginated_and_open_to_anonymous_readers(client, alert, path):
    body = client.get(path).json()
    assert set(body) >= {"count", "next", "previous", "results"}


def test_kernels_come_in_kernel_order(client, alert):
    versions = [k["version"] for k in client.get("/api/kernels/").json()["results"]]
    assert versions == ["2.4.9", "2.4.20"]  # not text order


def test_filters_and_their_errors(client, alert):
    assert client.get("/api/setups/?workload=VolanoMark").json()["count"] == 1
    assert client.get("/api/setups/?workload=nothing").json()["count"] == 0
    bad = client.get("/api/setups/?mode=XP")
    assert bad.status_code == 400 and bad.json()["param"] == "mode"
    nul = client.get("/api/metrics/?name=a%00b")
    assert nul.status_code == 400 and nul.json()["param"] == "name"
    assert client.get("/api/patch-sets/?patch=O(1)").json()["results"][0]["patches"] == ["O(1)"]


def test_a_setups_run_count_is_its_runs(client, alert):
    """From the summaries PostgreSQL keeps: each setup's runs, 0 for one without."""
    bare = SetupFactory(hardware=Setup.objects.first().hardware, params={"rooms": 999})
    counts = {s["id"]: s["run_count"] for s in client.get("/api/setups/").json()["results"]}
    assert counts.pop(bare.pk) == 0
    assert counts and counts == {pk: Run.objects.filter(setup_id=pk).count() for pk in counts}
    assert client.get(f"/api/setups/{bare.pk}/").json()["run_count"] == 0


def test_run_parts(client, alert):
    run = alert.candidate_run_id
    results = client.get(f"/api/runs/{run}/results/").json()
    throughput = next(r for r in results if r["metric"] == "throughput")
    assert throughput["n"] == 3 and throughput["values"] == [11000.0, 11100.0, 11050.0]
    trials = client.get(f"/api/runs/{run}/trials/").json()["results"]
    assert [t["number"] for t in trials] == [1, 2, 3]
    files = client.get(f"/api/runs/{run}/files/").json()["results"]
    assert files and client.get(files[0]["download"]).status_code == 200
    for part in ("profile", "timeseries", "histograms", "curves"):
        assert client.get(f"/api/runs/{run}/{part}/").json()["count"] == 0
    missing = client.get("/api/runs/999999/profile/")
    assert missing.status_code == 404 and missing.json() == {
        "detail": "No Run matches the given query."
    }


def test_an_unknown_api_url_is_a_json_404(client):
    response = client.get("/api/runs/abc/")
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}


def test_series_as_json_and_csv(client, alert):
    setup = Setup.objects.get()
    metric = Metric.objects.get(name="throughput")
    body = client.get(f"/api/series/?setup={setup.pk}&metric={metric.pk}").json()
    assert body["kernels"] == ["2.4.9", "2.4.20"]
    assert [(p["kernel"], p["patches"]) for p in body["points"]] == [
        ("2.4.9", []),
        ("2.4.20", []),
        ("2.4.20", ["O(1)"]),
    ]
    response = client.get(f"/api/series/?setup={setup.pk}&metric={metric.pk}&format=csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["patches"] for r in rows] == ["stock", "stock", "O(1)"]
    assert float(rows[0]["mean"]) == pytest.approx(12050)
    bad = client.get(f"/api/series/?setup=²&metric={metric.pk}")
    assert bad.status_code == 400 and bad.json()["param"] == "setup"
    assert client.get("/api/series/?setup=999999&metric=1").status_code == 404


def test_series_by_setup_and_metric_name(client, alert):
    """The names the compare page takes (workload/hardware/mode, then k=v to pick among its
    set-ups) and the metric's name (with its unit when two units share it) answer the
    series the ids answer; an unknown or ambiguous one is a 400 naming its parameter."""
    setup = Setup.objects.select_related("workload", "hardware").get()
    metric = Metric.objects.get(name="throughput")
    name = f"{setup.workload.name}/{setup.hardware.name}/{setup.mode}"
    by_id = client.get(f"/api/series/?setup={setup.pk}&metric={metric.pk}").json()
    assert client.get(f"/api/series/?setup={name}&metric=throughput").json() == by_id
    params = ",".join(f"{k}={v}" for k, v in setup.params.items())
    with_unit = f"throughput ({metric.unit})"
    assert client.get(f"/api/series/?setup={name}/{params}&metric={with_unit}").json() == by_id
    for query, param, says in (
        (f"setup={name}&metric=speed", "metric", "no metric 'speed' here"),
        (f"setup={setup.workload.name}/nohw/UP&metric=throughput", "setup", "no set-up"),
        (f"setup={name}/rooms=999&metric=throughput", "setup", "no set-up"),
        ("setup=VolanoMark&metric=throughput", "setup", "workload/hardware/mode"),
    ):
        bad = client.get(f"/api/series/?{query}")
        assert bad.status_code == 400, query
        assert bad.json()["param"] == param and says in bad.json()["error"], bad.json()


def test_scaling_series(client, alert):
    setup = Setup.objects.get()
    metric = Metric.objects.get(name="throughput")
    body = client.get(f"/api/scaling/?setups={setup.pk}&metric={metric.pk}&param=rooms").json()
    assert {p["x"] for p in body["points"]} == {10.0}


def test_staff_triage_one_and_many(client, staff, user, alert):
    url = f"/api/alerts/{alert.pk}/"
    assert client.get(url).json()["status"] == "untriaged"
    assert client.patch(url, {"status": "fixed"}, content_type="application/json").status_code in (
        401,
        403,
    )
    client.force_login(user)
    denied = client.patch(url, {"status": "fixed"}, content_type="application/json")
    assert denied.status_code == 403
    client.force_login(staff)
    body = client.patch(
        url,
        {"status": "investigating", "assignee": "boss", "notes": "bisecting"},
        content_type="application/json",
    ).json()
    assert (body["status"], body["assignee"], body["notes"]) == (
        "investigating",
        "boss",
        "bisecting",
    )
    assert AlertEvent.objects.filter(alert=alert).count() == 3
    bad = client.patch(url, {"status": "closed"}, content_type="application/json")
    assert bad.status_code == 400 and bad.json()["param"] == "status"
    nobody = client.patch(url, {"assignee": "ghost"}, content_type="application/json")
    assert nobody.status_code == 404 and nobody.json() == {"detail": "no active user 'ghost'"}
    assert Alert.objects.get(pk=alert.pk).assignee.username == "boss"
    many = client.post(
        "/api/alerts/triage/",
        {"ids": [alert.pk], "status": "fixed"},
        content_type="application/json",
    )
    assert many.json() == {"updated": 1, "status": "fixed"}
    missing = client.post(
        "/api/alerts/triage/", {"ids": [999999], "status": "fixed"}, content_type="application/json"
    )
    assert missing.status_code == 404 and missing.json() == {"detail": "no alert 999999"}
    open_ids = [a["id"] for a in client.get("/api/alerts/?status=open").json()["results"]]
    assert alert.pk not in open_ids


def test_subscriptions_are_your_own(client, user, staff, token):
    user.email = "lab@example.org"
    user.save()
    SubscriptionFactory(user=staff, email="boss@example.org")
    auth = {"HTTP_AUTHORIZATION": f"Token {token}"}
    assert client.get("/api/subscriptions/").status_code == 401
    made = client.post(
        "/api/subscriptions/",
        {"workload_pattern": "Volano*", "email": "victim@example.org"},
        content_type="application/json",
        **auth,
    )
    assert made.status_code == 201 and made.json()["email"] == "lab@example.org"
    mine = client.get("/api/subscriptions/", **auth).json()
    assert [s["email"] for s in mine["results"]] == ["lab@example.org"]
    theirs = Subscription.objects.get(user=staff)
    assert client.get(f"/api/subscriptions/{theirs.pk}/", **auth).status_code == 404
    assert client.delete(f"/api/subscriptions/{theirs.pk}/", **auth).status_code == 404
    sub = made.json()["id"]
    assert client.delete(f"/api/subscriptions/{sub}/", **auth).status_code == 204


def test_a_user_without_an_address_cannot_subscribe(client, token):
    response = client.post(
        "/api/subscriptions/",
        {"workload_pattern": "*"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Token {token}",
    )
    assert response.status_code == 400 and response.json()["param"] == "email"


def test_the_schema_lists_every_resource(client):
    import yaml

    schema = yaml.safe_load(client.get("/api/schema/").content)
    paths = set(schema["paths"])
    for path in (
        "/api/kernels/",
        "/api/patches/",
        "/api/patch-sets/",
        "/api/hardware/",
        "/api/workloads/",
        "/api/metrics/",
        "/api/setups/",
        "/api/series/",
        "/api/scaling/",
        "/api/baselines/",
        "/api/runs/{run_id}/trials/",
        "/api/runs/{run_id}/results/",
        "/api/runs/{run_id}/profile/",
        "/api/runs/{run_id}/timeseries/",
        "/api/runs/{run_id}/histograms/",
        "/api/runs/{run_id}/curves/",
        "/api/runs/{run_id}/files/",
        "/api/alerts/",
        "/api/alerts/{alert_id}/",
        "/api/alerts/triage/",
        "/api/subscriptions/",
        "/api/subscriptions/{subscription_id}/",
        "/api/thresholds/",
        "/api/thresholds/{threshold_id}/",
    ):
        assert path in paths, path
    errors = schema["paths"]["/api/series/"]["get"]["responses"]
    assert {"200", "400", "429"} <= set(errors)


def test_patch_sets_name_stock_as_empty(client, alert):
    names = {p["name"]: p["patches"] for p in client.get("/api/patch-sets/").json()["results"]}
    assert names[""] == [] and PatchSet.objects.count() == len(names)
    assert Run.objects.count() == 3


def test_no_text_parameter_of_the_schema_admits_a_nul(client):
    """Every reader refuses a NUL (PostgreSQL cannot hold one) with a 400: a pattern that
    admitted one would call that 400 wrong (``\\S`` matches a NUL; ``[^\\s\\x00]`` does not)."""
    import re

    import yaml

    schema = yaml.safe_load(client.get("/api/schema/").content)
    patterns = {
        (path, p["name"]): p["schema"]["pattern"]
        for path, operations in schema["paths"].items()
        for operation in operations.values()
        for p in operation.get("parameters", [])
        if "pattern" in p.get("schema", {})
    }
    assert ("/api/scaling/", "param") in patterns
    admitted = [key for key, pattern in patterns.items() if re.search(pattern, "a\x00b")]
    assert not admitted, admitted

"""The HTTP upload contract (POST/GET /api/uploads/) and reading runs back (/api/runs/)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from ingest.services import upload_ingest
from perfdb.models import Alert, Run, Upload
from tests.bundles import make_bundle, manifest_toml, volano_bundle, volano_log, volano_run
from tests.factories import AlertFactory, RunFactory, UploadFactory

pytestmark = pytest.mark.django_db


def post(client, token, path):
    with open(path, "rb") as f:
        return client.post("/api/uploads/", {"bundle": f}, HTTP_AUTHORIZATION=f"Token {token}")


def test_upload_answers_202_then_reports_done_with_runs(client, token, tmp_path):
    response = post(client, token, volano_bundle(tmp_path / "b.tar.gz"))
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued" and body["url"].endswith(f"/api/uploads/{body['id']}/")
    upload_ingest(upload_id=body["id"])  # what the worker does
    status = client.get(f"/api/uploads/{body['id']}/").json()
    assert status["status"] == "done" and status["error"] is None
    assert status["progress"] == {"files_done": 3, "files_total": 3}
    (run,) = status["runs"]
    assert run["url"].endswith(f"/api/runs/{run['id']}/")
    assert status["check"] == {"state": "running"}  # its regression check is owed


def test_the_same_bytes_again_answer_200_with_the_first_upload(client, token, tmp_path):
    path = volano_bundle(tmp_path / "b.tar.gz")
    first = post(client, token, path).json()
    upload_ingest(upload_id=first["id"])
    again = post(client, token, path)
    assert again.status_code == 200 and again.json()["id"] == first["id"]
    assert Run.objects.count() == 1


def test_a_failed_upload_says_why(client, token, tmp_path):
    path = make_bundle(tmp_path / "b.tar.gz", {"manifest.toml": "format = 7\n"})
    body = post(client, token, path).json()
    upload_ingest(upload_id=body["id"])
    status = client.get(f"/api/uploads/{body['id']}/").json()
    assert status["status"] == "failed" and "supported: 1, 2" in status["error"]
    assert status["runs"] == []


def test_missing_bundle_field_is_a_400(client, token):
    response = client.post("/api/uploads/", {}, HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 400 and "bundle" in response.json()["error"]


def test_unknown_upload_is_a_404(client):
    assert client.get("/api/uploads/999999/").status_code == 404


@pytest.fixture
def two_runs(tmp_path, token, client):
    files = ", ".join(
        f'{{ path = "t{i}.log", parser = "volanomark", trial = {i} }}' for i in (1, 2, 3)
    )
    manifest = manifest_toml(
        volano_run("2.4.20", files=files, extra='notes = "002 Table 7"'),
        volano_run("2.4.20", patches='["O(1)"]', files='{ path = "p.log", parser = "volanomark" }'),
    )
    path = make_bundle(
        tmp_path / "r.tar.gz",
        {
            "manifest.toml": manifest,
            "t1.log": volano_log(13000),
            "t2.log": volano_log(13400),
            "t3.log": volano_log(13200),
            "p.log": volano_log(11800),
        },
    )
    upload_ingest(upload_id=post(client, token, path).json()["id"])


def test_run_list_filters_and_counts(client, two_runs):
    everything = client.get("/api/runs/").json()
    assert everything["count"] == 2
    stock = client.get("/api/runs/?patches=stock&kernel=2.4.20&mode=UP").json()
    assert stock["count"] == 1 and stock["results"][0]["patches"] == []
    patched = client.get("/api/runs/?patches=O(1)&workload=VolanoMark&hardware=P8").json()
    assert patched["count"] == 1 and patched["results"][0]["patches"] == ["O(1)"]
    assert client.get("/api/runs/?hardware=nothing").json()["count"] == 0


def test_bad_mode_filter_is_a_400(client):
    response = client.get("/api/runs/?mode=NUMA")
    assert response.status_code == 400 and "mode" in response.json()["error"]


def test_run_detail_has_keys_and_results_per_metric(client, two_runs):
    run_id = client.get("/api/runs/?patches=stock").json()["results"][0]["id"]
    run = client.get(f"/api/runs/{run_id}/").json()
    assert (run["workload"], run["kernel"], run["hardware"], run["mode"]) == (
        "VolanoMark",
        "2.4.20",
        "P8",
        "UP",
    )
    assert run["params"] == {"rooms": 10, "messages": 1000}
    assert run["notes"] == "002 Table 7"
    throughput = run["results"]["throughput"]
    assert throughput["unit"] == "msg/s" and throughput["better"] == "higher"
    assert throughput["values"] == [13000, 13400, 13200] and throughput["n"] == 3
    assert throughput["mean"] == pytest.approx(13200)
    assert throughput["sd"] == pytest.approx(200)
    assert client.get("/api/runs/999999/").status_code == 404


def test_upload_pages(client, user, tmp_path):
    client.force_login(user)
    assert b'type="file"' in client.get("/uploads/new/").content
    with open(volano_bundle(tmp_path / "w.tar.gz"), "rb") as f:
        response = client.post("/uploads/new/", {"bundle": f})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "queued" in page and "w.tar.gz" in page


def test_preview_lists_the_runs_and_stores_nothing(client, token, tmp_path):
    path = volano_bundle(tmp_path / "b.tar.gz", kernel="2.5.59")
    with open(path, "rb") as f:
        response = client.post(
            "/api/uploads/preview/", {"bundle": f}, HTTP_AUTHORIZATION=f"Token {token}"
        )
    assert response.status_code == 200
    (run,) = response.json()["runs"]
    assert (run["workload"], run["kernel"], run["patches"], run["trials"]) == (
        "VolanoMark",
        "2.5.59",
        [],
        [1, 2, 3],
    )
    assert run["metrics"] == ["throughput"] or "throughput" in run["metrics"]
    assert Run.objects.count() == 0


def test_preview_of_a_broken_bundle_is_a_400_listing_every_problem(client, token, tmp_path):
    files = {
        "manifest.toml": manifest_toml(
            volano_run("2.5.25", files='{ path = "a.log", parser = "volanomark" }'),
            volano_run("2.5.26", files='{ path = "b.log", parser = "volanomark" }'),
        ),
        "a.log": "no volano here\n",
        "b.log": "nor here\n",
    }
    path = make_bundle(tmp_path / "b.tar.gz", files)
    with open(path, "rb") as f:
        response = client.post(
            "/api/uploads/preview/", {"bundle": f}, HTTP_AUTHORIZATION=f"Token {token}"
        )
    assert response.status_code == 400
    problems = response.json()["problems"]
    assert len(problems) == 2
    assert problems[0].startswith("run 1: file 'a.log' (volanomark)")
    assert problems[1].startswith("run 2: file 'b.log' (volanomark)")


def test_preview_needs_a_token(client, tmp_path):
    with open(volano_bundle(tmp_path / "b.tar.gz"), "rb") as f:
        assert client.post("/api/uploads/preview/", {"bundle": f}).status_code in (401, 403)


def test_an_upload_says_what_its_check_found_once_it_has_run(client):
    """A lab script reads the check's outcome from the upload: running while the check is
    owed, then each move with its build, its note and its page."""
    upload = UploadFactory(status="done", detection_due_at=timezone.now())
    run = RunFactory(upload=upload, kernel__version="6.13.0-rc7", patch_set__name="fix")
    alert = AlertFactory(upload=upload, candidate_run=run, change_pct=-45.2, p_value=0.002)
    pending = AlertFactory(
        upload=upload, candidate_run=run, status=Alert.Status.PENDING, method="threshold"
    )
    assert client.get(f"/api/uploads/{upload.pk}/").json()["check"] == {"state": "running"}
    Upload.objects.filter(pk=upload.pk).update(detection_due_at=None)
    check = client.get(f"/api/uploads/{upload.pk}/").json()["check"]
    assert check["state"] == "done" and check["improvements"] == []
    (regression,) = check["regressions"]
    assert regression["id"] == alert.pk and regression["change_pct"] == -45.2
    assert (regression["kernel"], regression["patches"]) == ("6.13.0-rc7", "fix")
    assert regression["page"].endswith(f"/alerts/{alert.pk}/") and regression["note"] == ""
    (waiting,) = check["pending"]
    assert waiting["id"] == pending.pk and waiting["note"] == pending.state_short != ""


def test_a_failed_or_queued_upload_has_no_check_yet(client):
    failed, queued = UploadFactory(status="failed"), UploadFactory(status="queued")
    assert client.get(f"/api/uploads/{failed.pk}/").json()["check"] == {"state": "none"}
    assert client.get(f"/api/uploads/{queued.pk}/").json()["check"] == {"state": "waiting"}

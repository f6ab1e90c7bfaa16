"""The alert summaries in the API (list and one build), on culprit builds through the real
ingest pipeline, held to the page's grouping and order and to a fixed number of queries."""

from __future__ import annotations

import pytest

from perfdb.alerting import summaries
from perfdb.models import Alert
from tests.perfdb.alerting.builds import o1_regression, upload_builds

pytestmark = pytest.mark.django_db

FAST = [("2.4.20", '["fast"]', (15000, 15100, 15050), 10)]
SLOW = [("2.4.20", '["slow"]', (10000, 10100, 10050), 10)]


@pytest.fixture
def summary(tmp_path):
    o1_regression(tmp_path)
    return summaries.summaries_page()[1][0]


def test_the_list_is_the_pages_regressions_newest_first(client, summary, tmp_path):
    upload_builds(tmp_path, "fast.tar.gz", FAST)
    upload_builds(tmp_path, "slow.tar.gz", SLOW)
    body = client.get("/api/alert-summaries/").json()
    _, page = summaries.summaries_page()
    assert [s["key"] for s in body["results"]] == [s.key.slug for s in page]
    assert [s["build"] for s in body["results"]] == ["2.4.20+slow", "2.4.20+O(1)"]
    assert body["count"] == 2 and body["next"] is None
    first = body["results"][1]
    assert first["kernel"] == "2.4.20" and first["patches"] == ["O(1)"]
    assert first["regressions"] == 4 and first["setups"] == 2 and first["pending"] == 0
    assert first["worst"]["direction"] == "regression"
    assert first["worst"]["alert"] == summary.worst.pk
    assert first["page"] == f"http://testserver/alerts/summaries/{summary.key.slug}/"
    assert first["url"] == f"http://testserver/api/alert-summaries/{summary.key.slug}/"


def test_improvements_are_listed_apart(client, summary, tmp_path):
    upload_builds(tmp_path, "fast.tar.gz", FAST)
    body = client.get("/api/alert-summaries/?kind=improvements").json()
    assert [s["build"] for s in body["results"]] == ["2.4.20+fast"]
    assert body["results"][0]["regressions"] == 0 and body["results"][0]["improvements"] > 0


@pytest.mark.parametrize("query", ["kind=sideways", "kind=", "page=0", "page=x"])
def test_a_bad_parameter_is_a_400_naming_it(client, query):
    response = client.get(f"/api/alert-summaries/?{query}")
    assert response.status_code == 400
    assert response.json()["param"] == query.split("=")[0]


def test_a_page_past_the_end_is_a_404(client, summary):
    assert client.get("/api/alert-summaries/?page=2").status_code == 404


def test_the_list_reads_three_queries_however_many_builds(
    client, summary, tmp_path, django_assert_num_queries
):
    """The count, a page of keys grouped in PostgreSQL, the page's alerts: no N+1."""
    with django_assert_num_queries(3):
        assert client.get("/api/alert-summaries/").json()["count"] == 1
    upload_builds(tmp_path, "slow.tar.gz", SLOW)
    with django_assert_num_queries(3):
        assert client.get("/api/alert-summaries/").json()["count"] == 2


def test_one_summary_has_its_alerts_and_the_report(client, summary):
    body = client.get(f"/api/alert-summaries/{summary.key.slug}/").json()
    assert body["key"] == summary.key.slug and body["build"] == "2.4.20+O(1)"
    assert [a["id"] for a in body["alerts"]] == [a.pk for a in summary.alerts]
    assert body["alerts"][0]["series"]["workload"] == "VolanoMark"
    download = client.get(f"/alerts/summaries/{summary.key.slug}/report.txt").content.decode()
    assert body["report"] == download
    report = body["report"]
    assert report.startswith("perfdb noticed a ") and "%stddev     %change" in report


def test_one_summary_reads_a_fixed_number_of_queries(
    client, summary, tmp_path, django_assert_num_queries
):
    """The alerts; their baseline runs with kernels and patch sets and their re-attributions
    (prefetched); the report's values and stated spreads: 7 however many alerts."""
    with django_assert_num_queries(7):
        assert len(client.get(f"/api/alert-summaries/{summary.key.slug}/").json()["alerts"]) == 4


def test_cleared_alerts_are_left_out_and_an_unknown_build_is_a_404(client, summary):
    Alert.objects.update(status=Alert.Status.CLEARED)
    assert client.get(f"/api/alert-summaries/{summary.key.slug}/").status_code == 404
    assert client.get("/api/alert-summaries/999-999-999/").status_code == 404
    assert client.get("/api/alert-summaries/").json()["count"] == 0

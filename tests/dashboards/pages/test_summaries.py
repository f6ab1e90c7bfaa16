"""The summary pages (list, one build, its report download and triage) and the overview's
"what regressed", on a culprit build through the real ingest pipeline."""

from __future__ import annotations

import pytest

from perfdb.alerting import summaries
from perfdb.models import Alert
from tests.perfdb.alerting.builds import o1_regression, upload_builds

pytestmark = pytest.mark.django_db


@pytest.fixture
def summary(tmp_path):
    o1_regression(tmp_path)
    return summaries.summaries_page()[1][0]


def url(summary) -> str:
    return f"/alerts/summaries/{summary.key.slug}/"


def test_the_list_links_each_build_to_its_summary(client, summary, tmp_path):
    upload_builds(tmp_path, "fast.tar.gz", [("2.4.20", '["fast"]', (15000, 15100, 15050), 10)])
    page = client.get("/alerts/summaries/").content.decode()
    assert url(summary) in page and "2.4.20+O(1)" in page and "2.4.20+fast" not in page
    improvements = client.get("/alerts/summaries/?kind=improvements").content.decode()
    assert "2.4.20+fast" in improvements and url(summary) not in improvements


def test_a_bad_kind_is_a_400_naming_it(client):
    response = client.get("/alerts/summaries/?kind=sideways")
    assert response.status_code == 400 and "kind" in response.content.decode()


def test_the_summary_page_lists_every_move_and_the_report(client, summary):
    page = client.get(url(summary)).content.decode()
    for alert in summary.alerts:
        assert f"/alerts/{alert.pk}/" in page
    assert '<pre class="report" id="summary-report">perfdb noticed a' in page
    assert "VolanoMark.throughput (msg/s)" in page
    assert f'href="{url(summary)}report.txt"' in page and 'data-copy="summary-report"' in page


def test_the_report_downloads_as_plain_text(client, summary):
    response = client.get(url(summary) + "report.txt")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"].startswith("attachment;")
    text = response.content.decode()
    assert text.startswith("perfdb noticed a ") and "         %stddev     %change" in text


def test_an_unknown_build_is_a_404(client, summary):
    assert client.get("/alerts/summaries/999-999-999/").status_code == 404


def test_staff_set_the_status_of_the_whole_summary(client, staff, summary):
    client.force_login(staff)
    response = client.post(url(summary), {"status": "investigating"})
    assert response.status_code == 302
    assert set(Alert.objects.values_list("status", flat=True)) == {"investigating"}


def test_others_cannot_triage_a_summary(client, user, summary):
    client.force_login(user)
    assert client.post(url(summary), {"status": "invalid"}).status_code == 403
    assert set(Alert.objects.values_list("status", flat=True)) == {"untriaged"}


def test_each_alert_page_links_to_its_summary(client, summary):
    page = client.get(f"/alerts/{summary.alerts[0].pk}/").content.decode()
    assert f'<a href="{url(summary)}">' in page


def test_the_overview_leads_with_what_regressed(client, summary):
    page = client.get("/").content.decode()
    regressed = page[page.index('id="regressed"') : page.index('id="uploads"')]
    assert url(summary) in regressed and "2.4.20+O(1)" in regressed
    upload = summary.upload
    assert f"{summary.worst.change_pct:.1f} %" in regressed
    assert f'upload <a href="/uploads/{upload.pk}/">{upload.pk}</a>' in regressed
    outcome = page[page.index('id="uploads"') :]
    assert "4 regressions" in outcome


def test_pending_regressions_show_as_pending_on_the_overview(client, tmp_path):
    o1_regression(tmp_path)
    Alert.objects.update(status=Alert.Status.PENDING)
    page = client.get("/").content.decode()
    regressed = page[page.index('id="regressed"') : page.index('id="uploads"')]
    assert "pending" in regressed and "2.4.20+O(1)" in regressed
    # A short note on the row; the whole one is its tooltip.
    note = Alert.objects.get(pk=summaries.summaries_open()[0].worst.pk)
    assert f'title="{note.state_note}">{note.state_short}</span>' in regressed


def test_the_overview_reads_a_fixed_number_of_rows(client, tmp_path, django_assert_num_queries):
    """docs/performance.md: a warm overview makes 3 queries (uploads with their outcome, what
    regressed, the demo uploads), however many builds regressed; the run tables come from
    one cached render."""
    o1_regression(tmp_path)
    client.get("/")  # the run tables are rendered and cached once per data version
    with django_assert_num_queries(3):
        client.get("/")
    upload_builds(tmp_path, "more.tar.gz", [("2.4.20", '["slow"]', (10000, 10100, 10050), 10)])
    client.get("/")
    with django_assert_num_queries(3):
        assert "2.4.20+slow" in client.get("/").content.decode()


def test_the_nav_leads_to_the_summaries(client):
    assert '<a href="/alerts/summaries/">Regressions</a>' in client.get("/alerts/").content.decode()

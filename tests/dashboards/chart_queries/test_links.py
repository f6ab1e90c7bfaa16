"""Links between pages (dashboards/chart_queries/links.py): a run page lists its alerts and
links its series and the baseline its alert names; an alert page links its chart and the
open alerts either side; the API docs carry the site's navigation."""

from __future__ import annotations

import pytest
from django.urls import reverse

from perfdb.models import Metric
from tests.factories import make_alert

pytestmark = pytest.mark.django_db


def test_a_run_page_lists_its_alerts_and_names_its_alerts_baseline(client, data):
    run, other = data.run("2.5.25", "pri_preempt"), data.run("2.4.20")
    throughput = Metric.objects.get(name="throughput")
    alert = make_alert(run, throughput, "untriaged", "improvement", 7.9)
    alert.baseline_runs.set([other])  # not the natural baseline (2.5.25 stock)
    html = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert f'<a href="/alerts/{alert.pk}/">alert {alert.pk}</a>' in html
    series = f"/kernels/?setup={run.setup_id}&amp;metric={throughput.pk}"
    assert f'<a href="{series}">series chart</a>' in html  # the alert's series
    assert f'<a href="{series}" title="this metric across kernels">throughput</a>' in html
    compare = f"/compare/?base={other.pk}&amp;new={run.pk}"
    assert f'id="run-compare" href="{compare}"' in html and "its alert's baseline" in html
    alert_html = client.get(reverse("alert-detail", args=[alert.pk])).content.decode()
    assert f'id="alert-compare" href="{compare}"' in alert_html  # the same baseline


def test_a_run_without_alerts_keeps_its_natural_baseline(client, data, django_assert_num_queries):
    from dashboards.chart_queries.links import run_links
    from perfdb import queries

    run, stock = data.run("2.5.25", "pri_preempt"), data.run("2.5.25")
    results = queries.run_results(run_id=run.pk)
    # alerts and their baselines (2), the natural baseline, the metric ids, the profile
    # check, and the profile diff's check of both runs
    with django_assert_num_queries(6):
        found = run_links(run=run, results=results)
    assert found["alerts"] == [] and found["baseline_ids"] == [stock.pk]
    assert found["compare_url"] == f"/compare/?base={stock.pk}&new={run.pk}"
    assert found["profile_diff_url"] == f"/profile-diff/?base={stock.pk}&new={run.pk}"
    assert all(r["series_url"].startswith("/kernels/?setup=") for r in found["results"].values())


def test_an_alert_page_links_its_chart_and_the_open_alerts_either_side(client, data):
    throughput = Metric.objects.get(name="throughput")
    run = data.run("2.5.25")
    older = make_alert(data.run("2.4.20"), throughput)
    closed = make_alert(data.run("2.3.99-pre3"), throughput, status="fixed")
    alert = make_alert(run, throughput)
    newer = make_alert(data.run("2.5.25", "pri_preempt"), throughput, status="investigating")
    html = client.get(reverse("alert-detail", args=[alert.pk])).content.decode()
    assert f'id="alert-older" href="/alerts/{older.pk}/"' in html  # past the fixed one
    assert f'id="alert-newer" href="/alerts/{newer.pk}/"' in html
    assert f"/alerts/{closed.pk}/" not in html
    assert (
        f'id="alert-series" href="/kernels/?setup={run.setup_id}&amp;metric={throughput.pk}"'
        in html
    )
    first = client.get(reverse("alert-detail", args=[older.pk])).content.decode()
    assert 'id="alert-older"' not in first


def test_the_api_docs_have_the_site_navigation(client):
    html = client.get("/api/docs/").content.decode()
    assert '<nav aria-label="main">' in html and 'href="/compare/"' in html
    assert 'id="swagger-ui"' in html and "<script>" not in html  # no inline script (CSP)

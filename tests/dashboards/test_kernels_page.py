"""The across-kernels page's alerts (dashboards/kernels.py): the marks its chart draws
over the figure (/kernels/alerts/), read fresh, and the series a page naming no set-up
opens on."""

from __future__ import annotations

import json

import pytest

from perfdb.models import Metric
from tests.factories import make_alert

pytestmark = pytest.mark.django_db


def test_the_marks_are_read_fresh_and_the_series_from_the_cache(
    client, data, django_assert_num_queries
):
    throughput = Metric.objects.get(name="throughput")
    run = data.run("2.5.25")
    alert = make_alert(run, throughput)
    url = f"/kernels/alerts/?setup={run.setup_id}&metric={throughput.pk}"
    assert client.get(url).status_code == 200  # reads the series once, into the cache
    with django_assert_num_queries(1):  # the alerts only
        response = client.get(url)
    (trace,) = json.loads(response.content)["data"]
    assert trace["name"] == "alert: open regression"
    assert trace["customdata"] == [f"/alerts/{alert.pk}/"] and trace["x"] == ["2.5.25"]
    alert.status = "fixed"
    alert.save()  # a triage moves no data version: the next answer shows it anyway
    (trace,) = json.loads(client.get(url).content)["data"]
    assert trace["name"] == "alert: triaged"


def test_a_series_without_alerts_answers_no_traces_in_one_query(
    client, data, django_assert_num_queries
):
    run = data.run("2.5.25")
    metric = Metric.objects.get(name="throughput")
    with django_assert_num_queries(1):
        response = client.get(f"/kernels/alerts/?setup={run.setup_id}&metric={metric.pk}")
    assert json.loads(response.content) == {"data": []}


def test_the_marks_follow_the_pages_baseline(client, data):
    throughput = Metric.objects.get(name="throughput")
    run, base = data.run("2.5.25"), data.run("2.4.20")
    make_alert(run, throughput)
    query = f"setup={run.setup_id}&metric={throughput.pk}"
    absolute = json.loads(client.get(f"/kernels/alerts/?{query}").content)["data"][0]["y"][0]
    relative = json.loads(client.get(f"/kernels/alerts/?{query}&baseline={base.pk}").content)
    assert relative["data"][0]["y"][0] == pytest.approx(absolute / 12000 * 100)


@pytest.mark.parametrize("query", ["metric=1", "setup=1", "setup=x&metric=1"])
def test_the_marks_need_a_setup_and_a_metric(client, query):
    assert client.get(f"/kernels/alerts/?{query}").status_code == 400


def test_a_page_naming_no_setup_opens_on_the_newest_open_regression(client, data):
    throughput = Metric.objects.get(name="throughput")
    run = data.run("2.4.20", rooms=20)
    make_alert(run, throughput)
    html = client.get("/kernels/").content.decode()
    query = f"setup={run.setup_id}&amp;metric={throughput.pk}"
    assert f'data-src="/kernels/figure/?{query}"' in html
    assert f'data-overlay="/kernels/alerts/?{query}"' in html
    assert f'<option value="{run.setup_id}" selected>' in html


def test_without_an_open_regression_the_page_opens_on_the_busiest_setup(client, data):
    throughput = Metric.objects.get(name="throughput")
    make_alert(data.run("2.4.20", rooms=20), throughput, status="fixed")
    busiest = data.run("2.4.20").setup_id  # the series of every kernel, rooms = 10
    html = client.get("/kernels/").content.decode()
    assert f'<option value="{busiest}" selected>' in html


def test_a_setup_and_metric_by_name_open_the_same_series(client, data):
    """``setup=workload/hardware/mode/k=v`` as the compare page takes it, and the metric's
    name: the page (and its figure) charts the series the ids name."""
    run = data.run("2.5.25")
    throughput = Metric.objects.get(name="throughput")
    named = client.get("/kernels/?setup=VolanoMark/P8/UP/rooms=10,messages=1000&metric=throughput")
    by_id = client.get(f"/kernels/?setup={run.setup_id}&metric={throughput.pk}")
    assert named.status_code == 200
    src = f"/kernels/figure/?setup={run.setup_id}&amp;metric={throughput.pk}"
    assert src in named.content.decode() and src in by_id.content.decode()
    figure = client.get("/kernels/figure/?setup=VolanoMark/P8/UP/rooms=10,messages=1000")
    assert figure.content == client.get(f"/kernels/figure/?setup={run.setup_id}").content


@pytest.mark.parametrize(
    "query, param, says",
    [
        ("setup=VolanoMark/P8/UP", "setup", "add the parameters"),
        ("setup=VolanoMark/P8/SMP", "setup", "no set-up"),
        ("setup=VolanoMark/P8/UP/rooms=7", "setup", "no set-up"),
        ("setup=VolanoMark", "setup", "workload/hardware/mode"),
        ("setup=VolanoMark/P8/UP/rooms=10,messages=1000&metric=speed", "metric", "no metric"),
    ],
)
def test_a_name_that_is_unknown_or_ambiguous_is_a_400_saying_so(client, data, query, param, says):
    response = client.get(f"/kernels/?{query}")
    assert response.status_code == 400
    text = response.content.decode()
    assert f"parameter <code>{param}</code>" in text and says in text

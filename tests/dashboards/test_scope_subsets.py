"""The kernel-time and wakeups pages draw a bounded number of a scope's setups by default,
any others or all of them on request, the choice in the URL, its permalink and downloads."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from dashboards import kernel_time_page, wakeups_page
from dashboards.scope_draw import options_html
from dashboards.selection import BadParam, busiest_first, subset_param
from perfdb.models import Setup
from tests.dashboards.data import load
from tests.dashboards.page_figures import figure

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(tmp_path):
    return load(tmp_path)


def chart_ids(response) -> list[str]:
    html = response.content.decode()
    return [part.split('"', 1)[0] for part in html.split('data-figure="')[1:]]


def permalink(response) -> str:
    html = response.content.decode()
    start = html.index('class="permalink')
    return unescape(html[html.index('href="', start) + 6 :].split('"', 1)[0])


def table_thresholds(html: str) -> list[int]:
    """The threshold column of the wakeups table (run, server nice, client nice, threshold)."""
    cell = r'<td class="num">(-?\d+)</td>'
    return [int(t) for t in re.findall(rf"</a></td>{cell}{cell}{cell}", html) for t in t[2:]]


def download_query(response) -> str:
    """The query of the page's first CSV download link."""
    html = response.content.decode()
    return unescape(html.split('class="downloads"', 1)[1].split("?", 1)[1].split('"', 1)[0])


# --- the pure parts ------------------------------------------------------------------------


def test_busiest_first_puts_the_given_ones_first_then_the_most_run_then_the_newest():
    runs = {1: (2, 10.0, 5), 2: (5, 1.0, 3), 3: (2, 20.0, 9), 4: (2, 20.0, 8)}
    assert busiest_first([1, 2, 3, 4, 5], runs) == [2, 3, 4, 1, 5]
    assert busiest_first([1, 2, 3, 4, 5], runs, first=[5, 1, 99]) == [5, 1, 2, 3, 4]


def test_subset_param_takes_all_a_choice_or_the_default():
    choices = ["0", "10", "40"]
    assert subset_param({"t": "all"}, "t", choices, ["10"]) == choices
    assert subset_param({}, "t", choices, ["10"]) == ["10"]
    assert subset_param({"t": "40"}, "t", choices, ["10"]) == ["40"]
    with pytest.raises(BadParam) as error:
        subset_param({"t": "7"}, "t", choices, ["10"])
    assert error.value.name == "t"


def test_picker_options_are_escaped():
    html = options_html([('1" onclick="x', "<script>alert(1)</script>"), ("2", "b")], ["2"])
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'value="1&quot; onclick=&quot;x"' in html and '<option value="2" selected>b' in html


# --- wakeups: whole thresholds ---------------------------------------------------------------


def test_wakeups_draws_the_newest_threshold_by_default(client, data, monkeypatch):
    monkeypatch.setattr(wakeups_page, "WAKEUPS_MAX_SETUPS", 3)  # one threshold of 3 pairs
    response = client.get("/wakeups/")
    assert response.status_code == 200
    assert chart_ids(response) == ["fig-bars", "fig-heatmap_40"]  # the newest runs
    assert "thresholds=" not in permalink(response)  # the default is not spelt out
    html = response.content.decode()
    assert 'id="show-all-thresholds" href="/wakeups/?' in html
    assert table_thresholds(html) == [40, 40, 40]


def test_wakeups_thresholds_chosen_in_the_url_reach_the_permalink_and_download(
    client, data, monkeypatch
):
    monkeypatch.setattr(wakeups_page, "WAKEUPS_MAX_SETUPS", 3)
    response = client.get("/wakeups/?thresholds=0")
    assert chart_ids(response) == ["fig-bars", "fig-heatmap_0"]
    assert "thresholds=0" in permalink(response)
    assert 'id="default-thresholds"' in response.content.decode()
    download = download_query(response)
    assert "thresholds=0" in download
    body = json.loads(
        client.get(f"/wakeups/?{download.replace('format=csv', 'format=json')}").content
    )
    assert {r["preempt_threshold"] for r in body["rows"]} == {0} and len(body["rows"]) == 3


def test_wakeups_all_thresholds(client, data, monkeypatch):
    monkeypatch.setattr(wakeups_page, "WAKEUPS_MAX_SETUPS", 3)
    response = client.get("/wakeups/?thresholds=all")
    assert chart_ids(response) == ["fig-bars", "fig-heatmap_0", "fig-heatmap_40"]
    assert "thresholds=all" in permalink(response)
    body = json.loads(client.get("/wakeups/?thresholds=all&format=json").content)
    assert {r["preempt_threshold"] for r in body["rows"]} == {0, 40}


@pytest.mark.parametrize("url", ["/wakeups/", "/kernel-time/"])
def test_no_template_comment_reaches_the_page(client, data, url):
    html = client.get(url).content.decode()
    assert "{#" not in html and "#}" not in html and "json_script element" not in html


def test_the_default_draws_every_threshold_of_a_small_grid(client, data):
    response = client.get("/wakeups/")  # 001's grid: 6 setups, under the bound
    assert chart_ids(response) == ["fig-bars", "fig-heatmap_0", "fig-heatmap_40"]
    assert 'id="show-all-thresholds"' not in response.content.decode()


@pytest.mark.parametrize("query", ["thresholds=7", "thresholds=0&thresholds=x", "thresholds=%00"])
def test_an_unknown_threshold_is_a_400(client, data, query):
    response = client.get(f"/wakeups/?{query}")
    assert response.status_code == 400 and "<code>thresholds</code>" in response.content.decode()


# --- kernel time: setups --------------------------------------------------------------------


def _setup(**params: object) -> int:
    return Setup.objects.get(params=params).pk


def test_kernel_time_draws_the_profiled_setup_first(client, data, monkeypatch):
    monkeypatch.setattr(kernel_time_page, "KERNEL_TIME_MAX_SETUPS", 1)
    response = client.get("/kernel-time/")
    assert response.status_code == 200
    base = _setup(rooms=10, messages=1000)
    html = response.content.decode()
    assert f'<option value="{base}" selected>' in html
    assert html.count(" selected>") == 3  # the scope, the setup and the top-N picker's value
    assert len(figure(response, "fig-kernel-time")["data"][0]["x"]) == 4  # its 4 runs
    assert "setups=" not in permalink(response)
    assert 'id="show-all-setups" href="/kernel-time/?' in html


def test_kernel_time_setups_in_the_url_are_what_is_drawn_and_downloaded(client, data):
    rooms5 = _setup(rooms=5, messages=1000)
    response = client.get(f"/kernel-time/?setups={rooms5}")
    assert response.status_code == 200
    assert "These runs have no kernel profile" in response.content.decode()  # none profiled
    assert f'<option value="{rooms5}" selected>' in response.content.decode()
    assert 'id="default-setups"' in response.content.decode()
    body = json.loads(client.get(f"/kernel-time/?setups={rooms5}&format=json").content)
    assert body["rows"] == []
    every = json.loads(client.get("/kernel-time/?setups=all&format=json").content)
    assert len(every["rows"]) == 4


def test_kernel_time_setups_chosen_reach_the_permalink(client, data):
    base, rooms5 = _setup(rooms=10, messages=1000), _setup(rooms=5, messages=1000)
    response = client.get(f"/kernel-time/?setups={rooms5}&setups={base}")
    assert len(figure(response, "fig-kernel-time")["data"][0]["x"]) == 4
    assert f"setups={min(base, rooms5)}&setups={max(base, rooms5)}" in permalink(response)
    every = client.get("/kernel-time/?setups=all")
    assert "setups=all" in permalink(every) and 'id="show-all-setups"' not in every.content.decode()


@pytest.mark.parametrize("value", ["999999", "abc", "1;2"])
def test_a_setup_not_of_the_scope_is_a_400(client, data, value):
    response = client.get(f"/kernel-time/?setups={value}")
    assert response.status_code == 400 and "<code>setups</code>" in response.content.decode()


# --- the API answers what the pages draw ---------------------------------------------------


def api_link(response) -> str:
    html = response.content.decode()
    return unescape(html.split('id="api-link" href="', 1)[1].split('"', 1)[0])


def test_the_api_answers_what_the_kernel_time_page_draws(client, data, monkeypatch):
    monkeypatch.setattr(kernel_time_page, "KERNEL_TIME_MAX_SETUPS", 1)
    page = client.get("/kernel-time/")
    url = api_link(page)
    assert url == f"/api/kernel-time/?setups={_setup(rooms=10, messages=1000)}"
    body = client.get(url).json()
    drawn = figure(page, "fig-kernel-time")["data"][0]["customdata"]
    assert [p["run"] for p in body["points"]] == drawn
    assert len(body["profiles"]) == 4 and body["profiles"][0]["functions"][0]["ticks"] > 0


def test_the_api_answers_what_the_wakeups_page_draws(client, data):
    page = client.get("/wakeups/?thresholds=0")
    url = api_link(page)
    assert url.startswith("/api/wakeups/?setups=") and "build=" in url
    body = client.get(url).json()
    assert {r["preempt_threshold"] for r in body["rows"]} == {0}
    assert sorted(r["run"] for r in body["rows"]) == sorted(
        int(i) for i in re.findall(r'href="/runs/(\d+)/">', page.content.decode())
    )


@pytest.mark.parametrize(
    "url, param",
    [
        ("/api/wakeups/", "setups"),
        ("/api/kernel-time/?setups=x", "setups"),
        ("/api/kernel-time/?setups=1&param=%00", "param"),
        ("/api/wakeups/?setups=1&build=%20", None),  # blank: every build
        ("/api/wakeups/?setups=1&build=a%00", "build"),
    ],
)
def test_the_scope_chart_api_refuses_bad_parameters(client, data, url, param):
    response = client.get(url)
    if param is None:
        assert response.status_code == 200
    else:
        assert response.status_code == 400 and response.json()["param"] == param

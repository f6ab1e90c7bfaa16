"""The scaling, kernel-time and wakeups pages draw a bounded number of a scope's setups by
default, any others or all of them on request, a bounded page of them per request, the
choice in the URL, its permalink and downloads."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from dashboards.page_data import kernel_time, wakeups
from dashboards.page_data import scaling as scaling_data
from dashboards.page_data.scaling import spread
from dashboards.page_data.scope_draw import paged
from dashboards.pure.selection import BadParam, busiest_first, subset_param
from perfdb.models import Setup
from tests.dashboards.page_figures import figure

pytestmark = pytest.mark.django_db


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


def test_a_selection_is_cut_into_pages_of_at_most_so_many_setups():
    weights = {"a": 1, "b": 2, "c": 3, "d": 1}
    assert paged(list("abcd"), weights.__getitem__, 3) == [["a", "b"], ["c"], ["d"]]
    assert paged(list("abcd"), lambda _: 1, 3) == [["a", "b", "c"], ["d"]]
    assert paged(["big"], lambda _: 10, 3) == [["big"]]  # heavier than a page: its own
    assert paged([], lambda _: 1, 3) == [[]]


def test_the_default_scaling_setups_are_spread_from_the_first_value_to_the_last():
    ordered = [str(i) for i in range(101)]
    assert spread(ordered, 5) == ["0", "25", "50", "75", "100"]
    assert spread(ordered[:3], 5) == ["0", "1", "2"]


# --- wakeups: whole thresholds ---------------------------------------------------------------


def test_wakeups_draws_the_newest_threshold_by_default(client, data, monkeypatch):
    monkeypatch.setattr(wakeups, "WAKEUPS_MAX_SETUPS", 3)  # one threshold of 3 pairs
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
    monkeypatch.setattr(wakeups, "WAKEUPS_MAX_SETUPS", 3)
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
    monkeypatch.setattr(wakeups, "WAKEUPS_MAX_SETUPS", 3)
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
    monkeypatch.setattr(kernel_time, "KERNEL_TIME_MAX_SETUPS", 1)
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
    monkeypatch.setattr(kernel_time, "KERNEL_TIME_MAX_SETUPS", 1)
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


# --- a page of a large selection at a time --------------------------------------------------


def links_of(response) -> dict[str, str]:
    html = response.content.decode()
    found = re.findall(r'<a id="((?:previous|next|show-all|default)-\w+)" href="([^"]+)"', html)
    return {name: unescape(href) for name, href in found}


def test_kernel_time_all_setups_is_drawn_a_page_at_a_time(client, data, monkeypatch):
    monkeypatch.setattr(kernel_time, "KERNEL_TIME_PAGE_SETUPS", 2)
    first = client.get("/kernel-time/?setups=all")
    assert first.status_code == 200
    text = first.content.decode()
    assert "Drawing setups 1–2 of all 9: page 1 of 5" in text
    links = links_of(first)
    assert "previous-setups" not in links and "show-all-setups" not in links
    assert "setups=all" in links["next-setups"] and "page=2" in links["next-setups"]
    last = client.get(links["next-setups"].replace("page=2", "page=5"))
    assert "Drawing setups 9–9 of all 9: page 5 of 5" in last.content.decode()
    assert "next-setups" not in links_of(last) and "page=4" in links_of(last)["previous-setups"]
    assert "setups=all" in permalink(first) and "page=" not in permalink(first)
    for bad in ("6", "0", "x"):
        assert client.get(f"/kernel-time/?setups=all&page={bad}").status_code == 400


def test_kernel_time_page_2_reads_only_its_setups(client, data, monkeypatch):
    monkeypatch.setattr(kernel_time, "KERNEL_TIME_PAGE_SETUPS", 2)
    every = json.loads(client.get("/kernel-time/?setups=all&format=json&page=1").content)
    pages_rows = [
        json.loads(client.get(f"/kernel-time/?setups=all&format=json&page={n}").content)["rows"]
        for n in range(1, 6)
    ]
    assert every["rows"] == pages_rows[0]
    assert sum(len(rows) for rows in pages_rows) == 4  # the scope's 4 profiled runs, once


def test_wakeups_all_thresholds_a_page_of_whole_thresholds_at_a_time(client, data, monkeypatch):
    monkeypatch.setattr(wakeups, "WAKEUPS_PAGE_SETUPS", 3)  # one threshold of 3 pairs
    first = client.get("/wakeups/?thresholds=all")
    assert chart_ids(first) == ["fig-bars", "fig-heatmap_0"]
    second = client.get(links_of(first)["next-thresholds"])
    assert chart_ids(second) == ["fig-bars", "fig-heatmap_40"]
    assert table_thresholds(second.content.decode()) == [40, 40, 40]
    assert "Drawing preemption thresholds 2–2 of all 2: page 2 of 2" in second.content.decode()
    assert "thresholds=all&page=2" in permalink(second)
    download = download_query(second)
    assert "page=2" in download  # a download is what the page draws
    body = json.loads(
        client.get(f"/wakeups/?{download.replace('format=csv', 'format=json')}").content
    )
    assert {r["preempt_threshold"] for r in body["rows"]} == {40}


def test_scaling_draws_a_bounded_spread_of_its_setups_then_all_a_page_at_a_time(
    client, data, monkeypatch
):
    monkeypatch.setattr(scaling_data, "SCALING_MAX_SETUPS", 2)
    monkeypatch.setattr(scaling_data, "SCALING_PAGE_SETUPS", 2)
    query = "param=rooms"
    default = client.get(f"/scaling/?{query}")
    assert default.status_code == 200
    xs = {x for trace in figure(default, "fig-scaling")["data"] for x in trace["x"]}
    assert xs == {5, 20}  # the first and last of rooms 5, 10, 20
    assert "Drawing 2 of 3 setups" in default.content.decode()
    assert "setups=" not in permalink(default)
    every = client.get(links_of(default)["show-all-setups"])
    xs = {x for trace in figure(every, "fig-scaling")["data"] for x in trace["x"]}
    assert xs == {5, 10}  # rooms in order, two a page
    assert 'name="setups" value="all"' in every.content.decode()  # kept by the pickers
    last = client.get(links_of(every)["next-setups"])
    xs = {x for trace in figure(last, "fig-scaling")["data"] for x in trace["x"]}
    assert xs == {20}
    assert "setups=all&page=2" in permalink(last)
    back = client.get(links_of(last)["default-setups"])
    assert "setups=" not in permalink(back)

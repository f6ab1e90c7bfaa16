"""Every page of the dashboards' URL map, over data stored by the real ingest pipeline: each
says what to upload when there is nothing, draws its chart with the local plotly.js and links
the others; a bad parameter is a 400 naming it; text from bundles never reaches a page as
markup."""

from __future__ import annotations

import json

import pytest

from tests.dashboards.data import (
    HOSTILE,
    HOSTILE_PATCH,
)
from tests.dashboards.page_figures import figure

pytestmark = pytest.mark.django_db


PAGES = ("/kernels/", "/scaling/", "/kernel-time/", "/wakeups/", "/activity/", "/compare/")


@pytest.mark.parametrize("url", PAGES)
def test_each_page_without_data_says_what_to_upload(client, url):
    response = client.get(url)
    assert response.status_code == 200
    assert "Upload a result bundle" in response.content.decode() or (
        url == "/compare/" and "No runs yet" in response.content.decode()
    )


@pytest.mark.parametrize(
    "url, chart_id",
    [
        ("/kernels/", "fig-kernels"),
        ("/scaling/", "fig-scaling"),
        ("/kernel-time/", "fig-kernel-time"),
        ("/kernel-time/", "fig-functions"),
        ("/wakeups/", "fig-bars"),
        ("/activity/", "fig-vmstat"),
    ],
)
def test_each_page_draws_its_chart_with_the_local_plotly(client, data, url, chart_id):
    response = client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/vendor/plotly/plotly-perfdb.min.js" in html and "cdn" not in html.lower()
    assert figure(response, chart_id)["data"], "the chart has no traces"
    for page in PAGES:  # the shared navigation links every page
        assert f'href="{page}"' in html


def test_navigation_is_on_every_page(client, data):
    html = client.get("/").content.decode()
    assert all(f'href="{page}"' in html for page in PAGES)


@pytest.mark.parametrize(
    "url, param",
    [
        ("/kernels/?setup=abc", "setup"),
        ("/kernels/?setup=999999", "setup"),
        ("/kernels/?metric=-3", "metric"),
        ("/kernels/?baseline=999999", "baseline"),
        ("/kernels/?format=xml", "format"),
        ("/kernels/?format=csv&chart=nope", "chart"),
        ("/scaling/?scope=1-2-XX", "scope"),
        ("/scaling/?param=heap", "param"),
        ("/scaling/?param=rooms&rest=messages%3D1", "rest"),
        ("/kernel-time/?top=0", "top"),
        ("/kernel-time/?top=ten", "top"),
        ("/kernel-time/?param=nope", "param"),
        ("/wakeups/?value=latency", "value"),
        ("/wakeups/?build=9.9.9", "build"),
        ("/activity/?runs=1;2", "runs"),
        ("/activity/?runs=999999", "runs"),
        ("/activity/?groups=disk", "groups"),
        ("/compare/?base=1", "new"),
        ("/compare/?new=1", "base"),
        ("/compare/?base=x&new=1", "base"),
        ("/compare/?base=999998&new=999999", "base"),
        ("/api/compare/?base=1,2", "new"),
    ],
)
def test_a_bad_parameter_is_a_400_that_names_it(client, data, url, param):
    response = client.get(url)
    assert response.status_code == 400
    body = response.content.decode()
    assert (f"<code>{param}</code>" in body) or (json.loads(body)["param"] == param)


def test_the_same_run_on_both_sides_is_refused(client, data):
    run = data.run("2.4.20")
    response = client.get(f"/compare/?base={run.pk}&new={run.pk}")
    assert response.status_code == 400 and "both sides" in response.content.decode()


@pytest.mark.parametrize("url", ["/", "/kernels/", "/wakeups/", "/kernel-time/", "/activity/"])
def test_hostile_notes_and_patch_names_never_reach_the_page_as_markup(client, data, url):
    if url == "/activity/":
        url += f"?runs={data.run('2.4.20').pk}"
    html = client.get(url).content.decode()
    assert HOSTILE not in html and HOSTILE_PATCH not in html
    assert "<script>alert" not in html and "<img src=x" not in html


def test_the_hostile_text_is_shown_escaped(client, data):
    html = client.get("/wakeups/").content.decode()
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # the build picker, autoescaped
    fig = figure(client.get("/kernels/"), "fig-kernels")
    hovers = " ".join(h for trace in fig["data"] for h in trace["hovertext"])
    assert "&lt;script&gt;alert(&#x27;pwn&#x27;)" in hovers or "&lt;script&gt;" in hovers

"""Whole answers kept for anonymous readers and served before the middleware stack
(dashboards/page_cache.py ``KeptAnswerMiddleware``): the series page, its figure
and /api/series/. A kept answer is the computed one, byte for byte and header for header;
an upload or an edit makes the next one current; a signed-in reader never gets it; a hit is
not counted by the API's throttle (documented), a miss is."""

from __future__ import annotations

import json

import pytest
from django.test import RequestFactory
from rest_framework.throttling import AnonRateThrottle

from dashboards.page_cache import KeptAnswerMiddleware
from perfdb.models import Metric, Run
from tests.bundles import make_bundle
from tests.dashboards.data import ingest
from tests.dashboards.series_data import NEW_RUN
from tests.factories import make_alert

pytestmark = pytest.mark.django_db

COMPUTED = object()  # what the stack behind the middleware answers in these tests


@pytest.fixture
def kept_30s(settings):
    settings.PAGE_CACHE_STALE_SECONDS = 30


@pytest.fixture
def urls(series):
    setup, metric = series
    query = f"setup={setup.pk}&metric={metric.pk}"
    return [f"/api/series/?{query}", f"/kernels/?{query}", f"/kernels/figure/?{query}"]


def early(url: str, **extra: str) -> object:
    """What the middleware answers by itself (a kept answer), or COMPUTED when it passes
    the request on to the stack."""
    return KeptAnswerMiddleware(lambda request: COMPUTED)(RequestFactory().get(url, **extra))


def test_a_kept_answer_is_the_computed_one(kept_30s, client, urls):
    for url in urls:
        computed = client.get(url)
        assert computed.status_code == 200
        kept = early(url)
        assert kept is not COMPUTED, f"{url} was kept"
        assert kept.content == computed.content
        # The request id is each request's own, and Vary: Accept-Encoding the compression's,
        # both added outside the kept answer's middleware.
        assert "X-Request-ID" not in kept and "X-Request-ID" in computed
        outside = {k: v for k, v in computed.items() if k != "X-Request-ID"}
        vary = [v for v in outside.pop("Vary", "").split(", ") if v and v != "Accept-Encoding"]
        if vary:
            outside["Vary"] = ", ".join(vary)
        assert dict(kept.items()) == outside
        for header in ("Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options"):
            assert header in kept, header
        assert client.get(url).content == computed.content


def test_the_key_holds_the_query_and_the_format_asked(kept_30s, client, urls):
    api = urls[0]
    client.get(api)
    assert early(api + "&scope=1") is COMPUTED, "a known parameter is part of the key"
    # Junk parameters and their order are not: a cache buster never makes a new entry.
    setup, metric = api.split("?")[1].split("&")
    for same in (api + "&x=1", api + "&utm_source=a&_=123", f"/api/series/?{metric}&{setup}"):
        assert early(same) is not COMPUTED and early(same).content == early(api).content
    assert early(api, HTTP_ACCEPT="text/csv") is COMPUTED, "another Accept: another answer"
    csv = client.get(api, HTTP_ACCEPT="text/csv")
    assert csv["Content-Type"].startswith("text/csv")
    assert early(api, HTTP_ACCEPT="text/csv").content == csv.content
    assert early(api).content != csv.content
    assert early(api + "&format=csv") is COMPUTED, "downloads are never kept"


def test_an_upload_to_the_setup_makes_the_answers_current(
    kept_30s, client, urls, tmp_path, django_capture_on_commit_callbacks
):
    for url in urls:
        assert "2.6.0" not in client.get(url).content.decode()
        assert early(url) is not COMPUTED
    with django_capture_on_commit_callbacks(execute=True):
        ingest(make_bundle(tmp_path / "new.tar.gz", {"manifest.toml": NEW_RUN}))
    for url in urls:
        assert early(url) is COMPUTED, f"{url}: the setup's version moved"
        assert "2.6.0" in client.get(url).content.decode(), url  # the new run's kernel
        assert early(url) is not COMPUTED, "kept again under the new versions"
    points = json.loads(client.get(urls[0]).content)["points"]
    assert points[-1]["mean"] == 4242.5


def test_an_edit_makes_the_answers_current(
    kept_30s, client, urls, django_capture_on_commit_callbacks
):
    for url in urls:
        client.get(url)
    with django_capture_on_commit_callbacks(execute=True):
        edited = Metric.objects.get(name="throughput")  # the series' metric
        edited.unit = "chats per fortnight"
        edited.save()  # vocabulary edited: the structure version moves
    for url in urls:
        assert early(url) is COMPUTED, url
        assert "chats per fortnight" in client.get(url).content.decode(), url


def test_a_signed_in_reader_never_gets_the_anonymous_answer(kept_30s, client, urls, user):
    page = urls[1]
    anonymous = client.get(page)
    assert early(page) is not COMPUTED
    client.force_login(user)
    own = client.get(page)
    assert own.status_code == 200 and "Log out" in own.content.decode()
    assert own.content != anonymous.content
    session = {"HTTP_COOKIE": f"sessionid={client.cookies['sessionid'].value}"}
    assert early(page, **session) is COMPUTED
    assert early(urls[0], HTTP_AUTHORIZATION="Token abc") is COMPUTED
    assert early(page, HTTP_COOKIE="messages=pending") is COMPUTED


def test_a_signed_in_readers_answer_is_never_kept(kept_30s, client, urls, user):
    client.force_login(user)
    for url in urls:
        assert client.get(url).status_code == 200
        assert early(url) is COMPUTED, url


def test_only_gets_without_a_body_are_answered(kept_30s, client, urls):
    url = urls[0]
    client.get(url)
    factory = RequestFactory()
    middleware = KeptAnswerMiddleware(lambda request: COMPUTED)
    assert middleware(factory.head(url)) is COMPUTED
    assert middleware(factory.post(url)) is COMPUTED
    assert middleware(factory.generic("GET", url, b"x" * 10)) is COMPUTED
    assert middleware(factory.get(url)) is not COMPUTED


def test_an_answer_with_uncached_reads_is_not_kept(kept_30s, client, urls, monkeypatch):
    """A query no version follows (one added to how the page picks its setup) keeps the
    answer from being kept."""
    from dashboards.page_data import series_data
    from perfdb.models import Setup

    chosen = series_data._setup_id
    monkeypatch.setattr(
        series_data, "_setup_id", lambda q, **kw: Setup.objects.count() and chosen(q, **kw)
    )
    url = urls[1]
    assert client.get(url).status_code == 200
    assert early(url) is COMPUTED


def test_the_default_series_page_is_never_kept(kept_30s, client, urls, django_assert_num_queries):
    """/kernels/ without a setup opens on the newest open regression: it asks the database
    on every request, since the newest of all alerts follows no version a kept answer is
    checked against. The default page's context is still cached per setup version: one
    query, the alerts'."""
    assert client.get("/kernels/").status_code == 200
    with django_assert_num_queries(1):
        assert client.get("/kernels/").status_code == 200
    assert early("/kernels/") is COMPUTED


def test_a_kept_figure_is_drawn_again_when_an_alert_of_its_setup_is_written(
    kept_30s, client, urls, series, django_capture_on_commit_callbacks
):
    """The figure carries its series' alert marks, kept under the setup's alerts version:
    a new alert (or a triage) makes the next request compute it, with the mark."""
    setup, metric = series
    figure = urls[2]
    assert "alert:" not in client.get(figure).content.decode()
    assert early(figure) is not COMPUTED
    run = Run.objects.filter(setup=setup).first()
    with django_capture_on_commit_callbacks(execute=True):
        make_alert(run, metric)
    assert early(figure) is COMPUTED
    assert "alert: open regression" in client.get(figure).content.decode()
    assert early(figure) is not COMPUTED


def test_nothing_is_kept_when_the_setting_is_zero(settings, client, urls):
    settings.PAGE_CACHE_STALE_SECONDS = 0
    for url in urls:
        client.get(url)
        assert early(url) is COMPUTED


def test_a_kept_api_answer_is_not_throttled_and_a_miss_is(kept_30s, client, urls, monkeypatch):
    """Documented (docs/deploy.md): a hit computes nothing and is not counted, as a static
    file is not; every request that reaches the view is counted as before."""
    monkeypatch.setattr(AnonRateThrottle, "rate", "2/min", raising=False)
    api = urls[0]
    assert [client.get(api).status_code for _ in range(4)] == [200] * 4  # 1 counted, 3 kept
    other = api + "&scope=1"  # another key: a miss each time it is not kept
    assert client.get(other).status_code == 200  # the second counted
    assert client.get(api + "&scope=2").status_code == 429

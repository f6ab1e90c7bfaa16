"""Compare, run detail and the alert pages kept a few seconds for anonymous readers
(dashboards/page_cache/kept.py), and what is never kept: a session's page, a page that
sets a cookie, a POST; the CSP header on every response, kept or not.

Whole answers kept for anonymous readers and served before the middleware stack
(dashboards/page_cache/kept.py ``KeptAnswerMiddleware``): the series page, its figure
and /api/series/. A kept answer is the computed one, byte for byte and header for header;
an upload or an edit makes the next one current; a signed-in reader never gets it; a hit is
not counted by the API's throttle (documented), a miss is."""

from __future__ import annotations

import io
import json
import time

import pytest
from django.test import RequestFactory
from rest_framework.throttling import AnonRateThrottle

from dashboards.page_cache.kept import KeptAnswerMiddleware
from perfdb.models import Alert, Metric, Run
from tests.bundles import make_bundle
from tests.dashboards.data import ingest
from tests.dashboards.series_data import NEW_RUN
from tests.factories import make_alert

pytestmark = pytest.mark.django_db


@pytest.fixture
def kept_30s(settings):
    settings.PAGE_CACHE_STALE_SECONDS = 30


def test_an_anonymous_alerts_page_is_kept_and_a_staff_one_is_not(kept_30s, client, staff, alert):
    first = client.get("/alerts/")
    assert first.status_code == 200 and f"/alerts/{alert.pk}/" in first.content.decode()
    assert not first.cookies, "no CSRF cookie for an anonymous reader: nothing to post"
    Alert.objects.filter(pk=alert.pk).update(status="fixed")  # no signal: only the TTL bounds it
    kept = client.get("/alerts/")
    assert kept.content == first.content, "served the kept copy"
    assert "Content-Security-Policy" in kept and "Cookie" in kept["Vary"]
    client.force_login(staff)
    own = client.get("/alerts/").content.decode()
    assert "fixed</td>" in own and "csrfmiddlewaretoken" in own, "staff see their triage at once"


def test_runs_edited_or_removed_are_never_served_from_a_kept_copy(
    kept_30s, client, alert, django_capture_on_commit_callbacks
):
    url = f"/compare/?base={alert.baseline_runs.get().pk}&new={alert.candidate_run_id}"
    first = client.get(url)
    assert first.status_code == 200
    Alert.objects.filter(pk=alert.pk).update(notes="changed meanwhile")
    assert client.get(url).content == first.content
    run_url = f"/runs/{alert.candidate_run_id}/"
    assert client.get(run_url).status_code == 200
    assert client.get(run_url).status_code == 200  # kept
    with django_capture_on_commit_callbacks(execute=True):
        alert.candidate_run.delete()  # moves the structure version on commit
    assert client.get(run_url).status_code == 404
    assert client.get(url).status_code == 400, "the compare names the run that is gone"


def test_nothing_is_kept_when_the_setting_is_zero(settings, client, alert):
    settings.PAGE_CACHE_STALE_SECONDS = 0
    assert f"/alerts/{alert.pk}/" in client.get("/alerts/").content.decode()
    Alert.objects.filter(pk=alert.pk).delete()
    assert f"/alerts/{alert.pk}/" not in client.get("/alerts/").content.decode()


def test_errors_and_posts_are_never_kept(kept_30s, client, alert):
    assert client.get("/alerts/?status=broken").status_code == 400
    assert client.get("/alerts/?status=broken").status_code == 400
    # CSRF still refuses an unsafe method without a token (enforce_csrf_checks)
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/alerts/", {"alert": alert.pk, "status": "fixed"}).status_code == 403
    alert.refresh_from_db()
    assert alert.status != "fixed"


def test_a_kept_page_is_not_served_to_a_request_with_messages(kept_30s, client, alert):
    client.get(f"/alerts/{alert.pk}/")  # kept for anonymous readers
    Alert.objects.filter(pk=alert.pk).update(notes="a note only the fresh page shows")
    client.cookies["messages"] = "pending"
    assert "a note only the fresh page shows" in client.get(f"/alerts/{alert.pk}/").content.decode()


def test_the_api_runs_list_and_compare_are_kept_for_anonymous_readers(kept_30s, client, alert):
    url = f"/api/compare/?base={alert.baseline_runs.get().pk}&new={alert.candidate_run_id}"
    assert client.get(url).status_code == 200
    first = client.get("/api/runs/").json()
    assert first["count"] == 2
    Alert.objects.filter(pk=alert.pk).update(status="fixed")
    kept = client.get(url).json()["rows"]
    assert client.get("/api/runs/").json() == first
    assert client.get("/api/runs/?page=9").status_code == 404, "errors are never kept"
    alert.candidate_run.delete()  # in the test's transaction: no commit, no version moved
    assert client.get(url).json()["rows"] == kept


@pytest.mark.parametrize(("seconds", "kept"), [(30, True), (2, False)])
def test_the_overview_is_kept_a_third_of_the_stale_seconds(settings, client, alert, seconds, kept):
    """Its run tables may already be served PAGE_CACHE_STALE_SECONDS stale: the page is kept
    a third of that (whole seconds: under 3 s, not at all)."""
    settings.PAGE_CACHE_STALE_SECONDS = seconds
    first = client.get("/")
    assert f"/alerts/{alert.pk}/" in first.content.decode()
    Alert.objects.filter(pk=alert.pk).delete()
    assert (client.get("/").content == first.content) is kept


def test_a_scope_chart_is_kept_and_its_download_never_is(kept_30s, client, alert, rf):
    from dashboards.page_cache.kept import shared_request

    first = client.get("/scaling/")
    assert first.status_code == 200
    assert client.get("/scaling/").content == first.content
    assert shared_request(rf.get("/scaling/?scope=1-1-SMP"))
    assert not shared_request(rf.get("/scaling/?scope=1-1-SMP&format=csv"))
    assert not shared_request(rf.post("/alerts/"))
    with_session = rf.get("/alerts/")
    with_session.COOKIES["sessionid"] = "x"
    assert not shared_request(with_session)


@pytest.mark.django_db(transaction=True)
def test_a_page_read_steadily_is_recomputed_after_the_response_not_by_it(kept_30s, client, alert):
    """Two thirds of its age old, the kept copy is served and a thread of the web process
    computes the page again (with its own connection: it sees what was committed); older
    than its age, the request computes it."""
    from django.core.cache import cache

    from dashboards.page_cache.kept import _entry
    from perfdb.cache.entries import entry_key

    def age_by(seconds: float) -> None:
        key = entry_key(_entry("alerts", "/alerts/"))
        stamp, when, value = cache.get(key)
        cache.set(key, (stamp, when - seconds, value))

    first = client.get("/alerts/").content
    Alert.objects.filter(pk=alert.pk).update(status="fixed")
    age_by(21)
    assert client.get("/alerts/").content == first, "served at once, not computed"
    deadline = time.monotonic() + 20
    while "fixed</td>" not in client.get("/alerts/").content.decode():
        assert time.monotonic() < deadline, "the page was never recomputed"
        time.sleep(0.1)
    Alert.objects.filter(pk=alert.pk).update(status="open")
    age_by(31)
    assert "fixed</td>" not in client.get("/alerts/").content.decode(), "too old: computed"


# --- keys from known parameters ------------------------------------------------------------


def _kept_pages() -> int:
    from django.core.cache import cache

    return sum(":page-" in key for key in cache._cache)  # LocMemCache (config/test_settings.py)


def test_junk_parameters_and_their_order_share_one_kept_page(kept_30s, client, alert):
    url = f"/compare/?base={alert.baseline_runs.get().pk}&new={alert.candidate_run_id}"
    first = client.get(url)
    entries = _kept_pages()
    Alert.objects.filter(pk=alert.pk).update(notes="changed meanwhile")
    base, new = url.split("?")[1].split("&")
    for same in (url + "&utm_source=x", url + "&_=1733390000", f"/compare/?{new}&{base}&z=1"):
        assert client.get(same).content == first.content, same  # the kept copy
    assert _kept_pages() == entries, "no entry per junk value"
    api = "/api/runs/"
    assert client.get(api + "?nocache=1").json() == client.get(api + "?other=2").json()
    assert _kept_pages() == entries + 1  # one entry for the API list, whatever the junk


def test_a_view_reading_a_parameter_outside_the_list_is_never_kept(kept_30s, rf):
    from django.http import HttpResponse

    from dashboards.page_cache import kept as page_cache

    computed = []

    @page_cache.kept_for_anonymous("probe")
    def view(request):
        computed.append(request.GET.get("secret"))  # a name no key holds
        return HttpResponse(f"secret={request.GET.get('secret')}")

    def get(query: str):
        request = rf.get("/probe/" + query)
        page_cache.note_reads(request)
        return view(request).content

    assert get("?secret=1") == b"secret=1"
    assert get("?secret=2") == b"secret=2", "keyed without it, so never served from the copy"
    assert computed == ["1", "2"]
    query = rf.get("/?setup=2&utm=x&metric=1&setup=1").GET
    assert page_cache._known_query(query) == "metric=1&setup=2&setup=1"


COMPUTED = object()  # what the stack behind the middleware answers in these tests


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


def test_an_answer_is_kept_once_it_is_sent_not_before(kept_30s, urls):
    """The store waits for the server to close the response (its body sent), and keeps
    the answer as the view's middleware stack made it, not what wraps it later."""
    from django.core.handlers.wsgi import WSGIHandler

    url = urls[2]  # the figure: the largest answer
    handler = WSGIHandler()
    environ = RequestFactory().get(url).environ
    environ.update({"wsgi.input": io.BytesIO(b""), "wsgi.url_scheme": "http"})
    response = handler.get_response(handler.request_class(environ))
    assert response.status_code == 200
    assert early(url) is COMPUTED, "not kept before the response is closed"
    response.close()
    kept = early(url)
    assert kept is not COMPUTED and kept.content == response.content
    assert "X-Request-ID" not in kept and "X-Request-ID" in response


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
    """The figure carries its series' alert marks, kept under the series' alerts version:
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


def test_no_answer_is_kept_when_the_setting_is_zero(settings, client, urls):
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

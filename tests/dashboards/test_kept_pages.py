"""Compare, run detail and the alert pages kept a few seconds for anonymous readers
(dashboards/page_cache.py), and what is never kept: a session's page, a page that
sets a cookie, a POST; the CSP header on every response, kept or not."""

from __future__ import annotations

import time

import pytest

from perfdb.models import Alert

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
    from dashboards.page_cache import shared_request

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

    from dashboards.page_cache import _entry
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

    from dashboards import page_cache

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

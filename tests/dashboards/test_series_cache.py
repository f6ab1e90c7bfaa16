"""A series' finished answers (dashboards/series_data.py): the /kernels/ page's figure,
its downloads and /api/series/ are served from the cache until runs are added to the
series' scope, and an upload there shows at once."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from perfdb.models import Setup
from tests.bundles import make_bundle
from tests.dashboards.data import ingest
from tests.dashboards.scopes import ingest_on_hardware
from tests.dashboards.series_data import NEW_RUN

pytestmark = pytest.mark.django_db


def _answers(client, setup, metric) -> dict[str, str]:
    query = f"setup={setup.pk}&metric={metric.pk}"
    urls = {
        "api": f"/api/series/?{query}",
        "api csv": f"/api/series/?{query}&format=csv",
        "figure": f"/kernels/figure/?{query}",
        "download": f"/kernels/?{query}&format=json",
    }
    out = {}
    for name, url in urls.items():
        response = client.get(url)
        assert response.status_code == 200, (url, response.content[:200])
        out[name] = response.content.decode()
    return out


def test_an_upload_to_the_series_scope_shows_at_once(
    client,
    series,
    tmp_path,
    django_capture_on_commit_callbacks,
):
    setup, metric = series
    before = _answers(client, setup, metric)
    assert not any("4242.5" in body for body in before.values())
    with django_capture_on_commit_callbacks(execute=True):
        ingest(make_bundle(tmp_path / "new.tar.gz", {"manifest.toml": NEW_RUN}))
    after = _answers(client, setup, metric)
    for name, body in after.items():
        assert "4242.5" in body, name
    api = json.loads(after["api"])
    assert api["kernels"][-1] == "2.6.0" and api["points"][-1]["mean"] == 4242.5


def test_a_warm_series_reads_no_results_even_after_an_upload_elsewhere(
    client,
    series,
    tmp_path,
    django_assert_num_queries,
    django_capture_on_commit_callbacks,
):
    setup, metric = series
    url = f"/api/series/?setup={setup.pk}&metric={metric.pk}"
    first = client.get(url).content
    with django_capture_on_commit_callbacks(execute=True):
        ingest_on_hardware(tmp_path, "P9")  # another scope
    with django_assert_num_queries(0):  # not even the setup and the metric
        assert client.get(url).content == first


OTHER_SETUP_SAME_SCOPE = NEW_RUN.replace("rooms = 10", "rooms = 77")


def test_a_warm_series_page_reads_nothing_after_an_upload_to_another_setup_of_its_scope(
    client,
    series,
    tmp_path,
    django_assert_num_queries,
    django_capture_on_commit_callbacks,
):
    """Cached per setup, not per scope: the scope's other setups' uploads leave it current
    (only the scope's setup picker, with its run counts, is read again)."""
    setup, metric = series
    query = f"setup={setup.pk}&metric={metric.pk}"
    with django_capture_on_commit_callbacks(execute=True):  # the other setup exists before
        ingest(make_bundle(tmp_path / "other.tar.gz", {"manifest.toml": OTHER_SETUP_SAME_SCOPE}))
    urls = [f"/api/series/?{query}", f"/kernels/figure/?{query}"]
    first = [client.get(url).content for url in urls]
    client.get(f"/kernels/?{query}")
    newer = OTHER_SETUP_SAME_SCOPE.replace('kernel = "2.6.0"', 'kernel = "2.6.1"')
    with django_capture_on_commit_callbacks(execute=True):
        ingest(make_bundle(tmp_path / "newer.tar.gz", {"manifest.toml": newer}))
    other = Setup.objects.get(params={"rooms": 77, "messages": 1000})
    assert (other.workload_id, other.hardware_id, other.mode) == (
        setup.workload_id,
        setup.hardware_id,
        setup.mode,
    )
    with django_assert_num_queries(0):
        assert [client.get(url).content for url in urls] == first
    with django_assert_num_queries(1):  # the scope's setups with their run counts
        html = client.get(f"/kernels/?{query}").content.decode()
    assert f'value="{other.pk}"' in html and "(2 runs)" in html


def _series_reads(queries) -> tuple[int, int]:
    """The series' own reads among captured queries: the setup's run ids (what brings the
    series up to date starts with), and its rows with their values."""
    run_ids = 'SELECT "perfdb_run"."id" AS "id" FROM "perfdb_run" WHERE "perfdb_run"."setup_id"'
    return (
        sum(q["sql"].startswith(run_ids) for q in queries),
        sum('"perfdb_result"."value"' in q["sql"] for q in queries),
    )


def test_after_an_upload_the_api_and_the_page_read_the_series_once(client, series):
    """/api/series/, the page, its figure and its download share the series brought up to
    date after an upload to its setup, whichever is asked first: its run ids are read once,
    and no row of it when no run was added (tests/dashboards/test_series_update.py reads
    the runs added)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from perfdb.cache import runs_added

    setup, metric = series
    query = f"setup={setup.pk}&metric={metric.pk}"
    urls = [
        f"/api/series/?{query}",
        f"/kernels/?{query}",
        f"/kernels/figure/?{query}",
        f"/kernels/?{query}&format=csv",
    ]
    before = [client.get(url).content for url in urls]
    for first in range(len(urls)):
        runs_added([f"{setup.workload_id}-{setup.hardware_id}-{setup.mode}"], [setup.pk])
        order = urls[first:] + urls[:first]
        reads = []
        for url in order:
            with CaptureQueriesContext(connection) as captured:
                response = client.get(url)
            assert response.status_code == 200, url
            reads.append(_series_reads(captured.captured_queries))
        assert reads == [(1, 0), (0, 0), (0, 0), (0, 0)], (order, reads)
    assert [client.get(url).content for url in urls] == before


def test_the_page_fetches_its_figure_instead_of_embedding_it(client, series):
    setup, metric = series
    html = client.get(f"/kernels/?setup={setup.pk}&metric={metric.pk}").content.decode()
    assert '<script id="fig-kernels"' not in html
    assert f'data-src="/kernels/figure/?setup={setup.pk}&amp;metric={metric.pk}"' in html
    figure = json.loads(client.get(f"/kernels/figure/?setup={setup.pk}&metric={metric.pk}").content)
    assert figure["layout"]["xaxis"]["categoryarray"] == ["2.3.99-pre3", "2.4.20", "2.5.25"]


@pytest.mark.parametrize(
    "query, param",
    [("setup=999999", "setup"), ("baseline=999999", "baseline"), ("metric=abc", "metric")],
)
def test_a_bad_figure_request_is_a_400_naming_the_parameter(client, series, query, param):
    setup, metric = series
    base = {"setup": setup.pk, "metric": metric.pk}
    key, _, value = query.partition("=")
    params = {**base, key: value}
    response = client.get("/kernels/figure/", params)
    assert response.status_code == 400
    assert param in response.content.decode()


def test_the_series_page_after_an_upload_to_its_setup_takes_three_redis_round_trips(
    client,
    series,
    monkeypatch,
):
    """On a loaded web process every round trip to Redis is a wait for the GIL again, so
    the page computed after an upload reads and writes its parts together: its context with
    its series one read, its scope's pickers one read, and what it computed one store (no
    lock: a setup's entry is brought up to date by each reader that finds it older, never
    served older; bench/load.py)."""
    from django.core.cache import cache
    from django.test import override_settings

    from perfdb import cache as page_cache
    from tests.perfdb.cache.redis_backend import count_trips, redis_caches

    setup, metric = series
    url = f"/kernels/?setup={setup.pk}&metric={metric.pk}"
    with override_settings(CACHES=redis_caches(settings.REDIS_URL), PAGE_CACHE_WARM=False):
        try:
            assert client.get(url).status_code == 200
            scope = page_cache.scope_key(setup.workload_id, setup.hardware_id, setup.mode)
            page_cache.runs_added([scope], [setup.pk])
            trips = count_trips(monkeypatch)
            response = client.get(url)
            monkeypatch.undo()
            assert response.status_code == 200
            assert trips == ["MGET", "MGET", "pipeline"]  # context, pickers; one store
        finally:
            redis_client = cache._cache.get_client(write=True)
            redis_client.delete(*redis_client.keys(cache.make_key("*")) or ["-"])


def test_the_figure_computed_after_an_upload_is_stored_once_with_its_kept_answer(
    client,
    series,
):
    """The figure is joined from the series' kept pieces, so it is stored once per setup
    version (its entry per query) besides the whole answer kept for anonymous readers: no
    third copy of its bytes under its metric and baseline ids."""
    from django.core.cache import cache
    from django.test import override_settings

    from perfdb import cache as page_cache
    from tests.perfdb.cache.redis_backend import redis_caches

    setup, metric = series
    url = f"/kernels/figure/?setup={setup.pk}&metric={metric.pk}"
    caches = redis_caches(settings.REDIS_URL)
    with override_settings(CACHES=caches, PAGE_CACHE_WARM=False, PAGE_CACHE_STALE_SECONDS=30):
        redis_client = cache._cache.get_client(write=True)
        try:
            client.get(url)
            scope = page_cache.scope_key(setup.workload_id, setup.hardware_id, setup.mode)
            page_cache.runs_added([scope], [setup.pk])
            redis_client.delete(*redis_client.keys(cache.make_key("*")))
            body = client.get(url).content
            assert b"across kernels" in body
            stored = [redis_client.get(key) for key in redis_client.keys(cache.make_key("*"))]
            assert sum(body in value for value in stored if value) == 2
        finally:
            redis_client.delete(*redis_client.keys(cache.make_key("*")) or ["-"])

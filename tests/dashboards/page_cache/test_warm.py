"""Page data warmed after an upload (dashboards/page_cache/warm.py): the first visitor of
the overview or the kernels page after an upload reads the cache, and reads what the
upload added."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dashboards.page_cache import warm
from dashboards.page_data import scope_stats
from perfdb import cache as page_cache
from perfdb.models import Run
from tests.dashboards.data import load
from tests.dashboards.scopes import ingest_on_hardware

pytestmark = pytest.mark.django_db


def test_after_the_warm_the_first_home_page_computes_nothing_and_shows_the_upload(
    client, tmp_path, django_capture_on_commit_callbacks, django_assert_num_queries
):
    load(tmp_path)
    assert client.get("/").status_code == 200  # cached before the upload
    with django_capture_on_commit_callbacks(execute=True):
        upload = ingest_on_hardware(tmp_path, "P9")
    warm.pages_after_upload()
    # uploads, open alerts, demo uploads: the overview and its run tables (recent runs
    # among them) come from the cache
    with django_assert_num_queries(3):
        html = client.get("/").content.decode()
    newest = Run.objects.filter(pk__in=upload.run_ids).order_by("-created_at", "-id").first()
    assert f'href="/kernels/?setup={newest.setup_id}">across kernels' in html
    workloads, _, _ = scope_stats.overview_cached()
    assert sum(w.run_count for w in workloads) == Run.objects.count()


def test_runs_added_queues_the_warm_only_when_asked(settings):
    """Queued by name on the broker (config/test_settings.py turns it off for other tests):
    the message is on the ingest queue's Redis list until a worker takes it."""
    import redis

    from tests.conftest import free_port

    settings.PAGE_CACHE_WARM = True
    # a queue of this test's own: the session's worker consumes the routed ingest queue
    queue = settings.CELERY_PAGES_QUEUE = f"warm-test-{free_port()}"
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    before = broker.llen(queue)
    page_cache.runs_added(["1-1-SMP"])
    queued = broker.llen(queue) - before
    broker.delete(queue)  # take our message back off the test broker
    assert queued == 1
    settings.PAGE_CACHE_WARM = False
    page_cache.runs_added(["1-1-SMP"])
    assert broker.llen(queue) == 0


def test_a_scaling_chart_someone_opened_is_recomputed_by_the_warm_not_its_next_visitor(
    client, tmp_path, django_assert_num_queries
):
    from dashboards.page_data.scopes import scope_index

    load(tmp_path)
    scope = next(s.key for s in scope_index().scopes if s.has_varying_params)
    url = f"/scaling/?scope={scope}"
    assert client.get(url).status_code == 200  # someone opened it: cached
    with CaptureQueriesContext(connection) as warm_page:
        client.get(url)
    page_cache.runs_added([scope])
    with CaptureQueriesContext(connection) as missed:
        client.get(url)  # the chart read again by the visitor
    assert len(missed) > len(warm_page)
    page_cache.runs_added([scope])
    warm.pages_after_upload([scope])
    with django_assert_num_queries(len(warm_page)):
        assert client.get(url).status_code == 200


def test_warms_queued_behind_one_under_the_same_versions_read_nothing(
    client, tmp_path, django_assert_num_queries, monkeypatch
):
    """Uploads faster than the warms: the warms queued behind the first find the versions
    it warmed and skip, reading no entry (a scope's ~100 scaling pieces each, unpickled)
    and making no query; runs added to a scope make its next warm work."""
    from dashboards.page_data.scopes import scope_index

    load(tmp_path)
    scope = next(s.key for s in scope_index().scopes if s.has_varying_params)
    assert client.get(f"/scaling/?scope={scope}").status_code == 200  # someone opened it
    page_cache.runs_added([scope])
    warm.pages_after_upload([scope])
    reads: list[int] = []
    entries = page_cache.cached_entries
    monkeypatch.setattr(
        page_cache, "cached_entries", lambda *a, **k: reads.append(1) or entries(*a, **k)
    )
    with django_assert_num_queries(0):
        warm.pages_after_upload([scope])
    assert reads == []
    page_cache.runs_added([scope])
    with CaptureQueriesContext(connection) as again:
        warm.pages_after_upload([scope])
    assert len(again) > 0, "a new version of the scope (and of the data) is warmed"


def upload_with_the_warm(tmp_path, settings, on_commit) -> None:
    """A one-run upload to the series of rooms = 10, with the warm-up after its commit on
    (its task queued on a queue of its own, removed after)."""
    import redis

    from tests.bundles import make_bundle
    from tests.conftest import free_port
    from tests.dashboards.data import ingest
    from tests.dashboards.series_data import NEW_RUN

    settings.PAGE_CACHE_WARM = True
    queue = settings.CELERY_PAGES_QUEUE = f"warm-test-{free_port()}"  # the warm task's
    try:
        with on_commit(execute=True):
            ingest(make_bundle(tmp_path / "new.tar.gz", {"manifest.toml": NEW_RUN}))
    finally:
        redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(queue)


def test_the_writers_commit_recomputes_the_uploaded_scopes_setup_picker(
    client, tmp_path, settings, django_capture_on_commit_callbacks
):
    """The uploader's first series page finds its scope's setup picker computed, with the
    run count the upload moved: the writer's process did it right after its commit."""
    from dashboards.page_data import setup_picker
    from perfdb.models import Metric, Setup

    load(tmp_path)
    setup = Setup.objects.get(params={"rooms": 10, "messages": 1000})
    metric = Metric.objects.get(name="throughput")
    assert client.get(f"/kernels/?setup={setup.pk}&metric={metric.pk}").status_code == 200
    runs = Run.objects.filter(setup=setup).count()
    scope = page_cache.scope_key(setup.workload_id, setup.hardware_id, setup.mode)
    upload_with_the_warm(tmp_path, settings, django_capture_on_commit_callbacks)
    assert Run.objects.filter(setup=setup).count() == runs + 1
    with CaptureQueriesContext(connection) as queries:
        setups = setup_picker.setup_choices(
            {scope: (setup.workload_id, setup.hardware_id, setup.mode)}
        )
    assert len(queries) == 0  # current: nothing computed
    assert [s["run_count"] for s in setups[scope] if s["id"] == setup.pk] == [runs + 1]


def test_the_writers_commit_brings_the_series_someone_reads_up_to_date(
    client, tmp_path, settings, django_capture_on_commit_callbacks
):
    """The uploader's first look at a series it reads (its page, the page's figure, its
    /api/series/ JSON) finds each answer current, with the run just added: the writer's
    process brought them up to date right after its commit, so the request reads no
    results."""
    from perfdb.models import Metric, Setup

    load(tmp_path)
    setup = Setup.objects.get(params={"rooms": 10, "messages": 1000})
    metric = Metric.objects.get(name="throughput")
    query = f"setup={setup.pk}&metric={metric.pk}"
    urls = [f"/kernels/?{query}", f"/kernels/figure/?{query}", f"/api/series/?{query}"]
    warm_reads = []
    for url in urls:
        assert client.get(url).status_code == 200  # kept before the upload
        with CaptureQueriesContext(connection) as reads:
            assert client.get(url).status_code == 200
        warm_reads.append(len(reads))
    upload_with_the_warm(tmp_path, settings, django_capture_on_commit_callbacks)
    new = Run.objects.get(setup=setup, kernel__version="2.6.0")
    settings.PAGE_CACHE_WARM = False
    for url, before in zip(urls, warm_reads, strict=True):
        with CaptureQueriesContext(connection) as reads:
            response = client.get(url)
        assert response.status_code == 200
        assert len(reads) == before, f"{url} computed after the upload: {reads.captured_queries}"
    body = client.get(f"/api/series/?{query}").json()
    assert [p["kernel"] for p in body["points"] if p["run"] == new.pk] == ["2.6.0"]
    figure = client.get(f"/kernels/figure/?{query}").content.decode()
    assert "2.6.0" in figure


def test_alerts_written_draw_the_marks_of_a_figure_someone_reads(
    client, tmp_path, settings, django_capture_on_commit_callbacks
):
    """The uploader's first look at the chart after the check finds its alert marks drawn:
    the process that wrote the alerts drew them right after their commit, so the figure's
    request makes no query. A figure nobody read is left to its first reader."""
    from perfdb.models import Metric, Setup
    from tests.factories import make_alert

    load(tmp_path)
    setup = Setup.objects.get(params={"rooms": 10, "messages": 1000})
    other = Setup.objects.get(params={"rooms": 20, "messages": 1000})
    metric = Metric.objects.get(name="throughput")
    figure = f"/kernels/figure/?setup={setup.pk}&metric={metric.pk}"
    assert "alert:" not in client.get(figure).content.decode()  # its marks kept
    settings.PAGE_CACHE_WARM = True
    with django_capture_on_commit_callbacks(execute=True):
        make_alert(Run.objects.filter(setup=setup).first(), metric)
    elsewhere = Run.objects.filter(setup=other).first()
    with (
        CaptureQueriesContext(connection) as drawn,
        django_capture_on_commit_callbacks(execute=True),
    ):
        make_alert(elsewhere, metric)
    alert_reads = [q for q in drawn.captured_queries if 'FROM "perfdb_alert"' in q["sql"]]
    assert alert_reads == [], "the marks of a figure nobody read are not drawn"
    settings.PAGE_CACHE_WARM = False
    with CaptureQueriesContext(connection) as reads:
        body = client.get(figure).content.decode()
    assert len(reads) == 0, reads.captured_queries
    assert "alert: open regression" in body


# --- after a deploy or a Redis restart: an emptied cache ---------------------------------------


@pytest.mark.parametrize("url", ["/", "/scaling/", "/kernel-time/", "/wakeups/"])
def test_the_warm_after_an_emptied_cache_computes_each_pages_default_view(
    client, tmp_path, django_assert_num_queries, url
):
    from django.core.cache import cache

    load(tmp_path)
    assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as warm_page:
        client.get(url)
    cache.clear()  # a deploy of new code (a new key prefix) or a Redis restart
    with CaptureQueriesContext(connection) as cold:
        client.get(url)
    assert len(cold) > len(warm_page)
    cache.clear()
    assert warm.pages_after_deploy()
    assert not warm.pages_after_deploy()  # its mark is in the cache: nothing to do
    with django_assert_num_queries(len(warm_page)):
        assert client.get(url).status_code == 200


def test_one_warm_of_an_emptied_cache_at_a_time(tmp_path, django_assert_num_queries):
    from django.core.cache import cache

    load(tmp_path)
    cache.clear()
    cache.add(warm.DEPLOY_WARMING_KEY, 1)  # another worker is at it
    with django_assert_num_queries(0):
        assert not warm.pages_after_deploy()
    cache.delete(warm.DEPLOY_WARMING_KEY)
    assert warm.pages_after_deploy()

"""A series' finished answers (dashboards/page_data/series_data.py): the /kernels/ page's figure,
its downloads and /api/series/ are served from the cache until runs are added to the
series' scope, and an upload there shows at once.

A series brought up to date after an upload (dashboards/chart_queries/kernel_series.py
``series_points(since=...)``, through dashboards/page_data/series_data.py): only the runs added are
read, the result is the series read whole, and a read right after an upload shows it."""

from __future__ import annotations

import json
import re

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dashboards import chart_queries as cq
from dashboards.page_data import series_data, setup_picker
from perfdb import cache as page_cache
from perfdb.cache.entries import entry_key, lock_key
from perfdb.models import Run, Setup
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
    and no row of it when no run was added (the tests of a series brought up to
    date below read the runs added)."""
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


def test_the_series_page_after_an_upload_reads_its_parts_together(
    client,
    series,
    monkeypatch,
):
    """On a loaded web process every round trip to Redis is a wait for the GIL again, so
    the page computed after an upload reads and writes its parts together: its context with
    its baseline options one read, the series behind them one read (only when they are
    older than the upload), its scope's pickers one read, and what it computed one store
    (no lock: a setup's entry is brought up to date by each reader that finds it older,
    never served older; bench/load.py). Once the writer's process brought the page's
    parts up to date (``series_after_upload``), the page reads two entries and the pickers,
    and stores nothing."""
    from django.core.cache import cache
    from django.test import override_settings

    from perfdb import cache as page_cache
    from tests.perfdb.cache.redis_backend import count_trips, redis_caches

    setup, metric = series
    url = f"/kernels/?setup={setup.pk}&metric={metric.pk}"
    scope = page_cache.scope_key(setup.workload_id, setup.hardware_id, setup.mode)

    def trips_of_page() -> list[str]:
        trips = count_trips(monkeypatch)
        response = client.get(url)
        monkeypatch.undo()
        assert response.status_code == 200
        return list(trips)

    with override_settings(CACHES=redis_caches(settings.REDIS_URL), PAGE_CACHE_WARM=False):
        try:
            assert client.get(url).status_code == 200
            page_cache.runs_added([scope], [setup.pk])
            # context and options, the series, pickers; one store
            assert trips_of_page() == ["MGET", "MGET", "MGET", "pipeline"]
            page_cache.runs_added([scope], [setup.pk])
            series_data.series_after_upload([(setup.pk, metric.pk)])
            setup_picker.pickers_warm([scope])
            assert trips_of_page() == ["MGET", "MGET"]  # context and options, pickers
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


# Runs landing before, between and after the series' kernels, a patch set on a kernel it
# has, and a run of the setup without the series' metric (it adds no point).
UPLOADS = (
    NEW_RUN,
    NEW_RUN.replace('"2.6.0"', '"2.4.0"').replace("4242.5", "4100.25"),
    NEW_RUN.replace('"2.6.0"', '"2.2.12-20"').replace("4242.5", "3900"),
    NEW_RUN.replace('"2.6.0"', '"2.4.20"\npatches = ["task"]').replace("4242.5", "4300"),
    NEW_RUN.replace('"2.6.0"', '"2.6.1"')
    .replace("throughput = 4242.5", "latency_us = 12")
    .replace("[[run]]", '[metric.latency_us]\nunit = "us"\nbetter = "lower"\n[[run]]'),
)


def _metric(metric) -> dict:
    return {"id": metric.pk, "name": metric.name, "unit": metric.unit, "better": metric.better}


def _runs_asked(sql: str) -> list[int]:
    """The run ids a series query of the runs added asks for (``= ANY(...)``)."""
    asked = re.search(r"= ANY\('\{([\d,]*)\}'", sql)
    assert asked, sql
    return [int(n) for n in asked.group(1).split(",")]


def _upload(tmp_path, manifest: str, n: int, capture) -> None:
    with capture(execute=True):  # the commit moves the setup's version
        ingest(make_bundle(tmp_path / f"u{n}.tar.gz", {"manifest.toml": manifest}))


def test_a_series_brought_up_to_date_is_the_series_read_whole(
    series,
    tmp_path,
    django_capture_on_commit_callbacks,
):
    setup, metric = series
    wanted = _metric(metric)
    series_data.series(setup.pk, wanted)  # cached before the uploads
    for n, manifest in enumerate(UPLOADS):
        _upload(tmp_path, manifest, n, django_capture_on_commit_callbacks)
        added = Run.objects.filter(setup=setup).order_by("-id").values_list("id", flat=True)[0]
        with CaptureQueriesContext(connection) as captured:
            updated = series_data.series(setup.pk, wanted)
        rows = [
            q["sql"] for q in captured.captured_queries if '"perfdb_result"."value"' in q["sql"]
        ]
        assert len(rows) == 1 and _runs_asked(rows[0]) == [added]  # not the series
        assert updated == cq.series_points(setup_id=setup.pk, metric=wanted)
    kernels = updated.series.kernels
    assert kernels[0] == "2.2.12-20" and kernels[-1] == "2.6.0" and "2.4.0" in kernels
    assert [p.run.patches for p in updated.series.points if p.value == 4300] == [("task",)]


def test_the_api_and_the_figure_right_after_an_upload_show_it_while_another_computes(
    client,
    series,
    tmp_path,
    django_capture_on_commit_callbacks,
):
    """Another process holding the lock of every entry of the series (as while it computes
    them after the same upload) does not make a reader wait or serve it the series as it was
    before the upload."""
    setup, metric = series
    query = f"setup={setup.pk}&metric={metric.pk}"
    urls = (f"/api/series/?{query}", f"/kernels/figure/?{query}", f"/kernels/?{query}")
    for url in urls:
        assert "4242.5" not in client.get(url).content.decode()
    keys = [page_cache.STRUCTURE_KEY, f"{page_cache.SETUP_VERSION_PREFIX}{setup.pk}"]
    _upload(tmp_path, NEW_RUN, 0, django_capture_on_commit_callbacks)
    stamp = tuple(cache.get(key) for key in keys)
    for key in (
        page_cache.cache_key(
            "series-answer", kind="api-json", key=page_cache.cache_key("metric", id=metric.pk)
        ),
        page_cache.cache_key("series-finished", metric=metric.pk),
        page_cache.cache_key("series-figure-of-query", metric=str(metric.pk), baseline=None),
        page_cache.cache_key("series-page-context", metric=str(metric.pk)),
    ):
        ((name, _),) = page_cache.setup_entry(key, setup.pk).items()
        assert cache.get(entry_key(name)) is not None, "an entry the pages stored"
        assert cache.add(lock_key(name, stamp), 1, 60)
    api = json.loads(client.get(urls[0]).content)
    assert api["points"][-1]["mean"] == 4242.5 and api["kernels"][-1] == "2.6.0"
    figure = json.loads(client.get(urls[1]).content)
    assert 4242.5 in figure["data"][0]["y"]
    assert "2.6.0" in client.get(urls[2]).content.decode()


def test_the_api_joined_from_its_points_texts_is_what_drf_writes_whole(
    client,
    series,
    tmp_path,
    django_capture_on_commit_callbacks,
):
    """/api/series/ is joined from each point's JSON (series_data.FinishedSeries), and
    after an upload from the answer of before with the new points' JSON: byte for byte what
    DRF's JSONRenderer writes from the whole answer, a kernel name that JavaScript must not
    see raw (U+2028) and a setup's params included."""
    from rest_framework.renderers import JSONRenderer

    from dashboards.api.series import SeriesView
    from perfdb.models import Metric, Setup

    setup, metric = series
    url = f"/api/series/?setup={setup.pk}&metric={metric.pk}"
    client.get(url)  # kept, then brought up to date by the uploads
    odd = NEW_RUN.replace('"2.6.0"', '"2.6.1"\npatches = ["odd\u2028<b>"]')
    for n, manifest in enumerate((NEW_RUN, odd)):
        _upload(tmp_path, manifest, n, django_capture_on_commit_callbacks)
        body = client.get(url).content
        whole = SeriesView._series(
            Setup.objects.select_related("workload", "hardware").get(pk=setup.pk),
            Metric.objects.get(pk=metric.pk),
        )
        assert body == JSONRenderer().render(whole)
    assert b"\\u2028" in body and "\u2028".encode() not in body
    assert json.loads(body)["points"][-1]["patches"] == ["odd\u2028<b>"]


def test_a_kept_series_pickles_without_its_points_objects(series):
    """The cached series is plain rows and texts (fast to read and store); its ``Point``s
    are made again on use and equal a whole read."""
    import pickle

    setup, metric = series
    finished = series_data.finished_series(setup.pk, _metric(metric))
    whole = cq.series_points(setup_id=setup.pk, metric=_metric(metric))
    assert finished.data == whole  # made now
    again = pickle.loads(pickle.dumps(finished, -1))
    assert "data" not in again.__dict__ and b"RunInfo" not in pickle.dumps(finished, -1)
    assert again.data == whole and again.values() == {
        p.run.run_id: p.value for p in whole.series.points
    }


def test_the_figure_after_an_upload_reads_neither_the_setup_nor_every_row(
    client,
    series,
    tmp_path,
    django_capture_on_commit_callbacks,
):
    """The figure kept before an upload is brought up to date from the setup's kept metric
    ids and series: the run added is read, the setup is not, and the figure is the one
    computed from nothing."""
    setup, metric = series
    url = f"/kernels/figure/?setup={setup.pk}&metric={metric.pk}"
    client.get(url)
    _upload(tmp_path, NEW_RUN, 0, django_capture_on_commit_callbacks)
    with CaptureQueriesContext(connection) as captured:
        body = client.get(url).content
    sqls = [q["sql"] for q in captured.captured_queries]
    assert not any('FROM "perfdb_setup"' in sql for sql in sqls), sqls
    rows = [sql for sql in sqls if '"perfdb_result"."value"' in sql]
    assert len(rows) == 1 and len(_runs_asked(rows[0])) == 1  # the run added only
    cache.clear()
    assert client.get(url).content == body
    assert 4242.5 in json.loads(body)["data"][0]["y"]


def test_the_figure_joined_from_kept_pieces_is_the_figure_made_whole(
    client,
    series,
    tmp_path,
    django_capture_on_commit_callbacks,
):
    """After each upload the figure is joined from the pieces kept with the series (only
    the new points' made): without a baseline and scaled by one, its alert marks drawn in,
    it is byte for byte the figure made whole from the series read now, and value for value
    what Plotly's graph objects make of it. The series has trials, a patch set, a labelled
    run and runs landing before, between and after its kernels."""
    from dashboards.figures import across_kernels_figure
    from dashboards.figures.kernels import with_marks
    from dashboards.pure.chartdata import Baseline
    from tests.dashboards.page_figures import across_kernels_by_graph_objects
    from tests.factories import make_alert

    setup, metric = series
    base = Run.objects.get(setup=setup, label="Base1")
    make_alert(Run.objects.get(setup=setup, patch_set__name="pri_preempt"), metric)
    make_alert(base, metric, status="fixed")
    query = f"/kernels/figure/?setup={setup.pk}&metric={metric.pk}"
    urls = {None: query, base.pk: f"{query}&baseline={base.pk}"}
    for url in urls.values():
        client.get(url)  # kept, then brought up to date by the uploads
    for n, manifest in enumerate(UPLOADS):
        _upload(tmp_path, manifest, n, django_capture_on_commit_callbacks)
        whole = cq.series_points(setup_id=setup.pk, metric=_metric(metric)).series
        for baseline_id, url in urls.items():
            body = client.get(url).content
            baseline = None
            if baseline_id is not None:
                value = next(p.value for p in whole.points if p.run.run_id == baseline_id)
                baseline = Baseline(value, "Base1")
            figure = across_kernels_figure(whole, baseline)
            made = json.dumps(figure, separators=(",", ":")).encode()
            marks = series_data.series_marks(setup.pk, _metric(metric), baseline_id)
            assert body == with_marks(made, marks)
            assert figure == across_kernels_by_graph_objects(whole, baseline)
            assert b"alert: open regression" in body and b"alert: triaged" in body
    assert len(whole.points) == 8 and len(figure["data"]) == 3  # stock, task, pri_preempt


def test_the_api_after_an_upload_reads_its_answer_with_the_throttle(client, series, monkeypatch):
    """/api/series/ computed after an upload reads its kept answer and the throttle's
    counts in one round trip, the series it is joined from in another (only when the
    answer is older than the upload), then stores the counts and the two entries. Once
    the writer's process brought the answer up to date (``series_after_upload``), the
    request reads it with the counts and stores only the counts."""
    from django.conf import settings
    from django.test import override_settings

    from tests.perfdb.cache.redis_backend import count_trips, redis_caches

    setup, metric = series
    url = f"/api/series/?setup={setup.pk}&metric={metric.pk}"
    scope = series_data.setup_scope(_setup_dict(setup))

    def trips_of_api() -> list[str]:
        trips = count_trips(monkeypatch)
        response = client.get(url)
        monkeypatch.undo()
        assert response.content == before
        return list(trips)

    with override_settings(CACHES=redis_caches(settings.REDIS_URL)):
        try:
            before = client.get(url).content
            page_cache.runs_added([scope], [setup.pk])
            # read (counts, answer); the counts stored; the series read; both entries stored
            assert trips_of_api() == ["MGET", "pipeline", "MGET", "pipeline"]
            page_cache.runs_added([scope], [setup.pk])
            series_data.series_after_upload([(setup.pk, metric.pk)])
            assert trips_of_api() == ["MGET", "pipeline"]
        finally:
            redis_client = cache._cache.get_client(write=True)
            redis_client.delete(*redis_client.keys(cache.make_key("*")) or ["-"])


def _setup_dict(setup) -> dict:
    return {"workload_id": setup.workload_id, "hardware_id": setup.hardware_id, "mode": setup.mode}


def test_an_indented_api_answer_is_written_whole_and_kept_apart(client, series):
    """A client asking for indented JSON gets it (DRF's ``indent``), not the compact body
    joined from the points' texts, and the compact one stays compact."""
    setup, metric = series
    url = f"/api/series/?setup={setup.pk}&metric={metric.pk}"
    indented = client.get(url, HTTP_ACCEPT="application/json; indent=2").content
    compact = client.get(url).content
    assert b'\n  "setup"' in indented and b"\n" not in compact
    assert json.loads(indented) == json.loads(compact)
    assert client.get(url, HTTP_ACCEPT="application/json; indent=2").content == indented

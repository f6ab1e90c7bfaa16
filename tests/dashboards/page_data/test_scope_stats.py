"""Targeted invalidation: an upload recomputes only the scopes it wrote to.

Entries cached per scope (its charts, its setups' run counts) survive an upload to another
scope; the overview and the scope picker, rebuilt from those entries after every upload, show
the new runs at once without reading every run again.
"""

from __future__ import annotations

import tarfile

import pytest

from dashboards.page_data import scope_stats
from perfdb import cache as page_cache
from perfdb.cache import entries, refresh
from perfdb.cache.versions import current_versions
from perfdb.models import Run, Setup
from tests.dashboards.data import load
from tests.dashboards.scopes import ingest_on_hardware, scope_key

pytestmark = pytest.mark.django_db


def counter():
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    return compute


def test_a_scope_entry_survives_runs_added_elsewhere_not_its_own():
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1
    page_cache.runs_added(["2-1-SMP"])
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 2
    page_cache.data_changed()  # runs removed or edited: every scope
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 3


def test_runs_added_still_moves_the_data_version():
    """Values cached with ``cached`` read every run: any upload makes them stale."""
    compute = counter()
    assert page_cache.cached("t:all", compute) == 1
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached("t:all", compute) == 2


def test_cached_per_scope_computes_only_the_missing_scopes():
    asked: list[list[str]] = []

    def compute(scopes):
        asked.append(list(scopes))
        return {s: f"value of {s}" for s in scopes}

    scopes = ["1-1-SMP", "2-1-SMP", "3-1-UP"]
    assert page_cache.cached_per_scope("t:per", scopes, compute)["3-1-UP"] == "value of 3-1-UP"
    page_cache.runs_added(["2-1-SMP"])
    page_cache.cached_per_scope("t:per", scopes, compute)
    assert asked == [scopes, ["2-1-SMP"]]


def test_an_upload_recomputes_its_scope_only(tmp_path, django_capture_on_commit_callbacks):
    load(tmp_path)
    first = Setup.objects.order_by("id").first()
    compute = counter()
    key = scope_key(first)
    page_cache.cached_in_scope("t:first-scope-chart", key, compute)
    with django_capture_on_commit_callbacks(execute=True):
        upload = ingest_on_hardware(tmp_path, "P9")  # a new scope
    new_scope = scope_key(Run.objects.get(pk=upload.run_ids[0]).setup)
    assert new_scope != key
    assert page_cache.cached_in_scope("t:first-scope-chart", key, compute) == 1


def test_the_overview_counts_follow_uploads(tmp_path, django_capture_on_commit_callbacks):
    load(tmp_path)
    workloads, hardware, latest = scope_stats.overview()
    assert sum(w.run_count for w in workloads) == Run.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        upload = ingest_on_hardware(tmp_path, "P9")
    workloads, hardware, latest = page_cache.cached("t:overview", scope_stats.overview)
    assert sum(w.run_count for w in workloads) == Run.objects.count()
    assert sum(h.run_count for h in hardware) == Run.objects.count()
    newest = Run.objects.filter(pk__in=upload.run_ids).order_by("-created_at", "-id").first()
    assert newest.pk in {r.pk for r in latest}
    every = scope_stats.scope_runs(scope_stats.scopes_all())
    counts = {r.setup_id: r.run_count for rows in every.values() for r in rows}
    for setup in Setup.objects.all():
        assert counts.get(setup.pk, 0) == setup.runs.count()


def another_process_computes(key: str, scope: str) -> None:
    """Hold the lock ``cached_per_scope`` takes while it computes ``key`` of ``scope`` now."""
    from django.core.cache import cache

    stamp = current_versions([page_cache.STRUCTURE_KEY, "perfdb:scope-version:" + scope])
    lock = entries.lock_key(entries.entry_name(key, scope), tuple(stamp))
    assert cache.add(lock, 1, 60)


def test_while_another_process_computes_the_previous_value_is_served():
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1
    page_cache.runs_added(["1-1-SMP"])
    another_process_computes("t:chart", "1-1-SMP")
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1, "computed again"
    page_cache.runs_added(["1-1-SMP"])  # nobody computing this version: computed here
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 2
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 2


def test_runs_removed_are_never_served_stale():
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1
    page_cache.data_changed()
    another_process_computes("t:chart", "1-1-SMP")
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 2


def test_cached_serves_the_previous_value_while_another_process_computes():
    from django.core.cache import cache

    compute = counter()
    assert page_cache.cached("t:all", compute) == 1
    page_cache.runs_added(["1-1-SMP"])
    stamp = current_versions([page_cache.STRUCTURE_KEY, page_cache.VERSION_KEY])
    assert cache.add(entries.lock_key(entries.entry_name("t:all", "*all*"), tuple(stamp)), 1)
    assert page_cache.cached("t:all", compute) == 1
    page_cache.data_changed()
    assert page_cache.cached("t:all", compute) == 2


def test_the_scope_picker_survives_uploads_to_existing_setups(
    tmp_path, django_capture_on_commit_callbacks, monkeypatch
):
    """Its entries depend on which setups exist: built once, not after every upload."""
    from dashboards.page_data import scope_stats, scopes

    load(tmp_path)
    with django_capture_on_commit_callbacks(execute=True):
        ingest_on_hardware(tmp_path, "P9")
    before = scopes.scope_index().scopes
    built: list[int] = []
    original = scope_stats.scopes_with_runs

    def counted(**kwargs):
        built.append(1)
        return original(**kwargs)

    monkeypatch.setattr(scope_stats, "scopes_with_runs", counted)
    page_cache.runs_added([s.key for s in before])  # more runs, no new setup
    assert scopes.scope_index().scopes == before
    assert not built
    with django_capture_on_commit_callbacks(execute=True):
        upload = ingest_on_hardware(tmp_path, "P10")  # new setups: a new scope
    after = scopes.scope_index().scopes
    new_scope = scope_key(Run.objects.get(pk=upload.run_ids[0]).setup)
    assert built and new_scope in {s.key for s in after}


# --- served stale while recomputed in the background (PAGE_CACHE_STALE_SECONDS) ---------------


@pytest.fixture
def stale_for_30s(settings, monkeypatch):
    """Served stale up to 30 s; each previous value is ``age`` seconds old; the refreshes
    queued for the background thread are kept so that a test can count them."""
    settings.PAGE_CACHE_STALE_SECONDS = 30
    started: list[object] = []
    age = {"seconds": 15.0}
    submit = refresh.submit
    monkeypatch.setattr(refresh, "submit", lambda job: started.append(job) or submit(job))
    monkeypatch.setattr(entries, "entry_age", lambda entry: age["seconds"])
    return started, age


def test_a_young_previous_value_is_served_and_recomputed_in_the_background(stale_for_30s):
    started, _ = stale_for_30s
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    assert len(started) == 1
    refresh.wait_idle()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 2
    assert len(started) == 1, "the value stored by the background is current"


def test_a_very_young_one_is_served_without_recomputing_and_an_old_one_is_computed(
    stale_for_30s,
):
    started, age = stale_for_30s
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    page_cache.runs_added(["1-1-SMP"])
    age["seconds"] = 2.0  # under a third of 30 s: recomputed a little later, not now
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    assert not started
    age["seconds"] = 31.0  # too old to serve: the request computes it
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 2
    assert not started


def test_stale_serving_is_only_where_asked_and_never_after_runs_removed(stale_for_30s):
    started, _ = stale_for_30s
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 2  # not asked
    page_cache.data_changed()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 3
    assert not started


def test_a_computation_never_reads_a_stale_copy(stale_for_30s):
    """A value computed from a stale copy would be stored as current: inside a computation
    every read is current."""
    started, _ = stale_for_30s
    inner = counter()
    assert page_cache.cached_in_scope("t:inner", "1-1-SMP", inner, stale=True) == 1
    page_cache.runs_added(["1-1-SMP"])

    def outer() -> int:
        return 10 * page_cache.cached_in_scope("t:inner", "1-1-SMP", inner, stale=True)

    assert page_cache.cached_in_scope("t:outer", "1-1-SMP", outer, stale=True) == 20
    assert not started


@pytest.mark.django_db(transaction=True)
def test_the_default_scaling_chart_after_a_new_build_is_drawn_in_the_background(
    stale_for_30s, tmp_path, client, monkeypatch
):
    """An upload of a new kernel changes which builds the scaling chart shows by default.
    Its visitors are served the chart as it was (stale like every scope chart: builds and
    figure of one moment) and the chart with the new build is drawn in the background, never
    by a request. Keyed by the builds it shows, the default chart had had no previous value
    once the builds were refreshed: the first visitor after each upload drew it."""
    import threading

    from dashboards.page_data import scaling, scopes
    from tests.bundles import make_bundle
    from tests.dashboards.data import dashboard_bundle, ingest

    started, age = stale_for_30s
    drawn_by: list[int] = []
    view = scaling._scaling_view
    monkeypatch.setattr(
        scaling,
        "_scaling_view",
        lambda chart: drawn_by.append(threading.get_ident()) or view(chart),
    )
    load(tmp_path)
    scope = next(s.key for s in scopes.scope_index().scopes if s.has_varying_params)
    url = f"/scaling/?scope={scope}"
    assert "2.6.1" not in client.get(url).content.decode()
    with tarfile.open(dashboard_bundle(tmp_path / "again.tar.gz")) as src:
        files = {m.name: src.extractfile(m).read() for m in src.getmembers()}
    files["manifest.toml"] = files["manifest.toml"].decode().replace('"2.5.25"', '"2.6.1"')
    ingest(make_bundle(tmp_path / "newer.tar.gz", files))  # its commit moves the scope
    drawn_by.clear()
    served = client.get(url)
    assert served.status_code == 200 and "2.6.1" not in served.content.decode()
    assert started, "recomputed in the background"
    refresh.wait_idle()
    age["seconds"] = 31.0  # the page kept whole is too old now: the request makes it
    assert "2.6.1" in client.get(url).content.decode()
    assert drawn_by and threading.get_ident() not in drawn_by, "drawn, but not by a request"

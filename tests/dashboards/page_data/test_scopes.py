"""The scope-then-setup picker of the chart pages (dashboards/page_data/scopes.py): the
index of scopes is cached, so a page after an ingest (the picker, and the overview's
latest-run grid beside it) shows what the ingest's commit told the cache and no more; the
index is built again only when setups are added, not after every upload to existing ones;
an old setup permalink opens its scope and setup, a scope its busiest setup; and neither
the picker's reads nor its pages' queries grow with the setups stored.
"""

from __future__ import annotations

import re

import pytest

from dashboards import chart_queries as cq
from dashboards.page_data import scope_stats, scopes
from perfdb import cache as page_cache
from perfdb.models import Run, Setup
from tests.dashboards.data import load
from tests.dashboards.scopes import ingest_on_hardware, scope_key

pytestmark = pytest.mark.django_db


def selected(html: str, name: str) -> str:
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select, f"no select {name}"
    chosen = re.findall(r'<option value="([^"]*)" selected>', select.group(1))
    assert len(chosen) == 1, chosen
    return chosen[0]


def options(html: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select, f"no select {name}"
    return re.findall(r'<option value="([^"]*)"', select.group(1))


# --- invalidation -----------------------------------------------------------------------


@pytest.mark.parametrize("commit_callbacks_run", [True, False])
@pytest.mark.parametrize("url", ["/", "/kernels/"])
def test_an_ingest_after_a_page_was_cached_shows_on_the_page(
    client, data, tmp_path, django_capture_on_commit_callbacks, url, commit_callbacks_run
):
    """With the ingest's commit callback the new scope shows at once; without it (no version
    bump) the cached page is still served, which shows the cache is what the page reads."""
    assert client.get(url).status_code == 200  # cached now
    with django_capture_on_commit_callbacks(execute=commit_callbacks_run):
        upload = ingest_on_hardware(tmp_path, "P9")
    newest = Run.objects.filter(pk__in=upload.run_ids).order_by("-created_at", "-id").first()
    html = client.get(url).content.decode()
    if url == "/":  # the latest-run grid is cached; its row of the new scope links the setup
        shown = f'href="/kernels/?setup={newest.setup_id}">across kernels' in html
    else:  # the scope picker is cached
        shown = scope_key(newest.setup) in options(html, "scope")
    assert shown == commit_callbacks_run


def test_the_scope_picker_survives_uploads_to_existing_setups(
    tmp_path, django_capture_on_commit_callbacks, monkeypatch
):
    """Its entries depend on which setups exist: built once, not after every upload."""
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


# --- the kernels page's scope-then-setup picker -------------------------------------------


def test_an_old_setup_permalink_opens_its_scope_and_setup(client, data, tmp_path):
    other = Run.objects.get(pk=max(ingest_on_hardware(tmp_path, "P9").run_ids)).setup
    html = client.get(f"/kernels/?setup={other.pk}").content.decode()
    assert selected(html, "scope") == scope_key(other)
    assert selected(html, "setup") == str(other.pk)
    same_scope = Setup.objects.filter(
        workload=other.workload, hardware=other.hardware, mode=other.mode
    )
    assert sorted(options(html, "setup")) == sorted(str(s.pk) for s in same_scope)


def test_a_scope_opens_its_busiest_setup_and_lists_only_its_setups(client, data, tmp_path):
    ingest_on_hardware(tmp_path, "P9")
    setups = {s["id"]: s for s in cq.setup_choices()}
    scope = Setup.objects.get(pk=max(setups))
    key = scope_key(scope)
    in_scope = [s for s in setups.values() if scope_key_of(s) == key]
    busiest = max(in_scope, key=lambda s: s["run_count"])
    html = client.get(f"/kernels/?scope={key}").content.decode()
    assert selected(html, "scope") == key
    assert selected(html, "setup") == str(busiest["id"])
    assert sorted(options(html, "setup")) == sorted(str(s["id"]) for s in in_scope)
    assert len(options(html, "scope")) == len({scope_key_of(s) for s in setups.values()})


def scope_key_of(setup: dict) -> str:
    return f"{setup['workload_id']}-{setup['hardware_id']}-{setup['mode']}"


def test_the_default_is_the_setup_with_the_most_runs(client, data):
    busiest = max(cq.setup_choices(), key=lambda s: s["run_count"])
    html = client.get("/kernels/").content.decode()
    assert selected(html, "setup") == str(busiest["id"])


def test_an_unknown_scope_is_a_400(client, data):
    response = client.get("/kernels/?scope=1-2-XX")
    assert response.status_code == 400 and "<code>scope</code>" in response.content.decode()


# --- pinned query counts --------------------------------------------------------------------


@pytest.mark.parametrize("extra_copies", [0, 2])
def test_selector_query_counts_do_not_grow_with_setups(
    tmp_path, django_assert_num_queries, extra_copies
):
    load(tmp_path)
    for i in range(extra_copies):
        ingest_on_hardware(tmp_path, f"P{i + 9}")
    setup = Setup.objects.order_by("id").first()
    scope = (setup.workload_id, setup.hardware_id, setup.mode)
    for call in (
        lambda: cq.setup_choices(scope=scope),
        lambda: cq.setup_choices(setup_id=setup.pk),
    ):
        with django_assert_num_queries(1):
            assert call()


@pytest.mark.parametrize("extra_copies", [0, 2])
@pytest.mark.parametrize(
    "url, cold, warm",
    [
        # the setup with its run count and its metrics (one query), the setup's run ids
        # (what a series brought up to date after an upload starts from: the runs it
        # holds), the series' rows; warm: nothing (the setup, its metrics, the series and
        # the finished download are cached per setup version: dashboards/page_data/series_data.py)
        ("/kernels/?setup={setup}&format=json", 3, 0),
        # + the scope picker once per setups catalogue (pages.scope_index: one pass over
        # the setups inside a savepoint that turns JIT off: savepoint, SET LOCAL, the
        # query, release; runs added leave it cached) + the scope's setups with their run
        # counts (cached per scope version); warm: nothing
        ("/kernels/?setup={setup}", 8, 0),
        # uploads, open alerts, demo uploads; + once per data version: recent runs, setups
        # with runs (once per catalogue), run counts per setup, workloads, hardware, latest
        # runs; + the scope list's savepoint, JIT off and release (scope_stats.py: planning
        # it with JIT cost more than running it on a large lab)
        ("/", 12, 3),
    ],
)
def test_page_query_counts(
    client, tmp_path, django_assert_num_queries, extra_copies, url, cold, warm
):
    load(tmp_path)
    for i in range(extra_copies):
        ingest_on_hardware(tmp_path, f"P{i + 9}")
    url = url.format(setup=Setup.objects.order_by("id").first().pk)
    with django_assert_num_queries(cold):
        assert client.get(url).status_code == 200
    with django_assert_num_queries(warm):
        assert client.get(url).status_code == 200

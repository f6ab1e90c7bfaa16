"""Page data recomputed right after an upload's commit, so that no browser pays the miss.

An upload moves the data version and the versions of the scopes it wrote to
(``perfdb.cache.runs_added``). What the next visitor of the overview or of the kernels page
would then compute (the touched scopes' run summaries, the overview's counts, latest runs
and run tables, the busiest setup, the profiled setups) is computed here instead, by the
``dashboards.tasks.warm_pages`` task the commit queues (``settings.PAGE_CACHE_WARM``), on
the pages queue's worker. A page asking meanwhile is served the previous value, not a second
computation (``perfdb.cache``: the lock held while computing).

Of the scope charts, each touched scope's default scaling chart keeps its per-setup pieces
current (only the setups the upload wrote to are read: a few ms), so that no visitor reads
a scope's runs; its builds and view are computed only when they had been cached before
(someone opens it): a nightly upload touches a dozen scopes with several charts each, most
of which nobody opens before the next upload. The others are recomputed when first asked
for (one scope's rows, 0.1-0.5 s of CPU at 10M results).

After a deploy that changes ``CACHE_VERSION`` (every key carries it) or a Redis that lost
its data, the cache is empty: ``pages_after_deploy``, run by beat's periodic
``dashboards.tasks.warm_cold_cache`` on the pages queue, finds no mark of a warm-up in it
and computes what every page's default view reads (the scope index, the overview, each
chart page's default scope), so that the first visitors do not. Whatever else a visitor
opens first costs one bounded computation (a page of setups: dashboards/page_data/scope_draw.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from functools import partial

from django.core.cache import cache

from dashboards.chart_queries.profiles import profiled_setups
from dashboards.page_data import (
    kernel_time,
    overview,
    scaling,
    scope_stats,
    scopes,
    series_data,
    setup_picker,
    wakeups,
)
from perfdb.cache import (
    SCOPE_VERSION_PREFIX,
    STRUCTURE_KEY,
    TIMEOUT_SECONDS,
    VERSION_KEY,
    cache_key,
)

log = logging.getLogger(__name__)

# Set when a warm-up of an emptied cache finished (in the cache itself, under the code
# version's prefix: a deploy or a Redis restart leaves it missing), and held while one runs.
DEPLOY_WARMED_KEY = cache_key("deploy-warmed")
DEPLOY_WARMING_KEY = cache_key("deploy-warming")
DEPLOY_WARM_SECONDS = 15 * 60


def pages_after_upload(scopes: Sequence[str] = ()) -> None:
    """Fill the cache entries every page reads that an upload to ``scopes`` made stale, then
    the default scaling chart of each of those scopes that someone had opened. The shared
    entries are cached per scope underneath, so only the upload's scopes are read again.
    What an earlier warm already did under the current versions is skipped without reading
    its entries: when uploads come faster than warms, the warms queued behind the first see
    the versions it warmed and cost a cache read each (one warm per burst, not per upload)."""
    _unless_warmed(VERSION_KEY, _shared)
    for scope in scopes:
        _unless_warmed(SCOPE_VERSION_PREFIX + scope, partial(_scope, scope))


def _scope(scope: str) -> None:
    scaling.scaling_warm(scope)
    setup_picker.pickers_warm([scope])  # current already if after_commit's did it


def after_commit(
    sender: object, scopes: Sequence[str], series: Sequence[tuple[int, int]] = (), **kwargs: object
) -> None:
    """In the writer's process, right after its commit moved the versions of ``scopes``
    (``perfdb.cache.runs_committed``): the answers of the upload's ``series`` that someone
    reads (``series_data.series_after_upload``: the runs added, a few ms a series), then
    the scopes' setup pickers, a query per scope. The pages worker's warm runs at nice 10
    behind every other upload's scopes, so the uploader's first series page and its JSON
    used to bring them up to date themselves, on a web process sharing the cores with the
    upload's check (bench/codespeed_compare.py's first phase). The upload is done already:
    a page asking meanwhile computes its series itself and is served the previous picker,
    as while any other process computes it."""
    series_data.series_after_upload(series)
    setup_picker.pickers_warm(scopes)


def after_alerts(sender: object, series: Sequence[tuple[int, int]], **kwargs: object) -> None:
    """Where alerts were written, right after their commit (``perfdb.cache.
    alerts_committed``): the marks of those series' figures that someone reads, so that
    the uploader's first look at the chart after the check does not draw them (a query
    and the series read: most of that request)."""
    series_data.marks_after_alerts(series)


def _shared() -> None:
    scope_stats.overview_cached()
    overview.home_runs()
    scope_stats.busiest_setup_cached()
    profiled_setups()


def _unless_warmed(version_key: str, warm: Callable[[], None]) -> None:
    """``warm()`` unless a warm finished under the versions ``version_key`` and the
    structure version have now (read before warming: runs added meanwhile move them, and
    the next warm does those runs)."""
    marker = cache_key("warmed", version=version_key)  # the versions it last finished under
    found = cache.get_many([STRUCTURE_KEY, version_key, marker])
    versions = (found.get(STRUCTURE_KEY), found.get(version_key))
    if None not in versions and found.get(marker) == versions:
        return
    warm()
    if None not in versions:
        cache.set(marker, versions, timeout=TIMEOUT_SECONDS)


def pages_after_deploy() -> bool:
    """Every page's default view computed into an emptied cache, unless a warm-up already
    did it (its mark is in the cache) or is doing it (another worker holds the mark of one
    running). Whether it ran. Beat asks every minute: a cache read when there is nothing
    to do. The mark lasts as long as an entry (``TIMEOUT_SECONDS``), so entries no visitor
    read since are computed again when they would have expired."""
    if cache.get(DEPLOY_WARMED_KEY) is not None:
        return False
    if not cache.add(DEPLOY_WARMING_KEY, 1, timeout=DEPLOY_WARM_SECONDS):
        return False
    started = time.monotonic()
    try:
        scopes.scope_index()
        _shared()
        scaling.scaling_warm_default()
        kernel_time.kernel_time_warm()
        wakeups.wakeups_warm()
        cache.set(DEPLOY_WARMED_KEY, time.time(), timeout=TIMEOUT_SECONDS)
    finally:
        cache.delete(DEPLOY_WARMING_KEY)
    log.info("pages warmed into an emptied cache in %.1f s", time.monotonic() - started)
    return True

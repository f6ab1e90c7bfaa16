"""Page data recomputed right after an upload's commit, so that no browser pays the miss.

An upload moves the data version and the versions of the scopes it wrote to
(``perfdb.cache.runs_added``). What the next visitor of the overview or of the kernels page
would then compute (the touched scopes' run summaries, the overview's counts, latest runs
and run tables, the busiest setup, the profiled setups) is computed here instead, by the
``dashboards.tasks.warm_pages`` task the commit queues (``settings.PAGE_CACHE_WARM``), on
the ingest workers. A page asking meanwhile is served the previous value, not a second
computation (``perfdb.cache``: the lock held while computing).

Of the scope charts, each touched scope's default scaling chart keeps its per-setup pieces
current (only the setups the upload wrote to are read: a few ms), so that no visitor reads
a scope's runs; its builds and view are computed only when they had been cached before
(someone opens it): a nightly upload touches a dozen scopes with several charts each, most
of which nobody opens before the next upload. The others are recomputed when first asked
for (one scope's rows, 0.1-0.5 s of CPU at 10M results).
"""

from __future__ import annotations

from collections.abc import Sequence

from dashboards import pages, scope_stats, views
from dashboards.chart_queries.profiles import profiled_setups


def pages_after_upload(scopes: Sequence[str] = ()) -> None:
    """Fill the cache entries every page reads that an upload to ``scopes`` made stale, then
    the default scaling chart of each of those scopes that someone had opened. The shared
    entries are cached per scope underneath, so only the upload's scopes are read again;
    entries still current (another warm got there first) cost a cache read."""
    scope_stats.overview_cached()
    views.home_runs()
    scope_stats.busiest_setup_cached()
    profiled_setups()
    for scope in scopes:
        pages.scaling_warm(scope)

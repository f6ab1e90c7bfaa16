"""What the overview shows of the runs (the latest run per scope, the counts per workload
and hardware, the recent runs), rendered as HTML once per data version."""

from __future__ import annotations

from django.template.loader import render_to_string

from dashboards.page_data import scope_stats
from perfdb import queries
from perfdb.cache import cache_key, cached


def home_runs() -> tuple[bool, str]:
    """(any runs, the overview's run tables as HTML), once per data version: rendering the
    latest run of every scope was most of a warm overview's CPU. Served stale under gunicorn
    while recomputed (perfdb/cache/), like the overview's counts it shows; warmed after
    each upload (dashboards/page_cache/warm.py)."""

    def build() -> tuple[bool, str]:
        workloads, hardware, latest = scope_stats.overview_cached()
        recent = list(queries.runs_recent())
        context = {"workloads": workloads, "hardware": hardware, "latest": latest}
        html = render_to_string("dashboards/_home_runs.html", {**context, "recent_runs": recent})
        return bool(recent), html

    return cached(cache_key("home-runs-html"), build, stale=True)

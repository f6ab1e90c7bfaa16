"""The overview (``/``): what regressed, by culprit build, then the recent uploads and their
outcome, and the runs: the latest per scope, the counts per workload and hardware, the
recent runs (``dashboards.page_data.overview``)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe

from dashboards.page_cache.kept import kept_for_anonymous
from dashboards.page_data.overview import home_runs
from dashboards.pages.summaries import summary_url
from perfdb import queries
from perfdb.alerting import summaries


@kept_for_anonymous("home", part=3)
def home(request: HttpRequest) -> HttpResponse:
    """What the overview shows of the runs (the latest run per scope, the counts per workload
    and hardware, the recent runs) is rendered once per data version (``home_runs``); what
    regressed (open and pending regressions by culprit build), the uploads with what their
    builds moved, and the demo uploads, which no data version follows, are a query each. For
    anonymous readers under gunicorn the page is current for a third of
    PAGE_CACHE_STALE_SECONDS, then served up to that old while it is recomputed (its run
    tables may be that stale already: at most twice the setting behind in all)."""
    has_runs, runs_html = home_runs()
    return render(
        request,
        "dashboards/home.html",
        {
            "has_runs": has_runs,
            "runs_html": mark_safe(runs_html),  # rendered by the template engine, escaped
            "uploads": summaries.uploads_with_outcome(),
            "regressed": [(s, summary_url(s.key)) for s in summaries.summaries_open()],
            "demo_sources": queries.demo_uploads(),
        },
    )

"""Pages. Each view parses its input, calls a selector, and renders; no queries in templates."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from dashboards.chart_queries.links import run_links
from dashboards.page_cache.kept import kept_for_anonymous
from dashboards.page_data import scope_stats
from dashboards.pages.summaries import summary_url
from perfdb import queries
from perfdb.alerting import summaries
from perfdb.cache import cache_key, cached
from perfdb.operations.accounts import AuthenticatedHttpRequest, token_get, token_rotate
from perfdb.operations.headers import attachment_header


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


@login_required
def account(request: AuthenticatedHttpRequest) -> HttpResponse:
    if request.method == "POST" and request.POST.get("rotate"):
        token_rotate(user=request.user)
        return redirect("account")
    return render(request, "dashboards/account.html", {"token": token_get(user=request.user)})


@kept_for_anonymous("run")
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = queries.run_with_keys(run_id=run_id)
    if run is None:
        raise Http404(f"no run {run_id}")
    return render(
        request,
        "dashboards/run_detail.html",
        {
            "run": run,
            "trials": list(run.trials.all()),
            "profiles": _profiles(run),
            "raw_files": list(run.raw_files.only("id", "path", "parser", "trial", "warnings")),
            "profile": list(run.profile.order_by("-ticks")[:30]),
            # results with their series links, alerts, and the baseline its alert names
            **run_links(run=run, results=queries.run_results(run_id=run.pk)),
        },
    )


PROFILE_TOP = 30


def _profiles(run) -> list[dict]:
    """The top functions of each trial's profile, one group per trial and profiler: two
    trials' profiles are never mixed in one list. One query (a window over profile_uniq)."""
    from django.db.models import F, Window
    from django.db.models.functions import RowNumber

    rows = (
        run.profile.annotate(
            rank=Window(
                RowNumber(), partition_by=[F("trial"), F("source")], order_by=F("ticks").desc()
            )
        )
        .filter(rank__lte=PROFILE_TOP)
        .order_by("trial", "source", "rank")
    )
    groups: dict[tuple[int, str], list] = {}
    for row in rows:
        groups.setdefault((row.trial, row.source), []).append(row)
    return [
        {"trial": trial, "source": source, "entries": entries}
        for (trial, source), entries in groups.items()
    ]


def raw_file(request: HttpRequest, run_id: int, file_id: int) -> HttpResponse:
    from perfdb.models import RawFile

    raw = RawFile.objects.filter(run_id=run_id, pk=file_id).first()
    if raw is None:
        raise Http404("no such raw file")
    response = HttpResponse(bytes(raw.content), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = attachment_header(raw.path)
    return response

"""A run's page (``/runs/<id>/``): every key, parameter, trial, result and profile of the
run, with its series' links and alerts; and its raw files to download."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards.chart_queries.links import run_links
from dashboards.page_cache.kept import kept_for_anonymous
from perfdb import queries
from perfdb.operations.headers import attachment_header


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

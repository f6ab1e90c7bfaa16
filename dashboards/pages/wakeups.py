"""The wakeups and preemption page (/wakeups/): runs with scheduler counters, one build at a
time, as tables and heatmaps (one per preemption threshold), of a bounded number of the
scope's setups: whole thresholds, the most-run first, up to ``WAKEUPS_MAX_SETUPS`` setups;
any others or all with ``?thresholds=0&thresholds=40`` or ``?thresholds=all``, whole
thresholds of up to ``WAKEUPS_PAGE_SETUPS`` setups a page (``&page=2``;
dashboards/page_data/scope_draw.py). Rows and figures are cached per scope version and drawn page (a
request unpickles only the build it shows) and served up to ``PAGE_CACHE_STALE_SECONDS``
behind uploads (perfdb/cache/); a download is never behind.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards.figures.wakeups import VALUES as WAKEUP_VALUES
from dashboards.page_cache.kept import kept_for_anonymous
from dashboards.page_data.scope_draw import Subset, api_url, selection_of, subset_links
from dashboards.page_data.scopes import scope_index, scope_setups
from dashboards.page_data.wakeups import (
    DEFAULT_VALUE,
    WAKEUPS_MAX_SETUPS,
    builds_of,
    drawn_thresholds,
    first_build,
    of_build,
    shown,
    thresholds_of,
    whole_rows,
)
from dashboards.pure.selection import choice_param, format_param, scope_param
from dashboards.web import exports
from dashboards.web.page_tools import bad_params_are_400, download, links


@kept_for_anonymous("wakeups", part=3)
@bad_params_are_400
def wakeups(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    every = scope_index().scopes
    scopes = [s for s in every if s.has_wakeup_params]
    value = choice_param(q, "value", tuple(WAKEUP_VALUES), DEFAULT_VALUE)
    context: dict[str, Any] = {
        "scopes": scopes,
        "value": value,
        "values": [{"key": k, "text": label} for k, (label, _) in WAKEUP_VALUES.items()],
    }
    # A workload that has runs but no wakeup counters is not a bad request: say so, and
    # link to the ones that have them.
    without = next((s for s in every if s.key == q.get("scope") and s not in scopes), None)
    if without is not None and not fmt:
        context["without"] = without
        return render(request, "dashboards/wakeups.html", context)
    choice = scope_param(q, scopes)
    scope = scope_setups(choice)
    context["scope"] = scope
    if choice is None or scope is None:
        return render(request, "dashboards/wakeups.html", context)
    by_threshold = thresholds_of(scope.setups)
    subset = drawn_thresholds(q, choice, by_threshold)
    chosen = set(subset.chosen)
    context.update(
        {
            "threshold_options": [(t, t in chosen) for t in by_threshold],
            "subset": subset,
            "default_text": f"by default those of the most-run setups, at most "
            f"{WAKEUPS_MAX_SETUPS} setups",
        }
    )
    drawn = [i for t in subset.drawn for i in by_threshold[t]]
    return _scope_page(request, fmt, context, scope.key, drawn, subset)


def _scope_page(
    request, fmt, context, scope_key: str, drawn: list[int], subset: Subset
) -> HttpResponse:
    """The chosen build of the drawn thresholds: its rows and heatmaps, or their download."""
    q, value = request.GET, context["value"]
    if fmt:  # a download is never behind the runs
        rows = whole_rows(scope_key, drawn, subset, stale=False)[0]
        build = choice_param(q, "build", builds_of(rows), first_build(builds_of(rows)))
        return download((exports.wakeups_table(of_build(rows, build)),), request, fmt)
    builds, skipped, build, rows, figures = shown(q, scope_key, drawn, subset, value)
    selection = {"scope": scope_key, "build": build, "value": value}
    selection = selection_of(selection, subset)
    return render(
        request,
        "dashboards/wakeups.html",
        {
            **context,
            **links("dashboards-wakeups", selection, ("wakeups",)),
            **subset_links("dashboards-wakeups", selection, subset),
            "builds": builds,
            "build": build,
            "skipped": skipped,
            "figures": figures,
            "rows": rows,
            "api_url": api_url("api-wakeups", drawn, build=build),
        },
    )

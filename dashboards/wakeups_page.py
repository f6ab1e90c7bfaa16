"""The wakeups and preemption page (/wakeups/): each scope's runs with scheduler counters,
one build at a time, as tables and heatmaps. Its rows and figures are cached per scope
version and served up to ``PAGE_CACHE_STALE_SECONDS`` behind uploads (perfdb/cache.py);
a download is never behind.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards import chart_queries as cq
from dashboards import exports
from dashboards.figures import wakeups_figures
from dashboards.figures.wakeups import VALUES as WAKEUP_VALUES
from dashboards.page_cache import kept_for_anonymous
from dashboards.page_tools import bad_params_are_400, download, links
from dashboards.pages import _scope_index, _scope_setups
from dashboards.selection import choice_param, format_param, scope_param
from perfdb.cache import cached_in_scope


@kept_for_anonymous("wakeups", part=3)
@bad_params_are_400
def wakeups(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    every = _scope_index().scopes
    scopes = [s for s in every if s.has_wakeup_params]
    value = choice_param(q, "value", tuple(WAKEUP_VALUES), "throughput")
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
    scope = _scope_setups(scope_param(q, scopes))
    context["scope"] = scope
    if scope is None:
        return render(request, "dashboards/wakeups.html", context)
    with_params = [s["id"] for s in scope.setups if all(p in s["params"] for p in cq.WAKEUP_PARAMS)]
    return _scope_page(request, q, fmt, context, scope, with_params)


def _scope_page(request, q, fmt, context, scope, with_params) -> HttpResponse:
    """The chosen scope's build: its rows and heatmaps, or their download."""
    value = context["value"]

    # Every run of the scope (~6,000 at 10M results, ~2 s to read): cached per scope.
    def every_row(stale: bool) -> tuple[list[Any], int]:
        return cached_in_scope(
            f"wakeups:{scope.key}",
            scope.key,
            lambda: cq.wakeup_rows(setup_ids=with_params),
            stale=stale,
        )

    rows, skipped = every_row(stale=not fmt)  # a download is never behind the runs
    builds = list(dict.fromkeys(r.run.build for r in rows))
    build = choice_param(q, "build", builds, builds[0] if builds else "")
    rows = [r for r in rows if r.run.build == build]
    if fmt:
        return download((exports.wakeups_table(rows),), request, fmt)
    # One heatmap per threshold: ~1 s of Plotly at lab scale, so cached with the rows (read
    # again inside: never drawn from a stale copy).
    figures = cached_in_scope(
        f"wakeups:{scope.key}:{build}:{value}:figures",
        scope.key,
        lambda: wakeups_figures(
            tuple(r for r in every_row(stale=False)[0] if r.run.build == build),
            heatmap_value=value,
        ),
        stale=True,
    )
    selection = {"scope": scope.key, "build": build, "value": value}
    return render(
        request,
        "dashboards/wakeups.html",
        {
            **context,
            **links("dashboards-wakeups", selection, ("wakeups",)),
            "builds": builds,
            "build": build,
            "skipped": skipped,
            "figures": [{"id": f"fig-{name}", "figure": fig} for name, fig in figures.items()],
            "rows": rows,
        },
    )

"""The scaling page: a metric against a varying parameter, one line a build, over a scope's
setups. The view reads its selection from the query string (so every view is a permalink),
calls the selectors, hands plain data to the figure builder, and renders.

``&format=csv|json`` downloads the chart's data instead of the page. A bad parameter is a 400
naming it, never a 500.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards.page_cache.kept import kept_for_anonymous
from dashboards.page_data import scaling as scaling_data
from dashboards.page_data.scope_draw import selection_of, subset_links
from dashboards.page_data.scopes import scope_index, scope_setups
from dashboards.pure.selection import choices_param, format_param, scope_param
from dashboards.web import exports
from dashboards.web.page_tools import bad_params_are_400, download, links


@kept_for_anonymous("scaling", part=3)
@bad_params_are_400
def scaling(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    scopes = [s for s in scope_index().scopes if s.has_varying_params]
    scope = scope_setups(scope_param(q, scopes))
    context: dict[str, Any] = {"scopes": scopes, "scope": scope}
    if scope is None:
        return render(request, "dashboards/scaling.html", context)
    sel = scaling_data.scaling_selection(q, scope)
    if sel.metric is None:
        return render(request, "dashboards/scaling.html", context)
    key, drawn, builds = scaling_data.scaling_chart(scope, sel)
    default_builds = builds[-scaling_data.SCALING_MAX_BUILDS :]
    shown = choices_param(q, "builds", builds, default_builds)
    if fmt:
        return download((exports.scaling_table(drawn(shown)),), request, fmt)
    chosen = "builds" in q
    if chosen:
        n_points, figure = scaling_data.chosen_view(scope, key, drawn, shown)
    else:
        shown, n_points, figure = scaling_data.default_view(scope, sel, stale=True)
    selection = {
        "scope": scope.key,
        "param": sel.param,
        "rest": sel.rest,
        "metric": sel.metric["id"],
    }
    selection = selection_of(selection, sel.subset)
    pages = subset_links("dashboards-scaling", selection, sel.subset)  # builds vary by page
    if chosen and shown != default_builds:
        selection["builds"] = shown
    most = scaling_data.SCALING_MAX_SETUPS
    return render(
        request,
        "dashboards/scaling.html",
        {
            **context,
            **links("dashboards-scaling", selection, ("scaling",)),
            **pages,
            "subset": sel.subset,
            "default_text": f"by default {most} spread evenly over the values of {sel.param}",
            "max_setups": most,
            "params": sel.params,
            "param": sel.param,
            "rests": list(sel.groups),
            "rest": sel.rest,
            "metrics": sel.metrics,
            "metric": sel.metric,
            "note": sel.note,
            "figure": figure,
            "n_points": n_points,
            "builds": builds,
            "shown_builds": shown,
            "max_builds": scaling_data.SCALING_MAX_BUILDS,
        },
    )

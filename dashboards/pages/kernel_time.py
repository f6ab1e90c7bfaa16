"""The kernel and scheduler time page (/kernel-time/): % of time in the kernel and in the
scheduler per run, and the top kernel functions, of a bounded number of a scope's setups
(``KERNEL_TIME_MAX_SETUPS``: its profiled setups with the most profiled runs first, then the
most-run), any others or all of them with ``?setups=<id>&setups=<id>`` or ``?setups=all``,
``KERNEL_TIME_PAGE_SETUPS`` a page (``&page=2``; dashboards/page_data/scope_draw.py). Its
data and figures are cached per scope version and drawn page (perfdb/cache/), so a request
reads and unpickles only what it draws.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards.page_cache.kept import kept_for_anonymous
from dashboards.page_data.kernel_time import (
    DEFAULT_TOP,
    KERNEL_TIME_MAX_SETUPS,
    TOP_N_MAX,
    drawn_data,
    drawn_setups,
    figures,
    profile_diff_of_scope,
    profiled_first,
)
from dashboards.page_data.scope_draw import Subset, api_url, selection_of, subset_links
from dashboards.page_data.scopes import scope_index, scope_setups
from dashboards.pure.selection import (
    BadParam,
    choice_param,
    format_param,
    int_param,
    scope_param,
    setup_label,
)
from dashboards.pure.selection import Scope as SetupScope
from dashboards.web import exports
from dashboards.web.page_tools import bad_params_are_400, download, links


@kept_for_anonymous("kernel-time", part=3)
@bad_params_are_400
def kernel_time(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    scopes = profiled_first(scope_index().scopes)
    choice = scope_param(q, scopes)
    scope = scope_setups(choice)
    top = int_param(q, "top")
    top = DEFAULT_TOP if top is None else top
    if not 1 <= top <= TOP_N_MAX:
        raise BadParam("top", f"expected 1 to {TOP_N_MAX}, got {top}")
    context: dict[str, Any] = {
        "scopes": scopes,
        "scope": scope,
        "top": top,
        "top_choices": sorted({5, 10, 15, 20, TOP_N_MAX, top}),
    }
    if choice is None or scope is None:
        return render(request, "dashboards/kernel_time.html", context)
    params = scope.varying_params()
    param = choice_param(q, "param", params, "") or None
    context["params"] = params
    return _scope_page(request, fmt, context, scope, param, drawn_setups(q, choice, scope))


def _scope_page(request, fmt, context, scope: SetupScope, param, subset: Subset) -> HttpResponse:
    """The drawn page of setups' chart and top functions, or their download."""
    top = context["top"]
    drawn = [int(i) for i in subset.drawn]
    if fmt:  # a download is never behind the runs
        chart, profiles = drawn_data(scope, param, subset, stale=False)
        tables = (exports.kernel_time_table(chart), exports.profile_table(profiles))
        return download(tables, request, fmt)
    view = figures(scope, param, subset, top)
    selection = {"scope": scope.key, "param": param, "top": top}
    selection = selection_of(selection, subset)
    return render(
        request,
        "dashboards/kernel_time.html",
        {
            **context,
            **links("dashboards-kernel-time", selection, ("kernel-time", "kernel-functions")),
            **subset_links("dashboards-kernel-time", selection, subset),
            "param": param or "",
            **view,
            "setup_options": _setup_options(scope, subset.chosen),
            "subset": subset,
            "default_text": f"by default the {KERNEL_TIME_MAX_SETUPS} with the most profiled "
            "runs, then the most runs",
            "profile_diff_url": profile_diff_of_scope(scope),
            "api_url": api_url("api-kernel-time", drawn, param=param),
        },
    )


def _setup_options(scope: SetupScope, chosen: tuple[str, ...]) -> list[tuple[str, str, bool]]:
    """The setups picker's options: (value, text: its parameters and run count, selected)."""
    selected = set(chosen)
    return [(str(s["id"]), _setup_text(s), str(s["id"]) in selected) for s in scope.setups]


def _setup_text(setup: Mapping[str, Any]) -> str:
    runs = setup.get("run_count", 0)
    return f"{setup_label(setup)} ({runs} run{'' if runs == 1 else 's'})"

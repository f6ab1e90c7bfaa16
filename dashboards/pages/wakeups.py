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

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards import chart_queries as cq
from dashboards.figures import wakeups_figures
from dashboards.figures.wakeups import VALUES as WAKEUP_VALUES
from dashboards.page_cache.kept import kept_for_anonymous
from dashboards.page_data.scope_draw import (
    Subset,
    api_url,
    drawn_subset,
    selection_of,
    setup_runs,
    subset_links,
)
from dashboards.page_data.scopes import ScopeChoice, scope_index, scope_setups
from dashboards.pure.selection import busiest_first, choice_param, format_param, scope_param
from dashboards.web import exports
from dashboards.web.page_tools import bad_params_are_400, download, figure_script, links
from perfdb.cache import cache_key, cached_in_scope

# Whole thresholds (each a heatmap of its nice pairs) are drawn while their setups add up
# to at most this many: 001's grid of 3 pairs at 2 thresholds is drawn whole; a scope with
# ~1,000 thresholds (100M synthetic results) is not 1,000 heatmaps and a 5 MB page.
WAKEUPS_MAX_SETUPS = 12
# Setups drawn per page of a larger selection ("show all"), in whole thresholds: what one
# request reads and draws, whatever the scope's size (one heatmap per threshold).
WAKEUPS_PAGE_SETUPS = 24
THRESHOLD = cq.WAKEUP_PARAMS[2]
DEFAULT_VALUE = "throughput"


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
    subset = _subset(q, choice, by_threshold)
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


def _subset(
    q: Mapping[str, Any], choice: ScopeChoice, by_threshold: dict[str, list[int]]
) -> Subset:
    """The thresholds the query asks for (the default for none), the page of them drawn."""
    return drawn_subset(
        cache_key("wakeups"),
        q,
        "thresholds",
        choice.key,
        list(by_threshold),
        partial(_default, choice, by_threshold),
        WAKEUPS_PAGE_SETUPS,
        weight=lambda t: len(by_threshold[t]),
    )


def wakeups_warm(scope_key: str | None = None) -> None:
    """The default view of a scope (of the page's default scope with None): what a first
    visitor after a deploy would compute (dashboards/page_cache/warm.py)."""
    scopes = [s for s in scope_index().scopes if s.has_wakeup_params]
    choice = next((s for s in scopes if scope_key in (None, s.key)), None)
    scope = scope_setups(choice)
    if choice is None or scope is None:
        return
    by_threshold = thresholds_of(scope.setups)
    subset = _subset({}, choice, by_threshold)
    drawn = [i for t in subset.drawn for i in by_threshold[t]]
    _shown({}, scope.key, drawn, subset, DEFAULT_VALUE)


def thresholds_of(setups: Sequence[Mapping[str, Any]]) -> dict[str, list[int]]:
    """The setups with the three wakeup parameters, by preemption threshold (as text, the
    URL's value), thresholds in numeric order."""
    out: dict[str, list[int]] = {}
    for s in setups:
        if all(p in s["params"] for p in cq.WAKEUP_PARAMS):
            out.setdefault(str(s["params"][THRESHOLD]), []).append(s["id"])
    return dict(sorted(out.items(), key=lambda item: _numeric_first(item[0])))


def _numeric_first(text: str) -> tuple[bool, float, str]:
    try:
        return (False, float(text), text)
    except ValueError:
        return (True, 0.0, text)


def _default(choice: ScopeChoice, by_threshold: Mapping[str, list[int]]) -> list[str]:
    """Whole thresholds, the one with the most-run setup first, while their setups add up
    to at most ``WAKEUPS_MAX_SETUPS`` (always one); in threshold order."""
    of = {i: t for t, ids in by_threshold.items() for i in ids}
    chosen: list[str] = []
    count = 0
    for setup_id in busiest_first(list(of), setup_runs(choice.ids)):
        threshold = of[setup_id]
        if threshold in chosen:
            continue
        count += len(by_threshold[threshold])
        if chosen and count > WAKEUPS_MAX_SETUPS:
            break
        chosen.append(threshold)
    return [t for t in by_threshold if t in chosen]


def _scope_page(
    request, fmt, context, scope_key: str, drawn: list[int], subset: Subset
) -> HttpResponse:
    """The chosen build of the drawn thresholds: its rows and heatmaps, or their download."""
    q, value = request.GET, context["value"]
    if fmt:  # a download is never behind the runs
        rows = _whole(scope_key, drawn, subset, stale=False)[0]
        build = choice_param(q, "build", _builds(rows), _first(_builds(rows)))
        return download((exports.wakeups_table(_of_build(rows, build)),), request, fmt)
    builds, skipped, build, rows, figures = _shown(q, scope_key, drawn, subset, value)
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


def _whole(scope_key: str, drawn: list[int], subset: Subset, stale: bool) -> tuple[list[Any], int]:
    """Every run of the drawn setups, all builds: read back only to compute what a page
    shows or for a download (a request draws one build)."""
    key = _rows_key(scope_key, subset)
    return cached_in_scope(key, scope_key, lambda: cq.wakeup_rows(setup_ids=drawn), stale=stale)


def _rows_key(scope_key: str, subset: Subset) -> str:
    """The key of the drawn thresholds' rows, every build (``_whole``): what the page's other
    entries are made from."""
    return cache_key("wakeups", scope=scope_key, thresholds=subset.drawn)


def _shown(
    q: Mapping[str, Any], scope_key: str, drawn: list[int], subset: Subset, value: str
) -> tuple[list[str], int, str, list[Any], list[dict[str, str]]]:
    """The drawn setups' builds and runs left out, the build shown (``?build=``, else the
    first), its rows and figures."""
    key = _rows_key(scope_key, subset)
    builds, skipped = cached_in_scope(
        cache_key("wakeups-builds", rows=key),
        scope_key,
        lambda: _builds_skipped(*_whole(scope_key, drawn, subset, stale=False)),
        stale=True,
    )
    build = choice_param(q, "build", builds, _first(builds))
    # One heatmap per threshold (Plotly objects, escaped into the page): cached with the
    # build's rows, from the rows read again inside (never drawn from a stale copy).
    rows, figures = cached_in_scope(
        cache_key("wakeups-view", rows=key, build=build, value=value),
        scope_key,
        lambda: _view(_of_build(_whole(scope_key, drawn, subset, stale=False)[0], build), value),
        stale=True,
    )
    return builds, skipped, build, rows, figures


def _builds(rows: list[Any]) -> list[str]:
    return list(dict.fromkeys(r.run.build for r in rows))


def _builds_skipped(rows: list[Any], skipped: int) -> tuple[list[str], int]:
    return _builds(rows), skipped


def _first(builds: list[str]) -> str:
    return builds[0] if builds else ""


def _of_build(rows: list[Any], build: str) -> list[Any]:
    return [r for r in rows if r.run.build == build]


def _view(rows: list[Any], value: str) -> tuple[list[Any], list[dict[str, str]]]:
    """The build's rows and its figures as the page embeds them (json_script's output)."""
    figures = wakeups_figures(tuple(rows), heatmap_value=value)
    return rows, [
        {"id": f"fig-{name}", "html": figure_script(fig, f"fig-{name}")}
        for name, fig in figures.items()
    ]

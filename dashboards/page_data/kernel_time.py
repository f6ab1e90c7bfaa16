"""The kernel-time chart's data: of the setups a kernel-time page draws (a bounded number of
a scope's, its profiled setups with the most profiled runs first: ``drawn_setups``), the
points of % of time in the kernel and the scheduler and the kernel profiles
(``drawn_data``), and the page's two figures as it embeds them (``figures``), each cached
per scope version and drawn page, so a request reads and unpickles only what it draws; the
scopes with profiles first (``profiled_first``); and the default view the warm-up computes
(``kernel_time_warm``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from django.urls import reverse

from dashboards import chart_queries as cq
from dashboards.figures import kernel_time_figure, top_functions_figure
from dashboards.page_data import scope_stats
from dashboards.page_data.scope_draw import Subset, drawn_subset, setup_runs
from dashboards.page_data.scopes import ScopeChoice, scope_index, scope_setups
from dashboards.pure.selection import Scope as SetupScope
from dashboards.pure.selection import busiest_first
from dashboards.web.page_tools import figure_script
from perfdb.cache import cache_key, cached, cached_in_scope

TOP_N_MAX = 30
DEFAULT_TOP = 10
# One bar pair per run of every setup drawn: 8 setups on 64 builds is ~500 pairs, still
# readable; a scope's every setup (~1,000 at 100M synthetic results) is not.
KERNEL_TIME_MAX_SETUPS = 8
# Setups drawn per page of a larger selection ("show all"): what one request reads and
# draws, whatever the scope's size (at most the API's MAX_IDS, so each page links its data).
KERNEL_TIME_PAGE_SETUPS = 24


def drawn_setups(q: Mapping[str, Any], choice: ScopeChoice, scope: SetupScope) -> Subset:
    """The setups the query asks for (the default for none), the page of them drawn."""
    ids = [str(i) for i in scope.setup_ids]
    default = partial(_default, choice, scope)
    return drawn_subset(
        cache_key("kernel-time"), q, "setups", scope.key, ids, default, KERNEL_TIME_PAGE_SETUPS
    )


def _key(scope: SetupScope, param: str | None, subset: Subset) -> str:
    """The key of the drawn setups' data (``drawn_data``), in the order drawn; ``param`` None
    (no parameter asked for) is not the text "None"."""
    return cache_key("kernel-time", scope=scope.key, param=param, setups=subset.drawn)


def drawn_data(
    scope: SetupScope, param: str | None, subset: Subset, stale: bool
) -> tuple[Any, Any]:
    """The drawn setups' points and profiles, cached per scope version and drawn page."""
    drawn = [int(i) for i in subset.drawn]
    return cached_in_scope(
        _key(scope, param, subset),
        scope.key,
        lambda: (
            cq.kernel_time_points(setup_ids=drawn, param=param),
            cq.kernel_profiles(setup_ids=drawn),
        ),
        stale=stale,
    )


def figures(scope: SetupScope, param: str | None, subset: Subset, top: int) -> dict[str, Any]:
    """The page's two figures, escaped, with the counts it shows. Building them (Plotly
    objects, hover text per bar) had cost ~0.4 s of CPU on every request, and escaping them
    into the page (json_script) half of the rest: cached (the data read again inside:
    never stale)."""
    return cached_in_scope(
        cache_key("kernel-time-figures", data=_key(scope, param, subset), top=top),
        scope.key,
        lambda: _view(*drawn_data(scope, param, subset, stale=False), top),
        stale=True,
    )


def kernel_time_warm(scope_key: str | None = None) -> None:
    """The default view of a scope (of the page's default scope with None): what a first
    visitor after a deploy would compute (dashboards/page_cache/warm.py)."""
    scopes = profiled_first(scope_index().scopes)
    choice = next((s for s in scopes if scope_key in (None, s.key)), None)
    scope = scope_setups(choice)
    if choice is None or scope is None:
        return
    figures(scope, None, drawn_setups({}, choice, scope), DEFAULT_TOP)


def _view(chart, profiles, top: int) -> dict[str, Any]:
    return {
        "time_figure": figure_script(kernel_time_figure(chart), "fig-kernel-time"),
        "profile_figure": figure_script(
            top_functions_figure(tuple(profiles), top_n=top), "fig-functions"
        ),
        "n_points": len(chart.points),
        "n_profiles": len(profiles),
    }


def _default(choice: ScopeChoice, scope: SetupScope) -> list[str]:
    """The setups drawn by default: the profiled ones with the most profiled runs first (a
    busy setup without profiles draws nothing here), then the most-run; in picker order."""
    profiled = scope_stats.profiled_of_scope(choice.key, choice.ids)
    ranked = busiest_first(scope.setup_ids, setup_runs(choice.ids), first=profiled)
    kept = set(ranked[:KERNEL_TIME_MAX_SETUPS])
    return [str(i) for i in scope.setup_ids if i in kept]


def _profiled_index() -> tuple[dict[str, int], dict[str, int]]:
    """Each scope's rank (its busiest profiled setup's) and busiest profiled setup, cached
    per data version: one row a scope (``scope_stats.busiest_profiled``), where the lab's
    every profiled setup (3,232 at 10M results, ~10 times that at 100M) had been read."""
    return cached(cache_key("kernel-time-profiled-index"), _index_of_profiled, stale=True)


def _index_of_profiled() -> tuple[dict[str, int], dict[str, int]]:
    busiest = dict(scope_stats.busiest_profiled())  # busiest first
    return {key: i for i, key in enumerate(busiest)}, busiest


def profiled_first(scopes):
    """Scopes with a kernel profile first, so the page opens on one that has something."""
    rank = _profiled_index()[0]
    return sorted(scopes, key=lambda s: rank.get(s.key, len(rank)))


def profile_diff_of_scope(scope: SetupScope) -> str | None:
    """The profile diff of the scope's busiest profiled setup (first against last build)."""
    setup_id = _profiled_index()[1].get(scope.key)
    return None if setup_id is None else f"{reverse('dashboards-profile-diff')}?setup={setup_id}"

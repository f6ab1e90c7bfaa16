"""The wakeups chart's data: runs with scheduler counters by preemption threshold
(``thresholds_of``), the whole thresholds a wakeups page draws (``drawn_thresholds``: the
most-run setups' by default, at most ``WAKEUPS_MAX_SETUPS`` setups), every run of the drawn
setups (``whole_rows``) and the build shown with its rows and heatmaps as the page embeds
them (``shown``), cached per scope version and drawn page (a request unpickles only the
build it shows); and the default view the warm-up computes (``wakeups_warm``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from dashboards import chart_queries as cq
from dashboards.figures import wakeups_figures
from dashboards.page_data.scope_draw import Subset, drawn_subset, setup_runs
from dashboards.page_data.scopes import ScopeChoice, scope_index, scope_setups
from dashboards.pure.selection import busiest_first, choice_param
from dashboards.web.page_tools import figure_script
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


def drawn_thresholds(
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
    subset = drawn_thresholds({}, choice, by_threshold)
    drawn = [i for t in subset.drawn for i in by_threshold[t]]
    shown({}, scope.key, drawn, subset, DEFAULT_VALUE)


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


def whole_rows(
    scope_key: str, drawn: list[int], subset: Subset, stale: bool
) -> tuple[list[Any], int]:
    """Every run of the drawn setups, all builds: read back only to compute what a page
    shows or for a download (a request draws one build)."""
    key = _rows_key(scope_key, subset)
    return cached_in_scope(key, scope_key, lambda: cq.wakeup_rows(setup_ids=drawn), stale=stale)


def _rows_key(scope_key: str, subset: Subset) -> str:
    """The key of the drawn thresholds' rows, every build (``whole_rows``): what the page's other
    entries are made from."""
    return cache_key("wakeups", scope=scope_key, thresholds=subset.drawn)


def shown(
    q: Mapping[str, Any], scope_key: str, drawn: list[int], subset: Subset, value: str
) -> tuple[list[str], int, str, list[Any], list[dict[str, str]]]:
    """The drawn setups' builds and runs left out, the build shown (``?build=``, else the
    first), its rows and figures."""
    key = _rows_key(scope_key, subset)
    builds, skipped = cached_in_scope(
        cache_key("wakeups-builds", rows=key),
        scope_key,
        lambda: _builds_skipped(*whole_rows(scope_key, drawn, subset, stale=False)),
        stale=True,
    )
    build = choice_param(q, "build", builds, first_build(builds))
    # One heatmap per threshold (Plotly objects, escaped into the page): cached with the
    # build's rows, from the rows read again inside (never drawn from a stale copy).
    rows, figures = cached_in_scope(
        cache_key("wakeups-view", rows=key, build=build, value=value),
        scope_key,
        lambda: _view(of_build(whole_rows(scope_key, drawn, subset, stale=False)[0], build), value),
        stale=True,
    )
    return builds, skipped, build, rows, figures


def builds_of(rows: list[Any]) -> list[str]:
    return list(dict.fromkeys(r.run.build for r in rows))


def _builds_skipped(rows: list[Any], skipped: int) -> tuple[list[str], int]:
    return builds_of(rows), skipped


def first_build(builds: list[str]) -> str:
    return builds[0] if builds else ""


def of_build(rows: list[Any], build: str) -> list[Any]:
    return [r for r in rows if r.run.build == build]


def _view(rows: list[Any], value: str) -> tuple[list[Any], list[dict[str, str]]]:
    """The build's rows and its figures as the page embeds them (json_script's output)."""
    figures = wakeups_figures(tuple(rows), heatmap_value=value)
    return rows, [
        {"id": f"fig-{name}", "html": figure_script(fig, f"fig-{name}")}
        for name, fig in figures.items()
    ]

"""The scaling chart's data: a metric against a varying parameter, one line a build, over a
group of a scope's setups. What a scaling page asks for (``scaling_selection``: the
parameter, the setups that vary it alone, the page of them drawn, the metric), the chart
made of per-setup pieces cached per setup version (``scaling_chart``), and the views the
page embeds, cached per scope version: the newest builds' (``default_view``, kept current
after each upload by ``scaling_warm``) and any builds picked in the URL (``chosen_view``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, NamedTuple

from django.http import QueryDict

from dashboards import chart_queries as cq
from dashboards.figures import scaling_figure
from dashboards.page_data import series_data
from dashboards.page_data.scope_draw import Subset, drawn_subset
from dashboards.page_data.scopes import scope_index, scope_setups
from dashboards.pure.chartdata import ScalingChart
from dashboards.pure.selection import Scope as SetupScope
from dashboards.pure.selection import choice_param, metric_param
from dashboards.web.page_tools import figure_script
from perfdb.cache import cache_key, cached_before, cached_in_scope, cached_per_setup

# A scaling chart with more lines than this is unreadable (and slow): by default it shows the
# newest builds in kernel order, and the page lets you pick others.
SCALING_MAX_BUILDS = 12
# A chart's points per line are the setups of its group (one per value of the parameter):
# by default at most this many, spread evenly over the parameter's values; every one with
# ``?setups=all``, ``SCALING_PAGE_SETUPS`` consecutive values a page (``&page=2``). A group
# of ~1,000 setups (100M synthetic results) drawn whole had been a 5 MB page, 5.5 s to
# compute on an emptied cache.
SCALING_MAX_SETUPS = 20
SCALING_PAGE_SETUPS = 24


class ScalingSelection(NamedTuple):
    """What a scaling page draws, from its query (the defaults for an empty one)."""

    params: list[str]
    param: str
    groups: dict[str, list[int]]
    rest: str
    subset: Subset  # the group's setups drawn (one point a build)
    drawn: list[int]
    metrics: list[dict[str, Any]]
    metric: Mapping[str, Any] | None
    note: str | None


def scaling_selection(q: Mapping[str, Any], scope: SetupScope) -> ScalingSelection:
    """The parameter, the group of setups that vary it alone, the page of that group drawn
    and the metric: the metrics offered are those of the drawn setups (a group's setups run
    the same workload), so that no request reads more than a page of setups."""
    params = scope.varying_params()
    param = choice_param(q, "param", params, params[0])
    groups = scope.held_fixed(param)
    rest = choice_param(q, "rest", tuple(groups), next(iter(groups)))
    ordered = [str(i) for i in by_value(scope, groups[rest], param)]
    subset = drawn_subset(
        cache_key("scaling-setups", param=param, rest=rest),
        q,
        "setups",
        scope.key,
        ordered,
        lambda: spread(ordered, SCALING_MAX_SETUPS),
        SCALING_PAGE_SETUPS,
    )
    ids = [int(i) for i in subset.drawn]
    metrics = cached_in_scope(
        cache_key("scope-metrics", setups=frozenset(ids)),  # merged: in any order
        scope.key,
        lambda: series_data.metrics_of_setups(ids),
        stale=True,
    )
    metric, note = metric_param(q, metrics)
    return ScalingSelection(params, param, groups, rest, subset, ids, metrics, metric, note)


def by_value(scope: SetupScope, ids: list[int], param: str) -> list[int]:
    """Setup ids in the order of their value of ``param`` (numbers first), then by id."""
    values = {s["id"]: s["params"].get(param) for s in scope.setups}

    def order(setup_id: int) -> tuple[bool, float, str, int]:
        value = values.get(setup_id)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return (False, float(value), "", setup_id)
        return (True, 0.0, str(value), setup_id)

    return sorted(ids, key=order)


def spread(ordered: list[str], most: int) -> list[str]:
    """At most ``most`` of ``ordered``, spread evenly from its first to its last."""
    if len(ordered) <= most:
        return list(ordered)
    step = (len(ordered) - 1) / (most - 1)
    return [ordered[round(i * step)] for i in range(most)]


def scaling_chart(
    scope: SetupScope,
    sel: ScalingSelection,
    read: Mapping[int, cq.RecentPiece] | None = None,
) -> tuple[str, Callable[[list[str]], ScalingChart], list[str]]:
    """The chart's cache key, the chart of some builds (made only for a download or a view
    not cached yet) and every build in kernel order (cached). ``read``: its recent pieces,
    when the caller read them already (a scope's ~100 pieces unpickled once, not twice).

    A scope's chart reads every run of ~100 setups (~0.5 s at 10M results): it is made of
    one piece per setup, cached per setup version (``perfdb.cache.setups``), so after an
    upload only the pieces of the setups it wrote to are read again. The pieces read for
    the newest builds (every default view) are cut to each setup's newest builds
    (``cq.recent_piece``): their size does not grow with the series' history."""
    metric = sel.metric
    assert metric is not None
    key = _scaling_key(scope, sel)

    @cache
    def recent() -> list[cq.RecentPiece]:
        return list((_recent_pieces(sel) if read is None else read).values())

    def drawn(shown: list[str]) -> ScalingChart:
        title = f"{metric['name']} against {sel.param}"
        if set(shown) <= cq.newest_builds(recent(), SCALING_MAX_BUILDS):
            pieces = [points for _, points in recent()]  # every point of those builds
        else:
            pieces = list(_scaling_pieces(sel).values())
        return cq.scaling_chart(
            pieces, metric=metric, param=sel.param, title=title, builds=set(shown)
        )

    builds = cached_in_scope(
        _builds_key(key), scope.key, lambda: cq.builds_of(recent()), stale=True
    )
    return key, drawn, builds


def _scaling_pieces(sel: ScalingSelection) -> dict[int, tuple[cq.PiecePoint, ...]]:
    """Each drawn setup's points (``cq.scaling_pieces``), cached per setup version: for a
    view of older builds, or a download of them."""
    metric = sel.metric
    assert metric is not None
    return cached_per_setup(
        cache_key("scaling-piece", param=sel.param, metric=metric["id"]),
        sel.drawn,
        lambda todo: cq.scaling_pieces(setup_ids=todo, metric=metric, param=sel.param),
    )


def _recent_pieces(sel: ScalingSelection) -> dict[int, cq.RecentPiece]:
    """Each drawn setup's builds and the points of its newest ``SCALING_MAX_BUILDS``
    (``cq.recent_piece``), cached per setup version."""
    metric = sel.metric
    assert metric is not None

    def compute(todo: list[int]) -> dict[int, cq.RecentPiece]:
        pieces = cq.scaling_pieces(setup_ids=todo, metric=metric, param=sel.param)
        return {s: cq.recent_piece(points, SCALING_MAX_BUILDS) for s, points in pieces.items()}

    key = cache_key(
        "scaling-recent", builds=SCALING_MAX_BUILDS, param=sel.param, metric=metric["id"]
    )
    return cached_per_setup(key, sel.drawn, compute)


def scaling_warm(scope_key: str) -> None:
    """After an upload (dashboards/page_cache/warm.py), the recent pieces of a scope's
    default scaling chart (what its links open): kept current for every scope an upload
    writes to, read again only for the setups it wrote to, so that a first visitor reads
    no runs. Its builds and view are computed too if they were cached for an earlier
    version (someone opens it)."""
    found = _default_selection(scope_key)
    if found is None:
        return
    scope, sel = found
    read = _recent_pieces(sel)
    if not cached_before(_builds_key(_scaling_key(scope, sel)), scope.key):
        return
    default_view(scope, sel, read=read)


def scaling_warm_default(scope_key: str | None = None) -> None:
    """A scope's default chart (of the page's default scope with None), whether or not
    anyone opened it: the warm-up after a deploy (dashboards/page_cache/warm.py)."""
    found = _default_selection(scope_key)
    if found is not None:
        default_view(*found)


def _default_selection(scope_key: str | None) -> tuple[SetupScope, ScalingSelection] | None:
    """The scope ``scope_key`` names (the page's first with None) and its default chart's
    selection; None when it has nothing to chart."""
    choices = [s for s in scope_index().scopes if s.has_varying_params]
    scope = scope_setups(next((s for s in choices if scope_key in (None, s.key)), None))
    if scope is None:
        return None
    sel = scaling_selection(QueryDict(), scope)
    return None if sel.metric is None else (scope, sel)


def default_view(
    scope: SetupScope,
    sel: ScalingSelection,
    stale: bool = False,
    read: Mapping[int, cq.RecentPiece] | None = None,
) -> tuple[list[str], int, str]:
    """The chart of the newest builds (what the scope's links open): those builds, its
    number of points and its figure, cached as one entry under a key that does not name the
    builds. An upload adds a build, so a key naming them had no previous value to serve:
    the first visitor after each upload drew the chart (50-140 ms of CPU, seconds under a
    lab's load). Served stale like the other scope charts (``stale``: at most
    ``PAGE_CACHE_STALE_SECONDS`` behind the uploads, the builds and the figure of one
    moment), and kept current by the warm-up after each upload (``scaling_warm``)."""

    def view() -> tuple[list[str], int, str]:
        read_now = _recent_pieces(sel) if read is None else read
        _, drawn, builds = scaling_chart(scope, sel, read_now)
        shown = builds[-SCALING_MAX_BUILDS:]
        return (shown, *_scaling_view(drawn(shown)))

    key = cache_key("scaling-default-view", chart=_scaling_key(scope, sel))
    return cached_in_scope(key, scope.key, view, stale=stale)


def chosen_view(
    scope: SetupScope, key: str, drawn: Callable[[list[str]], ScalingChart], shown: list[str]
) -> tuple[int, str]:
    """The view of builds picked in the URL (``scaling_view``), cached per scope version
    under the chart's key and the builds, drawn as a set."""
    return cached_in_scope(
        cache_key("scaling-view", chart=key, builds=frozenset(shown)),
        scope.key,
        lambda: _scaling_view(drawn(shown)),
        stale=True,
    )


def _scaling_key(scope: SetupScope, sel: ScalingSelection) -> str:
    """The chart's key: its setups in the order drawn, or None for the default ones (whatever
    they are under the scope's version: the key stays when an upload changes them)."""
    assert sel.metric is not None
    return cache_key(
        "scaling",
        scope=scope.key,
        param=sel.param,
        rest=sel.rest,
        metric=sel.metric["id"],
        setups=None if sel.subset.is_default else sel.subset.drawn,
    )


def _builds_key(chart: str) -> str:
    """The key of every build of the chart ``chart`` names (``_scaling_key``)."""
    return cache_key("scaling-builds", chart=chart)


def _scaling_view(chart: ScalingChart) -> tuple[int, str]:
    """What the page draws of the shown builds: their number of points and the figure, as
    the page embeds it, escaped once here (``figure_script``: escaping 0.5 MB on every
    request had been most of a warm one)."""
    return len(chart.points), figure_script(scaling_figure(chart), "fig-scaling")

"""The comparison pages. Each view reads its selection from the query string (so every view
is a permalink), calls the selectors, hands plain data to a figure builder, and renders.

``&format=csv|json`` (with ``&chart=<name>`` on pages with two charts) downloads the data of a
chart instead of the page. A bad parameter is a 400 naming it, never a 500.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from dashboards import chart_queries as cq
from dashboards import exports, scope_stats
from dashboards.chart_queries import profiles as profile_queries
from dashboards.chartdata import Baseline
from dashboards.figures import (
    across_kernels_figure,
    kernel_time_figure,
    scaling_figure,
    top_functions_figure,
    wakeups_figures,
)
from dashboards.figures.wakeups import VALUES as WAKEUP_VALUES
from dashboards.page_tools import bad_params_are_400, download, links, run_text
from dashboards.selection import (
    BadParam,
    choice_param,
    choices_param,
    format_param,
    int_param,
    metric_param,
    scope_param,
    scopes_from,
    setup_label,
)
from dashboards.selection import Scope as SetupScope
from perfdb.cache import cached, cached_in_scope
from perfdb.kernels import kernel_sort_key

TOP_N_MAX = 30
# A scaling chart with more lines than this is unreadable (and slow): by default it shows the
# newest builds in kernel order, and the page lets you pick others.
SCALING_MAX_BUILDS = 12


# --- across kernels ---------------------------------------------------------------------


@bad_params_are_400
def kernels(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    setup = _kernels_setup(q)
    if setup is None:
        return render(request, "dashboards/kernels.html", {})
    metrics = cq.metric_choices(setup_ids=[setup["id"]])
    metric, note = metric_param(q, metrics)
    data = None
    baseline_id = int_param(q, "baseline")
    if metric is not None:
        title = f"{metric['name']} across kernels"
        data = cq.series_points(setup_id=setup["id"], metric=metric, title=title)
        baseline = _baseline(data, baseline_id)
        if fmt:  # a download needs no picker: two small queries besides the series
            return download((exports.series_table(data.series),), request, fmt)
    scope = _scope_choice_of(setup)
    context: dict[str, Any] = {
        "scopes": _scope_index().scopes,
        "scope": scope,
        "setups": [
            {"id": s["id"], "text": f"{setup_label(s)} ({s['run_count']} runs)"}
            for s in cq.setup_choices(scope=scope.ids)
        ],
        "setup": setup,
    }
    if metric is None or data is None:
        return render(request, "dashboards/kernels.html", context)
    selection = {"setup": setup["id"], "metric": metric["id"], "baseline": baseline_id}
    return render(
        request,
        "dashboards/kernels.html",
        {
            **context,
            **links("dashboards-kernels", selection, ("across-kernels",)),
            "metrics": metrics,
            "metric": metric,
            "note": note,
            "baseline_id": baseline_id,
            "baseline_choices": [
                {"id": p.run.run_id, "text": run_text(p.run, data.labels.get(p.run.run_id, ""))}
                for p in data.series.points
            ],
            "figure": across_kernels_figure(data.series, baseline),
            "n_points": len(data.series.points),
        },
    )


def _kernels_setup(q) -> dict[str, Any] | None:
    """The setup to chart: ``setup`` (old permalinks name only it), else the busiest setup
    of ``scope``, else the busiest of all. None when nothing has runs."""
    wanted = int_param(q, "setup")
    if wanted is not None:
        found = cq.setup_choices(setup_id=wanted)
        if not found:
            raise BadParam("setup", f"no setup {wanted} with runs")
        return found[0]
    index = _scope_index()
    scope = scope_param(q, index.scopes) if q.get("scope") else None
    if scope is None:
        if index.busiest_setup_id is None:
            return None
        return cq.setup_choices(setup_id=index.busiest_setup_id)[0]
    return max(cq.setup_choices(scope=scope.ids), key=lambda s: s["run_count"])


# --- scopes (workload x hardware x UP/SMP): the first picker of every chart page ----------


@dataclass(frozen=True)
class ScopeChoice:
    """One entry of the scope picker; its setups are read only when it is the one shown."""

    key: str
    label: str
    ids: tuple[int, int, str]  # workload id, hardware id, mode
    has_varying_params: bool  # the scaling page can chart it
    has_wakeup_params: bool  # the wakeups page can chart it


@dataclass(frozen=True)
class ScopeIndex:
    scopes: tuple[ScopeChoice, ...]
    busiest_setup_id: int | None  # the across-kernels page's default


def _scope_index() -> ScopeIndex:
    """Every scope with runs, cached until runs are added or removed. Built from the
    per-scope run counts (``dashboards.scope_stats``), so after an upload only the scopes it
    wrote to are counted again, not every run (~1 s at 3M results)."""
    return cached("dashboards:scope-index", _scope_index_build)


def _scope_index_build() -> ScopeIndex:
    setups = scope_stats.setups_with_counts()
    scopes = tuple(
        ScopeChoice(
            key=scope.key,
            label=scope.label,
            ids=(
                scope.setups[0]["workload_id"],
                scope.setups[0]["hardware_id"],
                scope.setups[0]["mode"],
            ),
            has_varying_params=bool(scope.varying_params()),
            has_wakeup_params=scope.has_params(cq.WAKEUP_PARAMS),
        )
        for scope in scopes_from(setups)
    )
    busiest = max(setups, key=lambda s: s["run_count"])["id"] if setups else None
    return ScopeIndex(scopes, busiest)


def _scope_choice_of(setup: Mapping[str, Any]) -> ScopeChoice:
    key = f"{setup['workload_id']}-{setup['hardware_id']}-{setup['mode']}"
    for scope in _scope_index().scopes:
        if scope.key == key:
            return scope
    # Cached before this setup's first run: a run only just committed. Serve it all the same.
    label = f"{setup['workload']} on {setup['hardware']}, {setup['mode']}"
    ids = (setup["workload_id"], setup["hardware_id"], setup["mode"])
    return ScopeChoice(key, label, ids, False, False)


def _scope_setups(choice: ScopeChoice | None) -> SetupScope | None:
    """The chosen scope with its setups (one query for ~100 setups at lab scale)."""
    if choice is None:
        return None
    return SetupScope(choice.key, choice.label, tuple(cq.setup_choices(scope=choice.ids)))


def _baseline(data: cq.KernelSeries, run_id: int | None) -> Baseline | None:
    if run_id is None:
        return None
    for point in data.series.points:
        if point.run.run_id == run_id:
            if point.value == 0:
                raise BadParam("baseline", f"run {run_id} has the value 0; nothing is % of 0")
            label = data.labels.get(run_id) or f"run #{run_id}"
            return Baseline(value=point.value, label=label)
    raise BadParam("baseline", f"run {run_id} is not in this series")


# --- scaling ------------------------------------------------------------------------------


@bad_params_are_400
def scaling(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    scopes = [s for s in _scope_index().scopes if s.has_varying_params]
    scope = _scope_setups(scope_param(q, scopes))
    context: dict[str, Any] = {"scopes": scopes, "scope": scope}
    if scope is None:
        return render(request, "dashboards/scaling.html", context)
    params = scope.varying_params()
    param = choice_param(q, "param", params, params[0])
    groups = scope.held_fixed(param)
    rest = choice_param(q, "rest", tuple(groups), next(iter(groups)))
    metrics = cq.metric_choices(setup_ids=groups[rest])
    metric, note = metric_param(q, metrics)
    if metric is None:
        return render(request, "dashboards/scaling.html", context)
    # A scope's chart reads every run of ~100 setups (~1 s at 10M results): cached.
    key = f"scaling:{scope.key}:{param}:{rest}:{metric['id']}"
    chart = cached_in_scope(
        key,
        scope.key,
        lambda: cq.scaling_points(
            setup_ids=groups[rest],
            metric=metric,
            param=param,
            title=f"{metric['name']} against {param}",
        ),
    )
    builds = _builds_in_kernel_order(chart)
    default_builds = builds[-SCALING_MAX_BUILDS:]
    shown = choices_param(q, "builds", builds, default_builds)
    chart = replace(chart, points=tuple(p for p in chart.points if p.run.build in set(shown)))
    if fmt:
        return download((exports.scaling_table(chart),), request, fmt)
    selection = {"scope": scope.key, "param": param, "rest": rest, "metric": metric["id"]}
    if shown != default_builds:
        selection["builds"] = shown
    return render(
        request,
        "dashboards/scaling.html",
        {
            **context,
            **links("dashboards-scaling", selection, ("scaling",)),
            "params": params,
            "param": param,
            "rests": list(groups),
            "rest": rest,
            "metrics": metrics,
            "metric": metric,
            "note": note,
            "figure": cached_in_scope(
                f"{key}:figure:{'|'.join(shown)}", scope.key, lambda: scaling_figure(chart)
            ),
            "n_points": len(chart.points),
            "builds": builds,
            "shown_builds": shown,
            "max_builds": SCALING_MAX_BUILDS,
        },
    )


def _builds_in_kernel_order(chart) -> list[str]:
    """The chart's kernel builds (kernel+patches), in kernel order, stock before patched."""
    runs = {p.run.build: p.run for p in chart.points}
    return sorted(runs, key=lambda b: (kernel_sort_key(runs[b].kernel), runs[b].patches))


# --- kernel and scheduler time ----------------------------------------------------------


@bad_params_are_400
def kernel_time(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    scopes = _profiled_first(_scope_index().scopes)
    scope = _scope_setups(scope_param(q, scopes))
    top = int_param(q, "top")
    top = 10 if top is None else top
    if not 1 <= top <= TOP_N_MAX:
        raise BadParam("top", f"expected 1 to {TOP_N_MAX}, got {top}")
    context: dict[str, Any] = {
        "scopes": scopes,
        "scope": scope,
        "top": top,
        "top_choices": sorted({5, 10, 15, 20, TOP_N_MAX, top}),
    }
    if scope is None:
        return render(request, "dashboards/kernel_time.html", context)
    params = scope.varying_params()
    param = choice_param(q, "param", params, "") or None
    chart, profiles = cached_in_scope(
        f"kernel-time:{scope.key}:{param}",
        scope.key,
        lambda: (
            cq.kernel_time_points(setup_ids=scope.setup_ids, param=param),
            cq.kernel_profiles(setup_ids=scope.setup_ids),
        ),
    )
    if fmt:
        tables = (exports.kernel_time_table(chart), exports.profile_table(profiles))
        return download(tables, request, fmt)
    selection = {"scope": scope.key, "param": param, "top": top}
    return render(
        request,
        "dashboards/kernel_time.html",
        {
            **context,
            **links("dashboards-kernel-time", selection, ("kernel-time", "kernel-functions")),
            "params": params,
            "param": param or "",
            "time_figure": kernel_time_figure(chart),
            "profile_figure": top_functions_figure(tuple(profiles), top_n=top),
            "n_points": len(chart.points),
            "n_profiles": len(profiles),
            "profile_diff_url": _profile_diff_of_scope(scope),
        },
    )


def _profiled_first(scopes):
    """Scopes with a kernel profile first, so the page opens on one that has something."""
    profiled = [s["scope"] for s in profile_queries.profiled_setups()]
    rank = {key: i for i, key in enumerate(dict.fromkeys(profiled))}
    return sorted(scopes, key=lambda s: rank.get(s.key, len(rank)))


def _profile_diff_of_scope(scope: SetupScope) -> str | None:
    """The profile diff of the scope's busiest profiled setup (first against last build)."""
    ids = set(scope.setup_ids)
    setup = next((s for s in profile_queries.profiled_setups() if s["id"] in ids), None)
    return None if setup is None else f"{reverse('dashboards-profile-diff')}?setup={setup['id']}"


# --- wakeups and preemption -------------------------------------------------------------


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
    # Every run of the scope (~6,000 at 10M results, ~2 s to read): cached per scope.
    rows, skipped = cached_in_scope(
        f"wakeups:{scope.key}", scope.key, lambda: cq.wakeup_rows(setup_ids=with_params)
    )
    builds = list(dict.fromkeys(r.run.build for r in rows))
    build = choice_param(q, "build", builds, builds[0] if builds else "")
    rows = [r for r in rows if r.run.build == build]
    if fmt:
        return download((exports.wakeups_table(rows),), request, fmt)
    # One heatmap per threshold: ~1 s of Plotly at lab scale, so cached with the rows.
    figures = cached_in_scope(
        f"wakeups:{scope.key}:{build}:{value}:figures",
        scope.key,
        lambda: wakeups_figures(tuple(rows), heatmap_value=value),
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

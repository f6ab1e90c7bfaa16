"""The comparison pages. Each view reads its selection from the query string (so every view
is a permalink), calls the selectors, hands plain data to a figure builder, and renders.

``&format=csv|json`` (with ``&chart=<name>`` on pages with two charts) downloads the data of a
chart instead of the page. A bad parameter is a 400 naming it, never a 500.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from dashboards import exports
from dashboards.chartdata import Baseline, CompareRow
from dashboards.chartdata import Metric as MetricData
from dashboards.compare import CompareLine, compare_lines
from dashboards.figures import (
    across_kernels_figure,
    compare_figure,
    kernel_time_figure,
    scaling_figure,
    top_functions_figure,
    vmstat_figure,
    wakeups_figures,
)
from dashboards.figures.vmstat import DEFAULT_GROUPS, GROUPS
from dashboards.figures.wakeups import VALUES as WAKEUP_VALUES
from dashboards.selection import (
    BadParam,
    choice_param,
    format_param,
    ids_param,
    int_param,
    metric_param,
    scope_param,
    scopes_from,
    setup_label,
)
from perfdb import chart_queries as cq

TOP_N_MAX = 30


def bad_params_are_400(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except BadParam as error:
            context = {"param": error.name, "message": error.message, "back": request.path}
            return render(request, "dashboards/bad_request.html", context, status=400)

    return wrapped


def links(view_name: str, selection: Mapping[str, object], charts: tuple[str, ...]) -> dict:
    """The permalink of the current selection and each chart's CSV / JSON download."""
    base = reverse(view_name)
    kept = {k: v for k, v in selection.items() if v not in (None, "")}
    out: dict[str, Any] = {"permalink": f"{base}?{urlencode(kept)}", "downloads": []}
    for chart in charts:
        urls = {
            fmt: f"{base}?{urlencode({**kept, 'format': fmt, 'chart': chart})}"
            for fmt in exports.FORMATS
        }
        out["downloads"].append({"chart": chart, **urls})
    return out


def download(tables: tuple[exports.Table, ...], request: HttpRequest, fmt: str) -> HttpResponse:
    names = tuple(t.name for t in tables)
    chart = choice_param(request.GET, "chart", names, names[0])
    table = exports.pick(tables, chart)
    assert table is not None
    return exports.export_response(table, fmt)


# --- across kernels ---------------------------------------------------------------------


@bad_params_are_400
def kernels(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    setups = cq.setup_choices()
    context: dict[str, Any] = {"setups": _setup_groups(setups)}
    if not setups:
        return render(request, "dashboards/kernels.html", context)
    setup = _setup_param(q, setups)
    metrics = cq.metric_choices(setup_ids=[setup["id"]])
    metric, note = metric_param(q, metrics)
    if metric is None:
        return render(request, "dashboards/kernels.html", {**context, "setup": setup})
    data = cq.series_points(
        setup_id=setup["id"], metric=metric, title=f"{metric['name']} across kernels"
    )
    baseline_id = int_param(q, "baseline")
    baseline = _baseline(data, baseline_id)
    if fmt:
        return download((exports.series_table(data.series),), request, fmt)
    selection = {"setup": setup["id"], "metric": metric["id"], "baseline": baseline_id}
    return render(
        request,
        "dashboards/kernels.html",
        {
            **context,
            **links("dashboards-kernels", selection, ("across-kernels",)),
            "setup": setup,
            "metrics": metrics,
            "metric": metric,
            "note": note,
            "baseline_id": baseline_id,
            "baseline_choices": [
                {"id": p.run.run_id, "text": _run_text(p.run, data.labels.get(p.run.run_id, ""))}
                for p in data.series.points
            ],
            "figure": across_kernels_figure(data.series, baseline),
            "n_points": len(data.series.points),
        },
    )


def _setup_param(q, setups: list[dict[str, Any]]) -> dict[str, Any]:
    wanted = int_param(q, "setup")
    if wanted is None:
        return max(setups, key=lambda s: s["run_count"])
    for setup in setups:
        if setup["id"] == wanted:
            return setup
    raise BadParam("setup", f"no setup {wanted} with runs")


def _setup_groups(setups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Setups for an <optgroup> select: workload on hardware, mode / parameters."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in setups:
        label = f"{s['workload']} on {s['hardware']}, {s['mode']}"
        text = f"{_setup_text(s)} ({s['run_count']} runs)"
        groups.setdefault(label, []).append({"id": s["id"], "text": text})
    return [{"label": label, "options": options} for label, options in groups.items()]


def _setup_text(setup: dict[str, Any]) -> str:
    return f"{setup['workload']} on {setup['hardware']} {setup['mode']}, {setup_label(setup)}"


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


def _run_text(run, label: str = "") -> str:
    text = f"#{run.run_id} {run.build}"
    return f"{text} ({label})" if label else text


# --- scaling ------------------------------------------------------------------------------


@bad_params_are_400
def scaling(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    scopes = [s for s in scopes_from(cq.setup_choices()) if s.varying_params()]
    scope = scope_param(q, scopes)
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
    chart = cq.scaling_points(
        setup_ids=groups[rest],
        metric=metric,
        param=param,
        title=f"{metric['name']} against {param}",
    )
    if fmt:
        return download((exports.scaling_table(chart),), request, fmt)
    selection = {"scope": scope.key, "param": param, "rest": rest, "metric": metric["id"]}
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
            "figure": scaling_figure(chart),
            "n_points": len(chart.points),
        },
    )


# --- kernel and scheduler time ----------------------------------------------------------


@bad_params_are_400
def kernel_time(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    scopes = scopes_from(cq.setup_choices())
    scope = scope_param(q, scopes)
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
    chart = cq.kernel_time_points(setup_ids=scope.setup_ids, param=param)
    profiles = cq.kernel_profiles(setup_ids=scope.setup_ids)
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
        },
    )


# --- wakeups and preemption -------------------------------------------------------------


@bad_params_are_400
def wakeups(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    scopes = [s for s in scopes_from(cq.setup_choices()) if s.has_params(cq.WAKEUP_PARAMS)]
    scope = scope_param(q, scopes)
    value = choice_param(q, "value", tuple(WAKEUP_VALUES), "throughput")
    context: dict[str, Any] = {
        "scopes": scopes,
        "scope": scope,
        "value": value,
        "values": [{"key": k, "text": label} for k, (label, _) in WAKEUP_VALUES.items()],
    }
    if scope is None:
        return render(request, "dashboards/wakeups.html", context)
    with_params = [s["id"] for s in scope.setups if all(p in s["params"] for p in cq.WAKEUP_PARAMS)]
    rows, skipped = cq.wakeup_rows(setup_ids=with_params)
    builds = list(dict.fromkeys(r.run.build for r in rows))
    build = choice_param(q, "build", builds, builds[0] if builds else "")
    rows = [r for r in rows if r.run.build == build]
    if fmt:
        return download((exports.wakeups_table(rows),), request, fmt)
    figures = wakeups_figures(tuple(rows), heatmap_value=value)
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


# --- system activity (vmstat) -----------------------------------------------------------


@bad_params_are_400
def activity(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    choices = cq.run_choices(vmstat_only=True)
    run_ids = ids_param(q, "runs") or [c["id"] for c in choices[:1]]
    group_names = tuple(name for name, _, _ in GROUPS)
    groups = _groups_param(q, group_names)
    runs = cq.vmstat_runs(run_ids=run_ids)
    missing = sorted(set(run_ids) - {r.run.run_id for r in runs})
    if missing:
        known = cq.run_infos(run_ids=missing)
        unknown = [i for i in missing if i not in known]
        if unknown:
            raise BadParam("runs", f"no run {', '.join(map(str, unknown))}")
    if fmt:
        return download((exports.vmstat_table(runs),), request, fmt)
    selection = {"runs": ",".join(map(str, run_ids)), "groups": ",".join(groups)}
    return render(
        request,
        "dashboards/activity.html",
        {
            **links("dashboards-activity", selection, ("vmstat",)),
            "choices": choices,
            "run_ids": run_ids,
            "missing": missing,
            "groups": groups,
            "group_names": group_names,
            "figure": vmstat_figure(tuple(runs), groups=groups),
            "n_runs": len(runs),
        },
    )


def _groups_param(q, names: tuple[str, ...]) -> tuple[str, ...]:
    parts = [p.strip() for raw in q.getlist("groups") for p in raw.split(",") if p.strip()]
    for part in parts:
        if part not in names:
            raise BadParam("groups", f"{part[:30]!r} is not one of {', '.join(names)}")
    return tuple(parts) or DEFAULT_GROUPS


# --- compare --------------------------------------------------------------------------------


def compare_selection(q) -> tuple[list[int], list[int]]:
    """The two sides from ``base`` and ``new``; both are needed, a run only on one side."""
    base, new = ids_param(q, "base"), ids_param(q, "new")
    if base and not new:
        raise BadParam("new", "give the candidate run ids, e.g. new=15,16")
    if new and not base:
        raise BadParam("base", "give the baseline run ids, e.g. base=12,13")
    both = set(base) & set(new)
    if both:
        raise BadParam("new", f"run {min(both)} is on both sides")
    return base, new


def compare_data(base: list[int], new: list[int]) -> tuple[list[CompareLine], dict]:
    """Lines and run infos; unknown run ids are a BadParam naming their side."""
    infos = cq.run_infos(run_ids=base + new)
    for name, ids in (("base", base), ("new", new)):
        unknown = [i for i in ids if i not in infos]
        if unknown:
            raise BadParam(name, f"no run {', '.join(map(str, unknown))}")
    lines = compare_lines(cq.compare_values(base_ids=base, new_ids=new))
    return lines, infos


@bad_params_are_400
def compare(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    base, new = compare_selection(q)
    context: dict[str, Any] = {"base": base, "new": new, "recent": cq.run_choices()}
    if not base:
        return render(request, "dashboards/compare.html", context)
    lines, infos = compare_data(base, new)
    if fmt:
        return download((exports.compare_table(lines),), request, fmt)
    selection = {"base": ",".join(map(str, base)), "new": ",".join(map(str, new))}
    directed = [line for line in lines if line.direction != "none"]
    rows = _compare_rows(directed or lines, infos[base[0]][0], infos[new[0]][0])
    return render(
        request,
        "dashboards/compare.html",
        {
            **context,
            **links("dashboards-compare", selection, ("compare",)),
            "lines": lines,
            "base_runs": [_run_text(*infos[i]) for i in base],
            "new_runs": [_run_text(*infos[i]) for i in new],
            "figure": compare_figure(tuple(rows), title="Candidate against baseline"),
            "charted_all": not directed,
        },
    )


def _compare_rows(lines: list[CompareLine], base_run, new_run) -> list[CompareRow]:
    """Figure rows for lines with a value on both sides. A metric without a direction gets
    no p-value, so the chart draws it grey rather than calling it better or worse."""
    return [
        CompareRow(
            metric=MetricData(line.metric, line.unit, line.direction != "lower"),
            baseline=base_run,
            candidate=new_run,
            baseline_value=line.base.mean,
            candidate_value=line.new.mean,
            p_value=line.p_value if line.direction != "none" else None,
        )
        for line in lines
        if line.base.mean is not None and line.new.mean is not None
    ]

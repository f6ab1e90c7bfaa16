"""Pages over chosen runs rather than a scope: system activity (vmstat) of runs and the
comparison of two sets of runs."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards import chart_queries as cq
from dashboards import exports
from dashboards.attribution_views import attribution_table, compare_attribution
from dashboards.chart_queries import profiles as profile_queries
from dashboards.chartdata import CompareRow
from dashboards.chartdata import Metric as MetricData
from dashboards.compare import CompareLine, compare_lines
from dashboards.compare_series import compare_contexts
from dashboards.figures import (
    compare_figure,
    vmstat_figure,
)
from dashboards.figures.vmstat import DEFAULT_GROUPS, column_groups
from dashboards.page_cache import kept_for_anonymous
from dashboards.page_tools import bad_params_are_400, download, links, run_text
from dashboards.selection import (
    BadParam,
    choice_param,
    format_param,
    ids_param,
)

# --- system activity (vmstat) -----------------------------------------------------------


@bad_params_are_400
def activity(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    # Every stored time series, one source at a time: vmstat, sar, iostat, mpstat, dbench's
    # per-second samples, perf stat -I, ...; the column groups are the source's own.
    sources = cq.sample_sources()
    source = choice_param(q, "source", sources, sources[0] if sources else "vmstat")
    choices = cq.run_choices(sample_source=source)
    run_ids = ids_param(q, "runs") or [c["id"] for c in choices[:1]]
    runs = cq.vmstat_runs(run_ids=run_ids, source=source)
    columns = list(dict.fromkeys(c for r in runs for c in r.columns))
    table = column_groups(source, columns)
    group_names = tuple(name for name, _, _ in table)
    default = DEFAULT_GROUPS if source == "vmstat" else group_names[:4]
    groups = _groups_param(q, group_names, default)
    missing = sorted(set(run_ids) - {r.run.run_id for r in runs})
    if missing:
        known = cq.run_infos(run_ids=missing)
        unknown = [i for i in missing if i not in known]
        if unknown:
            raise BadParam("runs", f"no run {', '.join(map(str, unknown))}")
    if fmt:
        return download((exports.vmstat_table(runs),), request, fmt)
    selection = {
        "source": source,
        "runs": ",".join(map(str, run_ids)),
        "groups": ",".join(groups),
    }
    return render(
        request,
        "dashboards/activity.html",
        {
            **links("dashboards-activity", selection, ("vmstat",)),
            "sources": sources,
            "source": source,
            "choices": choices,
            "run_ids": run_ids,
            "missing": missing,
            "groups": groups,
            "group_names": group_names,
            "figure": vmstat_figure(tuple(runs), groups, source, table),
            "n_runs": len(runs),
        },
    )


def _groups_param(
    q, names: tuple[str, ...], default: tuple[str, ...] = DEFAULT_GROUPS
) -> tuple[str, ...]:
    parts = [p.strip() for raw in q.getlist("groups") for p in raw.split(",") if p.strip()]
    for part in parts:
        if part not in names:
            raise BadParam("groups", f"{part[:30]!r} is not one of {', '.join(names)}")
    return tuple(parts) or default


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
    # judged by the detector's rule, with the series' noise and the alerts on these runs
    contexts = compare_contexts(base_ids=base, new_ids=new)
    lines = compare_lines(cq.compare_values(base_ids=base, new_ids=new), contexts)
    return lines, infos


@kept_for_anonymous("compare")
@bad_params_are_400
def compare(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    base, new = compare_selection(q)
    context: dict[str, Any] = {"base": base, "new": new, "recent": cq.run_choices()}
    if not base:
        return render(request, "dashboards/compare.html", context)
    lines, infos = compare_data(base, new)
    attribution = compare_attribution(base, new, lines)
    attribution_tables = (attribution_table(attribution),) if attribution else ()
    if fmt:
        return download((exports.compare_table(lines), *attribution_tables), request, fmt)
    selection = {"base": ",".join(map(str, base)), "new": ",".join(map(str, new))}
    directed = [line for line in lines if line.direction != "none"]
    rows = _compare_rows(directed or lines, infos[base[0]][0], infos[new[0]][0])
    return render(
        request,
        "dashboards/compare.html",
        {
            **context,
            **links(
                "dashboards-compare", selection, ("compare", *(t.name for t in attribution_tables))
            ),
            "attribution": attribution,
            "lines": lines,
            "base_runs": [run_text(*infos[i]) for i in base],
            "new_runs": [run_text(*infos[i]) for i in new],
            "figure": compare_figure(tuple(rows), title="Candidate against baseline"),
            "charted_all": not directed,
            "profile_diff_url": profile_queries.profile_diff_url(base, new),
        },
    )


def _compare_rows(lines: list[CompareLine], base_run, new_run) -> list[CompareRow]:
    """Figure rows for lines with a value on both sides, significant as the table says (the
    detector's rule). A metric without a direction is never significant: drawn grey."""
    return [
        CompareRow(
            metric=MetricData(line.metric, line.unit, line.direction != "lower"),
            baseline=base_run,
            candidate=new_run,
            baseline_value=line.base.mean,
            candidate_value=line.new.mean,
            p_value=line.p_value if line.direction != "none" else None,
            threshold_pct=line.threshold_pct,
            significant=line.significant,
            reason="; ".join(r for r in (line.reason, line.alert_note) if r),
        )
        for line in lines
        if line.base.mean is not None and line.new.mean is not None
    ]

"""The activity page (``/activity/?runs=1,2``): the time series stored with runs (vmstat,
sar, iostat, mpstat, a benchmark's per-second samples, ...), one source at a time, several
runs overlaid, and its CSV/JSON download."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards import chart_queries as cq
from dashboards.figures import vmstat_figure
from dashboards.figures.vmstat import DEFAULT_GROUPS, column_groups
from dashboards.pure.selection import BadParam, choice_param, format_param, ids_param
from dashboards.web import exports
from dashboards.web.page_tools import bad_params_are_400, download, links


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

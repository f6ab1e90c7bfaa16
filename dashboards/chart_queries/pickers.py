"""The choice lists behind the pickers of the chart pages: plain dicts, one query each."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db import connection
from django.db.models import F

from dashboards.chart_queries.compare import setups_named
from dashboards.chart_queries.summaries import SETUP_FIELDS, SETUP_ORDER, setup_dict
from dashboards.pure.selection import SetupKey, setup_of_key
from perfdb.models import Hardware, Result, Run, Sample, Setup, SetupSummary, Workload
from perfdb.models import Metric as MetricRow

# --- choices for the pickers -----------------------------------------------------------------


def setup_choices(
    *, scope: tuple[int, int, str] | None = None, setup_id: int | None = None
) -> list[dict[str, Any]]:
    """Setups that have runs, with their workload and hardware names: the pickers' source.

    ``scope`` (workload id, hardware id, mode) or ``setup_id`` narrows it to one scope or one
    setup, which is what a page needs per request (all setups is ~10,000 at lab scale). One
    query; served by setup_natural_uniq (workload, hardware, mode, ...) for a scope, and the
    primary keys for the names and the run count (``perfdb.models.SetupSummary``).
    """
    setups = Setup.objects.filter(summary__isnull=False)
    if scope is not None:
        workload_id, hardware_id, mode = scope
        setups = setups.filter(workload_id=workload_id, hardware_id=hardware_id, mode=mode)
    if setup_id is not None:
        setups = setups.filter(pk=setup_id)
    rows = (
        setups.annotate(run_count=F("summary__run_count"))
        .values(*SETUP_FIELDS, "run_count")
        .order_by(*SETUP_ORDER)
    )
    return [{**setup_dict(r), "run_count": r["run_count"]} for r in rows]


def setup_id_of(ref: int | SetupKey | None, name: str = "setup") -> int | None:
    """The id of a set-up as ``selection.setup_ref_param`` read it: an id as given, a name
    (``VolanoMark/P8/UP/rooms=10``) resolved among the set-ups with runs it names (one
    query); a name that no set-up or several have is a ``BadParam`` saying which."""
    if ref is None or isinstance(ref, int):
        return ref
    named = setups_named(workload=ref.workload, hardware=ref.hardware, mode=ref.mode)
    return int(setup_of_key(ref, named, name)["id"])


def metric_choices(*, setup_ids: Sequence[int]) -> list[dict[str, Any]]:
    """Metrics with at least one result in these setups, ordered by name, unit and id: the
    metrics of ``metrics_by_setup``, uncached (the pages keep each setup's ids cached:
    dashboards/page_data/series_data.py). Two queries, both index look-ups."""
    return metrics_ordered(m for ids in metrics_by_setup(setup_ids=setup_ids).values() for m in ids)


# Up to this many setups, each one's metrics are found by a loose index scan of
# result_series_idx (setup, metric): one probe per metric, where a DISTINCT reads every
# result of the setup (7 ms for a setup of 60 metrics x 1,000 kernels, read again after each
# upload to it). Each setup is its own statement so that the partition is chosen when the
# statement is planned (~0.5 ms each); past a few setups the one DISTINCT is cheaper.
LOOSE_SCAN_SETUPS = 4
_LOOSE_SCAN = f"""(WITH RECURSIVE found(metric_id) AS (
    (SELECT metric_id FROM {Result._meta.db_table} WHERE setup_id = %s
     ORDER BY metric_id LIMIT 1)
    UNION ALL
    SELECT (SELECT r.metric_id FROM {Result._meta.db_table} r
            WHERE r.setup_id = %s AND r.metric_id > found.metric_id
            ORDER BY r.metric_id LIMIT 1)
    FROM found WHERE found.metric_id IS NOT NULL
) SELECT %s, metric_id FROM found WHERE metric_id IS NOT NULL)"""


def metrics_by_setup(*, setup_ids: Sequence[int]) -> dict[int, list[int]]:
    """Each setup's metric ids (those with at least one result in it), every setup asked for
    included (a setup without results: none).

    One query, index-only on result_series_idx (setup, metric): a loose scan of each setup
    for a few setups (what an upload makes the pages read again: its own setups; a probe per
    metric however long the setup's history), else one DISTINCT over their results (a
    scope's hundred setups read cold). A scope's metrics are kept per setup and only the
    setups an upload wrote to are read again (dashboards/page_data/series_data.py)."""
    found: dict[int, set[int]] = {int(setup_id): set() for setup_id in setup_ids}
    if not found:
        return {}
    if len(found) <= LOOSE_SCAN_SETUPS:
        with connection.cursor() as cursor:
            cursor.execute(
                " UNION ALL ".join([_LOOSE_SCAN] * len(found)),
                [value for setup_id in found for value in (setup_id, setup_id, setup_id)],
            )
            pairs: Iterable[tuple[int, int]] = cursor.fetchall()
    else:
        pairs = (
            Result.objects.filter(setup_id__in=list(found))
            .values_list("setup_id", "metric_id")
            .distinct()
        )
    for setup_id, metric_id in pairs:
        found[setup_id].add(metric_id)
    return {setup_id: sorted(ids) for setup_id, ids in found.items()}


# A setup with its run count and each of its metrics (a loose scan of result_series_idx,
# as ``metrics_by_setup``), one row per metric in picker order (name, unit, id: the
# database's collation), or one row without a metric; none when the setup has no runs.
_SETUP_METRICS = f"""
WITH RECURSIVE found(metric_id) AS (
    (SELECT metric_id FROM {Result._meta.db_table} WHERE setup_id = %(setup)s
     ORDER BY metric_id LIMIT 1)
    UNION ALL
    SELECT (SELECT r.metric_id FROM {Result._meta.db_table} r
            WHERE r.setup_id = %(setup)s AND r.metric_id > found.metric_id
            ORDER BY r.metric_id LIMIT 1)
    FROM found WHERE found.metric_id IS NOT NULL
)
SELECT s.id, s.workload_id, w.name, w.version, s.hardware_id, h.name, s.mode, s.params::text,
       summary.run_count, m.id, m.name, m.unit, m.better
FROM {Setup._meta.db_table} s
JOIN {SetupSummary._meta.db_table} summary ON summary.setup_id = s.id
JOIN {Workload._meta.db_table} w ON w.id = s.workload_id
JOIN {Hardware._meta.db_table} h ON h.id = s.hardware_id
LEFT JOIN (found JOIN {MetricRow._meta.db_table} m ON m.id = found.metric_id) ON true
WHERE s.id = %(setup)s
ORDER BY m.name, m.unit, m.id
"""


def setup_metrics(*, setup_id: int) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The setup as ``setup_choices`` gives it (None when it has no runs) and its metrics
    as ``metric_choices`` gives them: what the series page's pickers need of its setup,
    in one query where those two took three (the setup, its metric ids, their names), each
    a round trip of the first page after an upload."""
    with connection.cursor() as cursor:
        cursor.execute(_SETUP_METRICS, {"setup": setup_id})
        rows = cursor.fetchall()
    if not rows:
        return None, []
    first = rows[0]
    setup = {
        "id": first[0],
        "workload_id": first[1],
        "workload": f"{first[2]} {first[3]}".strip(),
        "hardware_id": first[4],
        "hardware": first[5],
        "mode": first[6],
        "params": json.loads(first[7]),
        "run_count": first[8],
    }
    metrics = [
        {"id": row[9], "name": row[10], "unit": row[11], "better": row[12]}
        for row in rows
        if row[9] is not None
    ]
    return setup, metrics


def metrics_ordered(metric_ids: Iterable[int]) -> list[dict[str, Any]]:
    """These metrics as picker choices, ordered by name, unit and id (the database's
    collation, as every picker). One primary-key query."""
    rows = MetricRow.objects.filter(pk__in=set(metric_ids))
    return [
        dict(r) for r in rows.values("id", "name", "unit", "better").order_by("name", "unit", "id")
    ]


def run_choices(
    *, limit: int = 100, vmstat_only: bool = False, sample_source: str | None = None
) -> list[dict[str, Any]]:
    """Recent runs as picker options (id and a one-line description), newest first.

    One query. With ``sample_source`` (``vmstat_only``: "vmstat"), only runs with a time
    series of that source: the ``limit`` newest of them by run id, read backwards from
    sample_source_run_idx (source, run), then ordered as every picker is.
    """
    runs = Run.objects.all()
    source = "vmstat" if vmstat_only else sample_source
    if source is not None:
        # The newest runs having such a series, found from the samples' side
        # (sample_source_run_idx): walking runs newest first and probing each read 1.3M runs
        # at 100M results to find 100 when series are rare among the newest runs. Run ids
        # grow with creation, so the newest ids are the newest runs.
        having = Sample.objects.filter(source=source).order_by("-run_id").values("run_id")
        runs = runs.filter(pk__in=having.distinct()[:limit])
    rows = runs.values(
        "id",
        "label",
        "kernel__version",
        "patch_set__name",
        "setup__workload__name",
        "setup__hardware__name",
        "setup__mode",
    ).order_by("-created_at", "-id")[:limit]
    return [{"id": r["id"], "text": _choice_text(r)} for r in rows]


# One index probe per distinct source (a loose index scan of sample_source_run_idx): a
# DISTINCT over every sample row read 3.1M rows at 100M results (184 ms) for a handful.
_SOURCES = f"""
WITH RECURSIVE found(source) AS (
    SELECT min(source) FROM {Sample._meta.db_table}
    UNION ALL
    SELECT (SELECT min(source) FROM {Sample._meta.db_table} WHERE source > found.source)
    FROM found WHERE found.source IS NOT NULL
)
SELECT source FROM found WHERE source IS NOT NULL
"""


def sample_sources() -> list[str]:
    """Every stored time-series source (vmstat, sar, iostat, mpstat, dbench, perf-stat, …),
    vmstat first. One query, an index probe per source."""
    with connection.cursor() as cursor:
        cursor.execute(_SOURCES)
        found = {row[0] for row in cursor.fetchall()}
    return sorted(found, key=lambda s: (s != "vmstat", s))


def _choice_text(r: Mapping[str, Any]) -> str:
    build = "+".join(p for p in (r["kernel__version"], r["patch_set__name"]) if p)
    text = f"#{r['id']} {r['setup__workload__name']} {build} on {r['setup__hardware__name']} "
    text += r["setup__mode"]
    return f"{text} ({r['label']})" if r["label"] else text

"""Reads for the overview and the run page: the scopes with runs, the latest runs, open
alerts, a run's baseline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from django.db import connection, transaction

from dashboards.chart_queries.summaries import scopes_where
from perfdb.models import Alert, Hardware, Run, Setup, SetupSummary, Workload

OPEN_ALERT_STATUSES = (
    Alert.Status.UNTRIAGED,
    Alert.Status.ACKNOWLEDGED,
    Alert.Status.INVESTIGATING,
)


# --- overview -------------------------------------------------------------------------------


class ScopeRow(NamedTuple):
    """A scope (workload x hardware x UP/SMP) with runs, as the scope pickers list it."""

    workload_id: int
    hardware_id: int
    mode: str
    label: str  # "VolanoMark 2.1.2 on P8, SMP"
    has_varying_params: bool  # a numeric parameter with two values: a scaling chart
    has_params: bool  # a setup with every one of the ``needs`` parameters


# One pass over the setups with runs: per scope and parameter name, whether its numbers
# differ (a scaling chart's x axis), and per scope whether a setup has every ``needs`` name.
_SCOPES = """
SELECT k.workload_id, k.hardware_id, k.mode, w.name, w.version, h.name,
       coalesce(bool_or(k.varying), false), bool_or(k.has_params)
FROM (
    SELECT st.workload_id, st.hardware_id, st.mode, p.key,
           min(p.x) <> max(p.x) AS varying, bool_or(st.params ?& %s) AS has_params
    FROM {setup} st JOIN {summary} m ON m.setup_id = st.id
    LEFT JOIN LATERAL (
        SELECT key, CASE WHEN jsonb_typeof(value) = 'number'
                         THEN (value #>> '{{}}')::float8 END AS x
        FROM jsonb_each(st.params)
    ) p ON true
    GROUP BY 1, 2, 3, 4
) k
JOIN {workload} w ON w.id = k.workload_id
JOIN {hardware} h ON h.id = k.hardware_id
GROUP BY k.workload_id, k.hardware_id, k.mode, w.name, w.version, h.name
ORDER BY w.name, w.version, h.name, k.mode
"""


def scopes_with_runs(*, needs: Sequence[str]) -> list[ScopeRow]:
    """Every scope with runs, in picker order (workload, version, hardware, mode), with
    whether a scaling chart can draw it and whether a setup has every parameter of
    ``needs``. One query, aggregated in PostgreSQL over the setups with a summary row: the
    setups themselves read into Python for this had cost 0.2 s at 10M results and 1.1 s at
    34,000 setups (a third of 100M) on an emptied cache; this is 0.07 and 0.2 s."""
    sql = _SCOPES.format(
        setup=Setup._meta.db_table,
        summary=SetupSummary._meta.db_table,
        workload=Workload._meta.db_table,
        hardware=Hardware._meta.db_table,
    )
    with transaction.atomic(), connection.cursor() as cursor:
        # jsonb_each is planned at 100 rows a call: past ~20,000 setups the estimate passes
        # jit_above_cost, and compiling the query took 0.9 s of its 1.2 s (34,000 setups).
        cursor.execute("SET LOCAL jit = off")
        cursor.execute(sql, [list(needs)])
        return [
            ScopeRow(w, h, mode, f"{f'{name} {version}'.strip()} on {hw}, {mode}", varying, has)
            for w, h, mode, name, version, hw, varying, has in cursor
        ]


class ScopeTotal(NamedTuple):
    """A scope's runs and its newest run (by creation, then id)."""

    run_count: int
    newest_run_id: int


_TOTALS = """
SELECT s.workload_id, s.hardware_id, s.mode, sum(m.run_count),
       (array_agg(m.newest_run_id ORDER BY m.newest_at DESC, m.newest_run_id DESC))[1]
FROM {summary} m JOIN {setup} s ON s.id = m.setup_id
{where}
GROUP BY 1, 2, 3
"""


def scope_totals(
    scopes: Sequence[tuple[int, int, str]] | None,
) -> dict[tuple[int, int, str], ScopeTotal]:
    """Each scope's run count and newest run (``None``: every scope with runs), summed in
    PostgreSQL from the per-setup summaries: one row a scope, where reading every setup's
    summary into Python had cost ~1 s at 100M results (97,000 setups) on an emptied cache.
    For a few scopes the setups come from setup_natural_uniq (workload, hardware, mode, ...)."""
    if scopes is not None and not scopes:
        return {}
    where, params = scopes_where(scopes)
    sql = _TOTALS.format(
        summary=SetupSummary._meta.db_table, setup=Setup._meta.db_table, where=where
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {(w, h, mode): ScopeTotal(int(n), newest) for w, h, mode, n, newest in cursor}


def run_baseline_id(*, run: Run) -> int | None:
    """The run a build is naturally compared with: the same kernel stock for a patched build,
    else the nearest earlier kernel's stock run, in the same setup (newest run of that build).

    One query; served by run_series_idx (setup, kernel, patch_set).
    """
    runs = Run.objects.filter(setup_id=run.setup_id, patch_set__name="").exclude(pk=run.pk)
    if run.patch_set.name:
        runs = runs.filter(kernel_id=run.kernel_id)
    else:
        runs = runs.filter(kernel__sort_key__lt=run.kernel.sort_key)
    newest_first = runs.order_by("-kernel__sort_key", "-created_at", "-id")
    return newest_first.values_list("id", flat=True).first()

"""Per-setup run summaries, read per scope (workload x hardware x UP/SMP): what the overview
and the scope picker are built from. PostgreSQL keeps them as runs are written
(``perfdb.models.SetupSummary``), so reading a scope's is an index range scan of its setups,
not of its runs; ``dashboards.page_data.scope_stats`` still caches them per scope version."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import Max

from perfdb.models import Setup, SetupSummary


class SetupRuns(NamedTuple):
    """A setup's run count and newest run (by creation, then id). A plain tuple: thousands
    are cached per request's worth of scopes, and tuples unpickle ten times faster than
    dataclasses."""

    setup_id: int
    workload_id: int
    hardware_id: int
    run_count: int
    newest_run_id: int
    newest_at: float  # POSIX seconds


# What a setup picker shows of a setup, in picker order.
SETUP_FIELDS = (
    "id",
    "workload_id",
    "workload__name",
    "workload__version",
    "hardware_id",
    "hardware__name",
    "mode",
    "params",
)
SETUP_ORDER = ("workload__name", "workload__version", "hardware__name", "mode", "id")


def setup_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    """A setup's values row as the pickers and pages read it (names joined for display)."""
    return {
        "id": row["id"],
        "workload_id": row["workload_id"],
        "workload": f"{row['workload__name']} {row['workload__version']}".strip(),
        "hardware_id": row["hardware_id"],
        "hardware": row["hardware__name"],
        "mode": row["mode"],
        "params": row["params"],
    }


def busiest_setup_id() -> int | None:
    """The setup with the most runs, the first in picker order among equals (the
    across-kernels page's default); None when no setup has runs. Two reads of the per-setup
    summaries: the most runs, then the setups with that many. Found in Python from every
    setup's count it cost ~100 ms a data version at 100M results (97,000 setups), which
    every upload moved."""
    most = SetupSummary.objects.aggregate(most=Max("run_count"))["most"]
    if most is None:
        return None
    busiest = Setup.objects.filter(summary__run_count=most).order_by(*SETUP_ORDER)
    found: int | None = busiest.values_list("pk", flat=True).first()
    return found


def scopes_where(scopes: Sequence[tuple[int, int, str]] | None) -> tuple[str, list[int | str]]:
    """The WHERE clause (on the setup table as ``s``) and its parameters that keep these
    scopes' setups, served by setup_natural_uniq (workload, hardware, mode, ...); no clause
    for ``None``, every scope."""
    if scopes is None:
        return "", []
    where = "WHERE " + " OR ".join(
        "(s.workload_id = %s AND s.hardware_id = %s AND s.mode = %s)" for _ in scopes
    )
    return where, [value for scope in scopes for value in scope]


_RUNS_PER_SETUP = """
SELECT s.workload_id, s.hardware_id, s.mode, m.setup_id, m.run_count, m.newest_run_id, m.newest_at
FROM perfdb_setupsummary m JOIN perfdb_setup s ON s.id = m.setup_id
{where}
"""


def runs_per_setup(
    scopes: Sequence[tuple[int, int, str]] | None,
) -> dict[tuple[int, int, str], list[SetupRuns]]:
    """Each setup's run count and newest run, grouped by scope (workload id, hardware id,
    mode); ``None`` for every scope. One query on the summaries (~10,000 rows for every
    scope at 10M results); for a few scopes the setups come from setup_natural_uniq
    (workload, hardware, mode, ...)."""
    if scopes is not None and not scopes:
        return {}
    where, params = scopes_where(scopes)
    out: dict[tuple[int, int, str], list[SetupRuns]] = {(w, h, m): [] for w, h, m in scopes or ()}
    with connection.cursor() as cursor:
        cursor.execute(_RUNS_PER_SETUP.format(where=where), params)
        for workload_id, hardware_id, mode, setup_id, count, newest, newest_at in cursor:
            out.setdefault((workload_id, hardware_id, mode), []).append(
                SetupRuns(setup_id, workload_id, hardware_id, count, newest, newest_at.timestamp())
            )
    return out

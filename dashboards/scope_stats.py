"""What reads every scope (the overview's run counts and latest runs, the scope picker's
busiest setup), built from per-scope run summaries cached per scope version
(``perfdb.cache.cached_per_scope``): after an upload only the scopes it wrote to are read
again (a few index range scans), not every run of the database.
"""

from __future__ import annotations

from typing import Any

from dashboards.chart_queries.summaries import (
    SetupRuns,
    newest_setup_id,
    runs_per_setup,
    setups_with_runs,
)
from perfdb.cache import cached_in_scope, cached_per_scope, scope_key
from perfdb.models import Hardware, Run, Workload

# Past this many scopes to read again, one query over every run beats one per scope.
BULK_SCOPES = 20
# The pseudo-scope of values that depend only on which setups exist (never bumped: such a
# value is keyed by the newest setup id and the structure version instead).
CATALOG = "*catalog*"

Scope = tuple[int, int, str]


def setups_catalog() -> list[dict[str, Any]]:
    """Every setup with runs (picker order, no counts). Changes when a setup is added (the
    newest id moves) or runs are removed (the structure version moves)."""
    return cached_in_scope(f"setups-with-runs:{newest_setup_id()}", CATALOG, setups_with_runs)


def scopes_all() -> list[Scope]:
    setups = setups_catalog()
    return list(dict.fromkeys((s["workload_id"], s["hardware_id"], s["mode"]) for s in setups))


def scope_runs(scopes: list[Scope]) -> dict[Scope, list[SetupRuns]]:
    """Each scope's setups' run counts and newest runs, cached per scope version."""
    by_key = {scope_key(*s): s for s in scopes}

    def compute(missing: list[str]) -> dict[str, list[SetupRuns]]:
        wanted = [by_key[k] for k in missing]
        rows = runs_per_setup(None if len(wanted) > BULK_SCOPES else wanted)
        return {k: rows.get(by_key[k], []) for k in missing}

    found = cached_per_scope("runs-per-setup:v2", list(by_key), compute)
    return {by_key[k]: v for k, v in found.items()}


def setups_with_counts() -> list[dict[str, Any]]:
    """``setup_choices()`` of every setup (picker order, with ``run_count``), without
    counting every run."""
    setups = setups_catalog()
    scopes = list(dict.fromkeys((s["workload_id"], s["hardware_id"], s["mode"]) for s in setups))
    counts = {r.setup_id: r.run_count for rows in scope_runs(scopes).values() for r in rows}
    return [{**s, "run_count": counts[s["id"]]} for s in setups if s["id"] in counts]


def overview() -> tuple[list[Workload], list[Hardware], list[Run]]:
    """The overview's run counts per workload and per hardware and its latest runs, from
    one read of the per-scope summaries."""
    every = scope_runs(scopes_all())
    return workload_counts(every), hardware_counts(every), latest_runs(every)


def workload_counts(every: dict[Scope, list[SetupRuns]]) -> list[Workload]:
    """Every workload with its ``run_count``, as ``queries.workloads_with_counts``."""
    totals: dict[int, int] = {}
    for rows in every.values():
        for r in rows:
            totals[r.workload_id] = totals.get(r.workload_id, 0) + r.run_count
    workloads = list(Workload.objects.order_by("name", "version"))
    for w in workloads:
        w.run_count = totals.get(w.pk, 0)  # type: ignore[attr-defined]
    return workloads


def hardware_counts(every: dict[Scope, list[SetupRuns]]) -> list[Hardware]:
    """Every hardware configuration with its ``run_count``, as ``queries.hardware_with_counts``."""
    totals: dict[int, int] = {}
    for rows in every.values():
        for r in rows:
            totals[r.hardware_id] = totals.get(r.hardware_id, 0) + r.run_count
    hardware = list(Hardware.objects.order_by("name"))
    for h in hardware:
        h.run_count = totals.get(h.pk, 0)  # type: ignore[attr-defined]
    return hardware


def latest_runs(every: dict[Scope, list[SetupRuns]]) -> list[Run]:
    """The newest run of each scope, as ``chart_queries.latest_runs_by_scope``: one query by
    primary key for the ~200 winners."""
    newest = []
    for rows in every.values():
        if rows:
            best = max(rows, key=lambda r: (r.newest_at, r.newest_run_id))
            newest.append(best.newest_run_id)
    return list(
        Run.objects.filter(pk__in=newest)
        .select_related("setup__workload", "setup__hardware", "kernel", "patch_set")
        .order_by(
            "setup__workload__name",
            "setup__workload__version",
            "setup__hardware__name",
            "setup__mode",
        )
    )

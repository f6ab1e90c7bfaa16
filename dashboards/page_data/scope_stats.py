"""What reads every scope (the scope index, the overview's run counts and latest runs),
aggregated by PostgreSQL from the per-setup summaries into a row a scope (an emptied cache
costs one aggregate, not every setup read into Python) and cached per scope version
(``perfdb.cache.cached_per_scope``): after an upload only the scopes it wrote to are read
again; each scope's setups' run summaries (the scope charts' default setups); and the
busiest setup, read from the per-setup summaries in SQL, cached per data version.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from dashboards.chart_queries.charts import WAKEUP_PARAMS
from dashboards.chart_queries.overview import ScopeRow, ScopeTotal, scope_totals, scopes_with_runs
from dashboards.chart_queries.summaries import SetupRuns, busiest_setup_id, runs_per_setup
from perfdb.cache import CATALOG, cache_key, cached, cached_in_scope, cached_per_scope, scope_key
from perfdb.models import Hardware, Run, SetupSummary, Workload

# Past this many scopes, one query over every setup's summary beats a list of scopes.
BULK_SCOPES = 20

Scope = tuple[int, int, str]
T = TypeVar("T")


# Every scope with runs (``scope_rows``), cached under the catalogue's version.
SCOPE_ROWS = cache_key("scopes-with-runs")


def scope_rows() -> list[ScopeRow]:
    """Every scope with runs, in picker order, with what its charts can draw (``ScopeRow``),
    cached under the catalogue's version (``perfdb.cache.CATALOG``: moved when a setup is
    created) and the structure version (runs removed or edited): runs added to existing
    setups leave it warm. Aggregated in PostgreSQL: a few hundred rows whatever the number
    of setups."""
    return cached_in_scope(SCOPE_ROWS, CATALOG, lambda: scopes_with_runs(needs=WAKEUP_PARAMS))


def scopes_all() -> list[Scope]:
    """Every scope with runs, as (workload id, hardware id, mode)."""
    return [(r.workload_id, r.hardware_id, r.mode) for r in scope_rows()]


def scope_runs(scopes: list[Scope]) -> dict[Scope, list[SetupRuns]]:
    """Each scope's setups' run counts and newest runs, cached per scope version."""
    by_key = {scope_key(*s): s for s in scopes}

    def compute(missing: list[str]) -> dict[str, list[SetupRuns]]:
        wanted = [by_key[k] for k in missing]
        rows = runs_per_setup(None if len(wanted) > BULK_SCOPES else wanted)
        return {k: rows.get(by_key[k], []) for k in missing}

    found = cached_per_scope(cache_key("runs-per-setup"), list(by_key), compute)
    return {by_key[k]: v for k, v in found.items()}


def totals(scopes: list[Scope]) -> dict[Scope, ScopeTotal]:
    """Each scope's run count and newest run (``ScopeTotal``; none for a scope without runs),
    cached per scope version: after an upload only its scopes are summed again."""
    by_key = {scope_key(*s): s for s in scopes}

    def compute(missing: list[str]) -> dict[str, ScopeTotal | None]:
        wanted = [by_key[k] for k in missing]
        found = scope_totals(None if len(wanted) > BULK_SCOPES else wanted)
        return {k: found.get(by_key[k]) for k in missing}

    kept = cached_per_scope(cache_key("scope-totals"), list(by_key), compute)
    return {by_key[k]: v for k, v in kept.items() if v is not None}


def profiled_of_scope(key: str, scope: Scope) -> list[int]:
    """The scope's setups with profiled runs, the most profiled first (kernel-time's
    default), cached per scope version: one index range scan of the scope's setups where the
    lab's every profiled setup (~32,000 at 100M results) had been read and unpickled."""
    workload_id, hardware_id, mode = scope
    rows = SetupSummary.objects.filter(
        profiled_runs__gt=0,
        setup__workload_id=workload_id,
        setup__hardware_id=hardware_id,
        setup__mode=mode,
    ).order_by("-profiled_runs", "setup_id")
    return cached_in_scope(
        cache_key("scope-profiled-setups"),
        key,
        lambda: list(rows.values_list("setup_id", flat=True)),
    )


def busiest_profiled() -> list[tuple[str, int]]:
    """Each scope with profiled runs (its key) and its setup with the most (the lowest id
    among equals), the most profiled first. One query, one row a scope (DISTINCT ON over
    the summaries), where the lab's every profiled setup had been read into Python."""
    scope_fields = ("setup__workload_id", "setup__hardware_id", "setup__mode")
    rows = (
        SetupSummary.objects.filter(profiled_runs__gt=0)
        .order_by(*scope_fields, "-profiled_runs", "setup_id")
        .distinct(*scope_fields)
        .values_list(*scope_fields, "setup_id", "profiled_runs")
    )
    ranked = sorted(rows, key=lambda r: (-r[4], r[3]))
    return [(scope_key(w, h, mode), setup_id) for w, h, mode, setup_id, _ in ranked]


def busiest_setup_cached() -> int | None:
    """``busiest_setup_id()`` once per data version (warmed after each upload,
    dashboards/page_cache/warm.py; served stale meanwhile under gunicorn, perfdb/cache/)."""
    return cached(cache_key("busiest-setup"), busiest_setup_id, stale=True)


@dataclass(frozen=True)
class WorkloadCount:
    label: str  # "VolanoMark 2.5"
    run_count: int

    def __str__(self) -> str:
        return self.label


@dataclass(frozen=True)
class HardwareCount:
    name: str
    cpus: int | None
    cpu_model: str
    mhz: int | None
    run_count: int


@dataclass(frozen=True)
class LatestRun:
    pk: int
    setup_id: int
    workload: str
    hardware: str
    mode: str
    label: str
    kernel: str
    patches: str  # the patch set's name, "" for stock
    created_at: datetime


Overview = tuple[list[WorkloadCount], list[HardwareCount], list[LatestRun]]


def overview_cached() -> Overview:
    """``overview()`` once per data version: the home page's, warmed after each upload
    (dashboards/page_cache/warm.py; served stale meanwhile under gunicorn, perfdb/cache/)."""
    return cached(cache_key("home-overview"), overview, stale=True)


def overview() -> Overview:
    """The overview's run counts per workload and per hardware and its latest runs, from
    each scope's totals (a few hundred rows, whatever the number of setups). Plain data, not
    model rows: the home page caches it (perfdb/cache/ keeps ORM objects out of the cache)."""
    every = totals(scopes_all())
    latest = [
        LatestRun(
            r.pk,
            r.setup_id,
            str(r.setup.workload),
            r.setup.hardware.name,
            r.setup.mode,
            r.label,
            str(r.kernel),
            r.patch_set.name,
            r.created_at,
        )
        for r in latest_runs(every)
    ]
    return workload_counts(every), hardware_counts(every), latest


def workload_counts(every: dict[Scope, ScopeTotal]) -> list[WorkloadCount]:
    """Every workload that has runs, with its ``run_count``: one whose runs are all gone (a
    ``probe-…`` experiment whose upload was deleted) is left out, as it is from every
    picker."""
    runs: dict[int, int] = {}
    for (workload_id, _, _), total in every.items():
        runs[workload_id] = runs.get(workload_id, 0) + total.run_count
    workloads = Workload.objects.filter(pk__in=runs).order_by("name", "version")
    return [WorkloadCount(str(w), runs[w.pk]) for w in workloads if runs[w.pk]]


def hardware_counts(every: dict[Scope, ScopeTotal]) -> list[HardwareCount]:
    """Every hardware configuration that has runs, with its ``run_count``."""
    runs: dict[int, int] = {}
    for (_, hardware_id, _), total in every.items():
        runs[hardware_id] = runs.get(hardware_id, 0) + total.run_count
    hardware = Hardware.objects.filter(pk__in=runs).order_by("name")
    return [
        HardwareCount(h.name, h.cpus, h.cpu_model, h.mhz, runs[h.pk])
        for h in hardware
        if runs[h.pk]
    ]


def latest_runs(every: dict[Scope, ScopeTotal]) -> list[Run]:
    """The newest run of each scope (the summaries' newest run ids): one query by primary
    key for the ~200 winners."""
    newest = [total.newest_run_id for total in every.values()]
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

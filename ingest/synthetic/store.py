"""Store and remove the synthetic history, with PostgreSQL COPY through ``ingest.copy_rows``.

COPY because the ORM would take hours at 10 million rows. Everything stored is marked: runs
have ``synthetic = True``; workloads, hardware and patches are named ``synthetic-…``.
``history_remove`` deletes exactly that and leaves real data alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import ManyToManyRel, Q

from ingest.copy_rows import SAMPLE_COLUMNS, copy_rows, sample_row
from ingest.keys import kernel_get, patch_set_get
from ingest.synthetic.catalogue import (
    BENCH_KERNELS,
    BUILDS,
    HARDWARE,
    KERNELS,
    PREFIX,
    SETUPS_PER_UNIT,
    WORKLOADS,
)
from ingest.synthetic.generator import (
    Counts,
    RunSpec,
    SetupSpec,
    metric_defs,
    runs_of_setup,
    setups_of_unit,
)
from perfdb.cache import data_changed_on_commit
from perfdb.models import (
    Alert,
    Hardware,
    Kernel,
    Metric,
    Patch,
    PatchSet,
    Run,
    Setup,
    Workload,
    params_digest,
)
from perfdb.timeseries import columns_from_samples

# --- the writer -------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteReport:
    units: tuple[int, ...]
    counts: Counts
    seconds: float


def _keys_resolve() -> dict[str, dict]:
    """Create (or find) the fixed vocabulary: hardware, workloads, kernels, patch sets,
    metrics. A few hundred rows, so the ORM is fine here."""

    hardware = {
        hw.name: Hardware.objects.get_or_create(
            name=hw.name,
            defaults={
                "cpus": hw.cpus,
                "cpu_model": hw.cpu,
                "mhz": hw.mhz,
                "l2_kb": hw.l2_kb,
                "memory_mb": hw.memory_mb,
                "notes": "synthetic (manage.py synth_history)",
            },
        )[0]
        for hw in HARDWARE
    }
    workloads = {
        w.name: Workload.objects.get_or_create(name=w.name, version=w.version)[0] for w in WORKLOADS
    }
    kernels: dict = {}
    for kernel in KERNELS:
        kernel_get(kernel, kernels)
    patch_sets: dict = {}
    for _, patches in BUILDS:
        patch_set_get(patches, patch_sets)
    metrics = {
        (m.name, m.unit): Metric.objects.get_or_create(
            name=m.name, unit=m.unit, defaults={"better": m.better}
        )[0]
        for m in metric_defs()
    }
    return {
        "hardware": hardware,
        "workloads": workloads,
        "kernels": {k: kernels[k].pk for k in KERNELS},
        "patch_sets": {p: ps.pk for p, ps in patch_sets.items()},
        "metrics": {key: m.pk for key, m in metrics.items()},
    }


def _setup_row(spec: SetupSpec, keys: dict[str, dict]) -> int:

    params = dict(spec.params)
    setup, _ = Setup.objects.get_or_create(
        workload=keys["workloads"][spec.workload.name],
        hardware=keys["hardware"][spec.hardware.name],
        mode=spec.mode,
        params_digest=params_digest(params),
        defaults={"params": params},
    )
    return setup.pk


def _ids_reserve(table: str, count: int) -> list[int]:
    """Take ``count`` ids from the table's identity sequence, so children can be copied with
    their run id without reading the runs back."""

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [table, count],
        )
        return [row[0] for row in cursor.fetchall()]


def _unit_write(unit: int, seed: int, keys: dict[str, dict]) -> Counts:
    """Store one scale unit: its setups, then its runs and everything measured in them."""
    setups = setups_of_unit(unit)
    setup_ids = {s.index: _setup_row(s, keys) for s in setups}
    runs = [run for s in setups for run in runs_of_setup(s, seed)]
    run_ids = _ids_reserve("perfdb_run", len(runs))
    kernels, patch_sets = keys["kernels"], keys["patch_sets"]
    copy_rows(
        "perfdb_run",
        [
            "id",
            "setup_id",
            "kernel_id",
            "patch_set_id",
            "label",
            "notes",
            "discard_first_trial",
            "fingerprint",
            "synthetic",
            "created_at",
        ],
        (
            (
                rid,
                setup_ids[r.setup_index],
                kernels[r.kernel],
                patch_sets[r.patches],
                "",
                f"synthetic history, seed unit {unit}",
                r.discard_first_trial,
                r.fingerprint,
                True,
                r.created_at,
            )
            for rid, r in zip(run_ids, runs, strict=True)
        ),
    )
    _measurements_write(list(zip(run_ids, runs, strict=True)), setup_ids, keys["metrics"])
    return Counts(
        setups=len(setups),
        runs=len(runs),
        results=sum(len(r.results) for r in runs),
        profile_entries=sum(len(r.profile) for r in runs),
        samples=sum(len(r.vmstat) for r in runs),
    )


def _measurements_write(
    pairs: list[tuple[int, RunSpec]], setup_ids: dict[int, int], metrics: dict
) -> None:
    """Trials, results, profiles and vmstat samples of stored runs, by COPY."""
    copy_rows(
        "perfdb_trial",
        ["run_id", "number", "discarded"],
        (
            (rid, n, r.discard_first_trial and n == 1)
            for rid, r in pairs
            for n in range(1, r.trials + 1)
        ),
    )
    copy_rows(
        "perfdb_result",
        ["run_id", "setup_id", "metric_id", "trial", "discarded", "value"],
        (
            (
                rid,
                setup_ids[r.setup_index],
                metrics[(name, unit_)],
                trial,
                r.discard_first_trial and trial == 1,
                value,
            )
            for rid, r in pairs
            for name, unit_, trial, value in r.results
        ),
    )
    copy_rows(
        "perfdb_profileentry",
        ["run_id", "trial", "source", "function", "ticks", "load", "share_pct"],
        (
            (rid, 0, "readprofile", function, ticks, None, share)
            for rid, r in pairs
            for function, ticks, share in r.profile
        ),
    )
    copy_rows(
        "perfdb_sample",
        SAMPLE_COLUMNS,
        (
            sample_row(rid, c)
            for rid, r in pairs
            for c in columns_from_samples(
                (0, "vmstat", column, index, value, index == 0, "")
                for column, index, value in r.vmstat
            )
        ),
    )


def units_stored() -> int:
    """Whole units already stored: ``history_write`` continues from there."""

    return (
        Setup.objects.filter(workload__name__startswith=PREFIX, runs__synthetic=True)
        .distinct()
        .count()
        // SETUPS_PER_UNIT
    )


def history_write(
    *, scale: int, seed: int = 0, units_per_commit: int = 20, progress=None
) -> WriteReport:
    """Store units up to ``scale`` (those already stored are kept: growing a history with the
    same seed gives the same data as building it at once). One transaction per
    ``units_per_commit`` units, so a 10-million-row build does not hold one huge transaction."""

    start = time.perf_counter()
    first = units_stored()
    units = tuple(range(first, scale))
    total = Counts(0, 0, 0, 0, 0)
    with transaction.atomic():
        keys = _keys_resolve()
    for at in range(0, len(units), units_per_commit):
        with transaction.atomic():
            _fk_checks_off()
            for unit in units[at : at + units_per_commit]:
                done = _unit_write(unit, seed, keys)
                total = Counts(
                    *(a + b for a, b in zip(_astuple(total), _astuple(done), strict=True))
                )
            data_changed_on_commit()  # cached page data is stale once this commits
        if progress:
            progress(units[min(at + units_per_commit, len(units)) - 1] + 1, scale, total)
    return WriteReport(units, total, time.perf_counter() - start)


def statistics_refresh() -> float:
    """Give the planner statistics, and index-only scans a visibility map, for what was just
    written; returns the seconds it took. Autovacuum would in its own time (where it is on),
    but a benchmark run right after a build planned on the statistics of the empty tables:
    24.5 ms of PostgreSQL CPU per request under bench/load.py against 0.3 ms once analysed
    (docs/performance.md, "Planner statistics"); and autovacuum never analyses a partitioned
    table's parent. VACUUM cannot run inside a transaction (a test's): there ANALYZE alone."""
    start = time.perf_counter()
    statement = "ANALYZE" if connection.in_atomic_block else "VACUUM (ANALYZE)"
    with connection.cursor() as cursor:
        cursor.execute(statement)
    return time.perf_counter() - start


def _fk_checks_off() -> None:
    """Skip the per-row foreign-key triggers for this transaction when allowed (superuser):
    the writer makes every key it points at, and those checks otherwise double the load time.
    Without the privilege the checks simply run."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        if cursor.fetchone()[0]:
            cursor.execute("SET LOCAL session_replication_role = replica")


def _astuple(c: Counts) -> tuple[int, ...]:
    return (c.setups, c.runs, c.results, c.profile_entries, c.samples)


def history_remove() -> dict[str, int]:
    """Delete every synthetic run and what hangs off it, then the synthetic vocabulary no
    real run uses. Big child tables go by one DELETE each (the ORM would load every row);
    alerts, which have children of their own, go through the ORM."""
    synthetic_runs = "SELECT id FROM perfdb_run WHERE synthetic"
    removed: dict[str, int] = {}
    with transaction.atomic():
        removed["alerts"] = Alert.objects.filter(
            Q(candidate_run__synthetic=True) | Q(setup__workload__name__startswith=PREFIX)
        ).delete()[0]
        with connection.cursor() as cursor:
            for rel in Run._meta.related_objects:
                model, column = rel.related_model, rel.field.column
                if isinstance(rel, ManyToManyRel) and rel.through is not None:
                    through = rel.through._meta
                    fk = next(f for f in through.fields if getattr(f, "related_model", None) is Run)
                    cursor.execute(
                        f'DELETE FROM {through.db_table} WHERE "{fk.column}" IN ({synthetic_runs})'
                    )
                    continue
                if model is Alert or model is Run or isinstance(model, str):
                    continue  # alerts went through the ORM; Run.baseline is cleared below
                table = model._meta.db_table
                cursor.execute(f'DELETE FROM {table} WHERE "{column}" IN ({synthetic_runs})')
                removed[table] = cursor.rowcount
            cursor.execute(
                f"UPDATE perfdb_run SET baseline_id = NULL WHERE NOT synthetic "
                f"AND baseline_id IN ({synthetic_runs})"
            )
            cursor.execute("DELETE FROM perfdb_run WHERE synthetic")
            removed["perfdb_run"] = cursor.rowcount
        removed["setups"] = Setup.objects.filter(
            workload__name__startswith=PREFIX, runs__isnull=True
        ).delete()[0]
        removed["workloads"] = Workload.objects.filter(
            name__startswith=PREFIX, setup__isnull=True
        ).delete()[0]
        removed["hardware"] = Hardware.objects.filter(
            name__startswith=PREFIX, setup__isnull=True
        ).delete()[0]
        ours = PatchSet.objects.filter(items__patch__name__startswith=PREFIX).values("pk")
        removed["patch_sets"] = PatchSet.objects.filter(pk__in=ours, runs__isnull=True).delete()[0]
        removed["patches"] = Patch.objects.filter(
            name__startswith=PREFIX, patch_sets__isnull=True
        ).delete()[0]
        # Kernels and metrics are shared vocabulary: only the catalogue's, and only unused.
        removed["kernels"] = Kernel.objects.filter(
            _unused(Kernel), version__in=KERNELS + BENCH_KERNELS
        ).delete()[0]
        catalogue = Q()
        for m in metric_defs():
            catalogue |= Q(name=m.name, unit=m.unit)
        removed["metrics"] = Metric.objects.filter(catalogue, _unused(Metric)).delete()[0]
        data_changed_on_commit()
    return removed


def _unused(model) -> Q:
    """Rows nothing points at (no run, result, alert, threshold, …), whatever points at them."""

    unused = Q()
    for rel in model._meta.related_objects:
        unused &= Q(**{f"{rel.name}__isnull": True})
    return unused

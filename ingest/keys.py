"""Resolve a bundle's keys to rows: hardware, kernel, patch set, setup, metric.

Shared by the writer (ingest/writer.py) and the evidence it stores beside runs
(ingest/evidence.py: reference builds, claims). Every key survives two uploads creating it at
once (``create_or_get``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
from django.db import IntegrityError, connection, transaction
from django.db.models import Model

from ingest.manifest import HardwareSpec, Manifest, RunSpec
from perfdb.kernels import KernelFacts, parse_kernel
from perfdb.kernels.commits import KernelFactsError, kernels_state
from perfdb.models import (
    Hardware,
    Kernel,
    Metric,
    Patch,
    PatchSet,
    PatchSetItem,
    Setup,
    Workload,
    params_digest,
)


class BundleDataError(ValueError):
    """The bundle's data contradicts what is stored (hardware redefined, metric unknown)."""


def run_label(spec: RunSpec) -> str:
    return f"run {spec.index} ({spec.workload} {spec.kernel})"


# --- key resolution ------------------------------------------------------------------------
#
# Two uploads introducing the same new kernel (hardware, workload, metric, patch, setup) at
# once: the second INSERT waits for the first transaction, then meets the unique constraint.
# Every key is created in a savepoint, and on that conflict read back (READ COMMITTED sees the
# row the other transaction committed), so concurrent uploads never fail on it. Django's
# get_or_create does the same; ``create_or_get`` is it for rows made by ``save()`` logic.

M = TypeVar("M", bound=Model)


# A query of stored rows: the model, a WHERE clause over its columns, its parameters, and
# the fields left deferred (see stored_rows).
Query = tuple[type[Model], str, Sequence[Any], Iterable[str]]


def stored_rows(
    model: type[M], where: str, params: Sequence[Any], skip: Iterable[str] = ()
) -> list[M]:
    """The stored ``model`` rows matching ``where`` (SQL over its columns), read with one
    plain statement: every key of an upload is read on every upload, and the ORM's compile
    of such a query cost more CPU (0.4-0.6 ms) than the database's work. The fields in
    ``skip`` are left deferred (loaded on access); the others need no conversion from what
    psycopg returns (no JSON: a JSON field must be skipped)."""
    (rows,) = stored_rows_at_once([(model, where, params, skip)])
    return rows  # type: ignore[return-value]  # the model asked for


def stored_rows_at_once(queries: Sequence[Query]) -> list[list[Model]]:
    """``stored_rows`` of each query, all sent in one round trip (the statements joined by
    ';': Django's psycopg cursors bind parameters client-side, so one message carries them)
    and their results read in turn; one statement at a time on a connection configured
    for server-side binding (OPTIONS server_side_binding), which cannot send several."""
    statements: list[tuple[str, Sequence[Any]]] = []
    shapes: list[tuple[type[Model], list[str]]] = []
    for model, where, query_params, skip in queries:
        skipped = set(skip)
        fields = [f for f in model._meta.concrete_fields if f.name not in skipped]
        columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
        sql = f"SELECT {columns} FROM {model._meta.db_table} WHERE {where}"
        statements.append((sql, query_params))
        shapes.append((model, [f.attname for f in fields]))
    with connection.cursor() as cursor:
        if isinstance(cursor.cursor, psycopg.ClientCursor):
            cursor.execute(
                "; ".join(sql for sql, _ in statements), [p for _, q in statements for p in q]
            )
            results = [cursor.fetchall()]
            while cursor.nextset():
                results.append(cursor.fetchall())
        else:
            results = []
            for sql, query_params in statements:
                cursor.execute(sql, query_params)
                results.append(cursor.fetchall())
    return [
        [model.from_db(connection.alias, names, row) for row in rows]
        for (model, names), rows in zip(shapes, results, strict=True)
    ]


def create_or_get(model: type[M], lookup: dict[str, object], **defaults: object) -> tuple[M, bool]:
    """The row matching ``lookup``, created with ``defaults`` if missing; survives a
    concurrent insert of the same key."""
    row = model._default_manager.filter(**lookup).first()
    if row is not None:
        return row, False
    try:
        with transaction.atomic():  # a savepoint: a conflict leaves the caller's work intact
            return model._default_manager.create(**lookup, **defaults), True
    except IntegrityError:
        return model._default_manager.get(**lookup), False


def _hardware_fields(spec: HardwareSpec) -> dict[str, object]:
    return {
        "cpus": spec.cpus,
        "cpu_model": spec.cpu,
        "mhz": spec.mhz,
        "l2_kb": spec.l2_kb,
        "memory_mb": spec.memory_mb,
        "tiers": list(spec.tiers),
        "notes": spec.notes,
    }


def hardware_names(manifest: Manifest, runs: list[RunSpec]) -> list[str]:
    return sorted(set(manifest.hardware) | {run.hardware for run in runs})


def hardware_resolve(
    manifest: Manifest, runs: list[RunSpec], rows: list[Hardware] | None = None
) -> dict[str, Hardware]:
    """Create the bundle's hardware definitions; refuse one that contradicts the stored one.
    ``rows``: the stored ones, read already (ingest/bundle_keys.py)."""
    if rows is None:
        rows = stored_rows(Hardware, "name = ANY(%s)", [hardware_names(manifest, runs)])
    stored = {hw.name: hw for hw in rows}
    errors = []
    for name, spec in manifest.hardware.items():
        wanted = _hardware_fields(spec)
        if name not in stored:
            stored[name], created = create_or_get(Hardware, {"name": name}, **wanted)
            if created:
                continue
        if name in stored:
            current = {key: getattr(stored[name], key) for key in wanted}
            diff = [k for k in wanted if wanted[k] != current[k] and wanted[k] not in (None, "")]
            if diff:
                errors.append(
                    f"hardware {name!r}: {', '.join(diff)} differ from the stored configuration "
                    "(a configuration never changes; give the new machine another name)"
                )
    for run in runs:
        if run.hardware not in stored:
            errors.append(
                f"{run_label(run)}: hardware {run.hardware!r} is not defined in the bundle "
                "and not known to the server"
            )
    if errors:
        raise BundleDataError("\n".join(errors))
    return stored


def kernel_rows(versions: Iterable[str]) -> dict[str, Kernel]:
    """Unsaved Kernel rows of these versions, by their normalized text (as stored)."""
    rows: dict[str, Kernel] = {}
    for version in set(versions):
        row = Kernel(version=version)
        row.normalize()
        rows.setdefault(row.version, row)
    return rows


def kernels_get(
    versions: Iterable[str],
    stored: list[Kernel] | None = None,
    stated: Mapping[str, KernelFacts] | None = None,
) -> dict[str, Kernel]:
    """The kernels of these versions by their text, the missing ones created: one query to
    read them and one INSERT for the new ones, not four round trips per new kernel (a
    backfill bundle brings a new kernel with each run). A kernel another upload creates at
    the same moment is skipped by the INSERT (ON CONFLICT DO NOTHING waits for that upload's
    commit) and read back. ``stated``: the manifest's ``[kernel."…"]`` facts, stored first
    (perfdb/kernels/commits.py), so a commit's row carries its order from its first run."""
    found: dict[str, Kernel] = {}
    if stated:
        try:
            found.update(kernels_state(stated))
        except KernelFactsError as error:
            raise BundleDataError(str(error)) from None
    rows = {text: row for text, row in kernel_rows(versions).items() if text not in found}
    if not rows:
        return found
    if stored is None:  # ``stored``: read already (ingest/bundle_keys.py)
        stored = stored_rows(Kernel, "version = ANY(%s)", [list(rows)])
    found.update({k.version: k for k in stored if k.version in rows})
    missing = [row for text, row in rows.items() if text not in found]
    if missing:
        Kernel.objects.bulk_create(missing, ignore_conflicts=True)  # ids are read back
        again = stored_rows(Kernel, "version = ANY(%s)", [[r.version for r in missing]])
        found.update({k.version: k for k in again})
    return found


def kernel_get(version: str, cache: dict[str, Kernel]) -> Kernel:
    text = parse_kernel(version).text
    if text not in cache:
        cache[text], _ = create_or_get(Kernel, {"version": text})
    return cache[text]


def patch_set_get(patches: tuple[str, ...], cache: dict[tuple[str, ...], PatchSet]) -> PatchSet:
    if patches not in cache:
        name = "+".join(patches)
        stored = stored_rows(PatchSet, "name = %s", [name])
        patch_set, created = (
            (stored[0], False) if stored else create_or_get(PatchSet, {"name": name})
        )
        if created:
            for position, name in enumerate(patches):
                patch, _ = create_or_get(Patch, {"name": name})
                PatchSetItem.objects.create(patch_set=patch_set, patch=patch, position=position)
        cache[patches] = patch_set
    return cache[patches]


def setup_get(spec: RunSpec, hardware: Hardware) -> Setup:
    """The run's setup, read in one query when it is stored (the usual upload: workload and
    setup were two round trips); created, with its workload if need be, otherwise."""
    params = dict(spec.params)
    digest = params_digest(params)
    stored = stored_rows(  # at most one: both are unique on these fields
        Setup,
        "hardware_id = %s AND mode = %s AND params_digest = %s AND workload_id = (SELECT id "
        "FROM perfdb_workload WHERE name = %s AND version = %s)",
        [hardware.pk, spec.mode, digest, spec.workload, spec.workload_version],
        skip=["params"],  # JSON; the writer needs the ids and the mode
    )
    if stored:
        return stored[0]
    workload, _ = Workload.objects.get_or_create(name=spec.workload, version=spec.workload_version)
    setup, _ = Setup.objects.get_or_create(
        workload=workload,
        hardware=hardware,
        mode=spec.mode,
        params_digest=digest,
        defaults={"params": params},
    )
    return setup


class MetricCache:
    """Resolves (name, unit, better) to Metric rows, refusing contradictions."""

    def __init__(self, manifest: Manifest):
        self.declared = manifest.metrics
        self.rows: dict[tuple[str, str], Metric] = {}
        self.stored: dict[tuple[str, str], Metric] = {}
        self.warnings: list[str] = []

    def names(self, keys: Iterable[tuple[str, str]]) -> list[str]:
        """The metric names ``prefetch`` reads for these (name, unit) pairs."""
        return sorted({name for name, _ in keys} | set(self.declared))

    def prefetch(self, keys: Iterable[tuple[str, str]], rows: list[Metric] | None = None) -> None:
        """Read the stored rows of these (name, unit) pairs in one query, not one each (or
        take ``rows``, those of ``names(keys)`` read already); ``get`` still checks each and
        creates the missing ones."""
        wanted = set(keys) | {(name, spec.unit) for name, spec in self.declared.items()}
        if rows is None:
            rows = stored_rows(Metric, "name = ANY(%s)", [self.names(wanted)])
        for metric in rows:
            if (metric.name, metric.unit) in wanted:
                self.stored[(metric.name, metric.unit)] = metric

    def get(
        self, name: str, unit: str, better: str, where: str, resolution: float | None = None
    ) -> Metric:
        """The metric row; a parser's ``resolution`` is stored when the row is created."""
        key = (name, unit)
        if key not in self.rows:
            metric, created = self.stored.get(key), False
            if metric is None:
                metric, created = Metric.objects.get_or_create(
                    name=name, unit=unit, defaults={"better": better, "resolution": resolution}
                )
            # "none" is no opinion (vmstat's cs): a direction staff set in the admin stands.
            if not created and metric.better != better and better != "none":
                if metric.better != "none":
                    raise BundleDataError(
                        f"{where}: metric {name!r} ({unit}) is {better!r}-is-better here but "
                        f"{metric.better!r} in the stored data"
                    )
                # Stored with no opinion (sysbench's total_time_s, a fixed run length) and
                # named by another tool that has one (perf bench's): the values are stored,
                # the metric keeps no direction until staff give it one; never a failed
                # upload after its preview passed.
                self.warnings.append(
                    f"{where}: metric {name!r} ({unit}) is {better!r}-is-better here but has "
                    "no direction in the stored data; it is kept without one (set it in the "
                    "admin if every tool that reports it means the same)"
                )
            self.rows[key] = metric
        return self.rows[key]

    def directions_check(self, wanted: Iterable[tuple[str, str, str, str]]) -> list[str]:
        """What ``get`` would refuse for these (name, unit, better, where), read only: the
        preview's check, so an upload never fails on a direction its preview passed. Warnings
        (a direction where the stored metric has none) go to ``warnings`` as ``get`` puts them."""
        found = list(wanted)
        self.prefetch((name, unit) for name, unit, _, _ in found)
        problems = []
        for name, unit, better, where in found:
            metric = self.stored.get((name, unit))
            if metric is None or metric.better == better or better == "none":
                continue
            if metric.better != "none":
                problems.append(
                    f"{where}: metric {name!r} ({unit}) is {better!r}-is-better here but "
                    f"{metric.better!r} in the stored data"
                )
            else:
                self.warnings.append(
                    f"{where}: metric {name!r} ({unit}) is {better!r}-is-better here but has "
                    "no direction in the stored data; it is kept without one"
                )
        return problems

    def direct(self, name: str, where: str) -> Metric:
        spec = self.declared.get(name)
        if spec is not None:
            return self.get(name, spec.unit, spec.better, where)
        known = list(Metric.objects.filter(name=name)[:2])
        if len(known) == 1:
            return known[0]
        if not known:
            raise BundleDataError(
                f"{where}: metric {name!r} is not declared under [metric.{name}] "
                "(unit and better) and not known to the server"
            )
        raise BundleDataError(
            f"{where}: metric {name!r} exists in several units; declare it under "
            f"[metric.{name}] with its unit"
        )

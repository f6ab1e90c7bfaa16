"""Resolve a bundle's keys to rows: hardware, kernel, patch set, setup, metric.

The writer (ingest/writer.py) reads what is stored of them in one round trip
(``stored_keys``), then finds or creates each one here, for its runs and for the reference
builds and claims it stores beside them. Every key survives two uploads creating it at once
(``create_or_get``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import psycopg
from django.db import IntegrityError, connection, transaction
from django.db.models import Model

from ingest.manifest import HardwareSpec, Manifest, RunSpec
from ingest.plan import PlannedRun
from perfdb.kernels import KernelFacts, parse_kernel
from perfdb.kernels.commits import KernelFactsError, kernels_state
from perfdb.models import (
    Claim,
    Hardware,
    Kernel,
    Metric,
    Patch,
    PatchSet,
    PatchSetItem,
    Run,
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
    ``rows``: the stored ones, read already (``stored_keys``)."""
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
    if stored is None:  # ``stored``: read already (``stored_keys``)
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


# --- the stored keys of a bundle, read in one round trip ------------------------------------
#
# Every upload looks up its hardware, kernels, metrics, setups and patch sets, whether its
# runs are stored already (their fingerprints), and whether claims are stored on its setups:
# seven small queries, each a round trip of its own with its own share of the driver's and
# the server's per-statement work (3-4 ms of a 100k-sample upload's ~45 ms of CPU on a loaded
# machine). ``stored_keys`` sends them together (``stored_rows_at_once``). What is read only
# fills the writer's caches: each key is still checked, and created when missing, by the
# functions above, so a row not found here is looked up or created there as before.

SetupKey = tuple[str, str, str, str, str]  # workload, its version, hardware, mode, digest


def setup_key(spec: RunSpec) -> SetupKey:
    """The key a run's setup is found by (``bundle_keys``)."""
    digest = params_digest(dict(spec.params))
    return (spec.workload, spec.workload_version, spec.hardware, spec.mode, digest)


@dataclass
class StoredKeys:
    """What is stored of a bundle's keys; ``claims``: whether any claim is stored on one of
    its stored setups (a setup created by this write has none yet)."""

    hardware: list[Hardware]
    kernels: list[Kernel]
    metrics: list[Metric]
    fingerprints: dict[str, int]
    setups: dict[SetupKey, Setup] = field(default_factory=dict)
    patch_sets: dict[tuple[str, ...], PatchSet] = field(default_factory=dict)
    claims: bool = False


# The bundle's setups by their keys, as SQL: their ids (the unnest arrays are the keys).
_SETUPS = (
    "(workload_id, hardware_id, mode, params_digest) IN (SELECT w.id, h.id, k.mode, k.digest "
    "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[]) "
    "AS k(workload, version, hardware, mode, digest) "
    "JOIN perfdb_workload w ON w.name = k.workload AND w.version = k.version "
    "JOIN perfdb_hardware h ON h.name = k.hardware)"
)


def _unskipped(model: type[Model], keep: Iterable[str]) -> list[str]:
    """The fields of ``model`` but ``keep``: those a query leaves deferred."""
    kept = set(keep)
    return [f.name for f in model._meta.concrete_fields if f.name not in kept]


def stored_keys(
    manifest: Manifest,
    specs: Sequence[RunSpec],
    fingerprints: list[str],
    metric_names: list[str],
) -> StoredKeys:
    """Read the stored rows of the bundle's keys in one round trip (see the module)."""
    keys = sorted({setup_key(spec) for spec in specs})
    columns = [list(column) for column in zip(*keys, strict=True)] if keys else [[]] * 5
    patches = {tuple(spec.patches) for spec in specs}
    queries: list[Query] = [
        (Hardware, "name = ANY(%s)", [hardware_names(manifest, list(specs))], ()),
        (Kernel, "version = ANY(%s)", [list(kernel_rows(s.kernel for s in specs))], ()),
        (Metric, "name = ANY(%s)", [metric_names], ()),
        (Run, "fingerprint = ANY(%s)", [fingerprints], _unskipped(Run, ["id", "fingerprint"])),
        (Setup, _SETUPS, columns, ["params"]),  # JSON; the writer needs the ids and the mode
        (Workload, "name = ANY(%s)", [sorted({k[0] for k in keys})], ()),
        (PatchSet, "name = ANY(%s)", [sorted({"+".join(p) for p in patches})], ()),
        (
            Claim,
            f"setup_id IN (SELECT id FROM perfdb_setup WHERE {_SETUPS}) LIMIT 1",
            columns,
            _unskipped(Claim, ["id"]),
        ),
    ]
    rows = stored_rows_at_once(queries)
    hardware = cast(list[Hardware], rows[0])
    setups, workloads = cast(list[Setup], rows[4]), cast(list[Workload], rows[5])
    out = StoredKeys(
        hardware=hardware,
        kernels=cast(list[Kernel], rows[1]),
        metrics=cast(list[Metric], rows[2]),
        fingerprints={run.fingerprint: run.pk for run in cast(list[Run], rows[3])},
        claims=bool(rows[7]),
    )
    names = {hw.pk: hw.name for hw in hardware}
    kinds = {w.pk: (w.name, w.version) for w in workloads}
    for setup in setups:
        # Each statement of the round trip reads its own snapshot (READ COMMITTED): an upload
        # that commits between them can show a setup whose hardware or workload the earlier
        # statement did not see. Such a setup is left to the writer's own lookup.
        if setup.hardware_id not in names or setup.workload_id not in kinds:
            continue
        workload = kinds[setup.workload_id]
        key = (*workload, names[setup.hardware_id], setup.mode, setup.params_digest)
        out.setups[key] = setup
    by_name = {ps.name: ps for ps in cast(list[PatchSet], rows[6])}
    out.patch_sets = {p: by_name["+".join(p)] for p in patches if "+".join(p) in by_name}
    return out


# --- metrics --------------------------------------------------------------------------------


class MetricCache:
    """Resolves (name, unit, better) to Metric rows, refusing contradictions."""

    def __init__(self, manifest: Manifest):
        self.declared = manifest.metrics
        self.rows: dict[tuple[str, str], Metric] = {}  # by (name, unit), as ``get`` found them
        self.named: dict[str, Metric] = {}  # a run's ``metrics`` table, by name (``direct``)
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

    def run_resolve(self, planned: PlannedRun) -> None:
        """Find or create every metric of a run the writer stores, in the order its rows
        are gathered (the first refusal met is the one an upload fails with); ``named`` and
        ``rows`` then hold them."""
        where = run_label(planned.spec)
        for name in planned.spec.metrics:
            if name not in self.named:
                self.named[name] = self.direct(name, where)
        for part in planned.parts:
            for _, record in part.trials:
                for m in record.measurements:
                    self.get(m.metric, m.unit, m.better, f"file {part.file.path!r}", m.resolution)

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


# --- every key of a bundle, resolved before its runs are written ---------------------------


@dataclass
class BundleKeys:
    """The rows a bundle's runs and reference builds point to, each looked up or created
    once per bundle (a 1,000-run bundle of one setup asked for its setup 1,000 times), so
    the writer only reads them; and what ``stored_keys`` found of its runs and claims."""

    hardware: Mapping[str, Hardware]
    kernels: dict[str, Kernel]  # by the version as the manifest writes it
    patch_sets: dict[tuple[str, ...], PatchSet]
    setups: dict[int, Setup]  # by run index
    metrics: MetricCache
    stored: StoredKeys


def _metric_keys(plan: Sequence[PlannedRun]) -> set[tuple[str, str]]:
    """The (name, unit) of every metric the bundle's files measure."""
    return {
        (m.metric, m.unit)
        for planned in plan
        for part in planned.parts
        for _, record in part.trials
        for m in record.measurements
    }


def bundle_keys(
    manifest: Manifest, plan: Sequence[PlannedRun], fingerprints: list[str]
) -> BundleKeys:
    """Read what is stored of the bundle's keys in one round trip, then find or create each
    one: its hardware (refusing a changed definition), the kernels of its runs and reference
    builds (the manifest's stated facts first), their patch sets, its setups, and the metrics
    of the runs to store (those not stored already)."""
    specs = [planned.spec for planned in plan]
    wanted = _metric_keys(plan)
    metrics = MetricCache(manifest)
    stored = stored_keys(manifest, specs, fingerprints, metrics.names(wanted))
    metrics.prefetch(wanted, stored.metrics)
    hardware = hardware_resolve(manifest, specs, stored.hardware)
    builds = [hw.reference for hw in manifest.hardware.values() if hw.reference is not None]
    builds += [spec.reference for spec in specs if spec.reference is not None]
    versions = list(dict.fromkeys([*(s.kernel for s in specs), *(b.kernel for b in builds)]))
    by_text = kernels_get(versions, stored.kernels, manifest.kernels)
    kernels = {version: kernel_get(version, by_text) for version in versions}
    patch_sets = dict(stored.patch_sets)
    for patches in dict.fromkeys(
        [*(tuple(s.patches) for s in specs), *(b.patches for b in builds)]
    ):
        patch_set_get(patches, patch_sets)
    setups = dict(stored.setups)
    by_run: dict[int, Setup] = {}
    for spec in specs:
        key = setup_key(spec)
        if key not in setups:
            setups[key] = setup_get(spec, hardware[spec.hardware])
        by_run[spec.index] = setups[key]
    new = set(stored.fingerprints)
    for planned, fingerprint in zip(plan, fingerprints, strict=True):
        if fingerprint not in new:  # a run the writer stores (once, if repeated)
            new.add(fingerprint)
            metrics.run_resolve(planned)
    return BundleKeys(hardware, kernels, patch_sets, by_run, metrics, stored)

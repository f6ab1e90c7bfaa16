"""The stored rows a bundle's write looks up, read in one round trip before it writes.

Every upload looks up its hardware, kernels, metrics, setups and patch sets, whether its runs
are stored already (their fingerprints), and whether claims are stored on its setups: seven
small queries, each a round trip of its own with its own share of the driver's and the
server's per-statement work (3-4 ms of a 100k-sample upload's ~45 ms of CPU on a loaded
machine). Here they are sent together (ingest.keys.stored_rows_at_once). What is read only
fills the writer's caches: each key is still checked, and created when missing, by the code
that always did it (ingest/keys.py), so a row not found here is looked up or created there
as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from django.db.models import Model

from ingest.keys import Query, hardware_names, kernel_rows, stored_rows_at_once
from ingest.manifest import Manifest, RunSpec
from perfdb.models import (
    Claim,
    Hardware,
    Kernel,
    Metric,
    PatchSet,
    Run,
    Setup,
    Workload,
    params_digest,
)

SetupKey = tuple[str, str, str, str, str]  # workload, its version, hardware, mode, digest


def setup_key(spec: RunSpec) -> SetupKey:
    """The key the writer finds a run's setup by (ingest.writer._BundleKeys.setup)."""
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

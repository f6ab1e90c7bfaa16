"""Stores a bundle's reference builds and claims (ingest/manifest/evidence.py), in the
caller's transaction, and checks the claims against the runs stored by then."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping

from django.db import connection

from ingest.keys import kernel_get, patch_set_get
from ingest.manifest import BuildSpec, ClaimSpec, Manifest, RunSpec
from perfdb.features.claim_checks import LABEL_PREFIX, claim_check, claims_recheck
from perfdb.models import (
    Claim,
    Hardware,
    Kernel,
    Metric,
    PatchSet,
    ReferenceBuild,
    Setup,
    Upload,
    Workload,
    params_digest,
)


def _reference(
    build: BuildSpec,
    kernels: dict[str, Kernel],
    patch_sets: dict[tuple[str, ...], PatchSet],
    **scope,
) -> None:
    kernel, patch_set = kernel_get(build.kernel, kernels), patch_set_get(build.patches, patch_sets)
    ReferenceBuild.objects.update_or_create(
        **scope, defaults={"kernel": kernel, "patch_set": patch_set}
    )


def _setup(claim: ClaimSpec) -> Setup | None:
    return Setup.objects.filter(
        workload__name=claim.workload,
        workload__version=claim.workload_version,
        hardware__name=claim.hardware,
        mode=claim.mode,
        params_digest=params_digest(dict(claim.params)),
    ).first()


def _side(value: BuildSpec | str, labels: Mapping[str, int]) -> tuple[str, list[int]]:
    if isinstance(value, BuildSpec):
        return value.text, []
    run_id = labels.get(value)
    return f"{LABEL_PREFIX}{value!r}", [run_id] if run_id else []


def _fingerprint(claim: ClaimSpec) -> str:
    doc = {k: (v.text if isinstance(v, BuildSpec) else v) for k, v in vars(claim).items()}
    doc.pop("index")
    canonical = json.dumps(doc, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _setup_text(claim: ClaimSpec) -> str:
    params = ", ".join(f"{k}={v}" for k, v in sorted(claim.params.items()))
    workload = f"{claim.workload} {claim.workload_version}".strip()
    return f"{workload} on {claim.hardware} {claim.mode}" + (f" ({params})" if params else "")


def claims_write(manifest: Manifest, labels: Mapping[str, int], upload: Upload | None) -> None:
    for spec in manifest.claims:
        setup = _setup(spec)
        declared = manifest.metrics.get(spec.metric)
        metrics = Metric.objects.filter(name=spec.metric)
        if declared is not None:
            metrics = metrics.filter(unit=declared.unit)
        baseline, base_ids = _side(spec.baseline, labels)
        candidate, new_ids = _side(spec.candidate, labels)
        claim, _ = Claim.objects.update_or_create(
            fingerprint=_fingerprint(spec),
            defaults={
                "upload": upload,
                "setup": setup,
                "metric": metrics.order_by("id").first(),
                "setup_text": _setup_text(spec),
                "metric_name": spec.metric,
                "baseline": baseline,
                "candidate": candidate,
                "stated_change_pct": spec.change_pct,
                "tolerance_pct": spec.tolerance_pct if spec.tolerance_pct is not None else 0.0,
                "source": spec.source,
                "document": spec.document,
                "baseline_run_ids": base_ids,
                "candidate_run_ids": new_ids,
            },
        )
        # No tolerance in the bundle: check_claim derives it from the stated figure.
        claim_check(claim, derive_tolerance=spec.tolerance_pct is None)


def _claims_on(setup_ids: list[int]) -> bool:
    """Whether any claim is stored on these setups (one plain statement on every upload;
    there rarely is one, and reading them through the ORM cost ~1 ms of CPU)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT EXISTS (SELECT FROM {Claim._meta.db_table} WHERE setup_id = ANY(%s))",
            [setup_ids],
        )
        return bool(cursor.fetchone()[0])


def evidence_write(
    *,
    manifest: Manifest,
    specs: Iterable[RunSpec],
    hardware: Mapping[str, Hardware],
    kernels: dict[str, Kernel],
    patch_sets: dict[tuple[str, ...], PatchSet],
    run_ids: Mapping[int, int],
    upload: Upload | None,
    setup_ids: Iterable[int],
    claims_stored: bool | None = None,
) -> None:
    """References (hardware-wide, then per setup), then claims; the claims already stored on
    the setups this bundle touched are checked again with its runs. ``kernels`` and
    ``patch_sets``: the writer's rows by their keys, so a build its runs use is not looked up
    again (the missing ones are added to them)."""
    specs = list(specs)
    for name, hw in manifest.hardware.items():
        if hw.reference is not None and name in hardware:
            _reference(hw.reference, kernels, patch_sets, hardware=hardware[name], setup=None)
    for spec in specs:
        if spec.reference is not None:
            workload = Workload.objects.get(name=spec.workload, version=spec.workload_version)
            setup = Setup.objects.get(
                workload=workload,
                hardware=hardware[spec.hardware],
                mode=spec.mode,
                params_digest=params_digest(dict(spec.params)),
            )
            _reference(spec.reference, kernels, patch_sets, setup=setup, hardware=None)
    setup_ids = list(setup_ids)  # claims_stored: whether any is on the bundle's setups
    if setup_ids and (_claims_on(setup_ids) if claims_stored is None else claims_stored):
        claims_recheck(setup_ids=setup_ids)
    labels = {s.label: run_ids[s.index] for s in specs if s.label and s.index in run_ids}
    claims_write(manifest, labels, upload)

"""Claims against the stored runs: resolve each side to runs, check, store the verdict.

A side named by a build (``2.5.66+p1``) is every run of that build in the claim's setup, so a
later upload of more runs of it sharpens the check (``claims_recheck``); a side named by a run
label was resolved to that run of its bundle at ingest.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils import timezone

from perfdb.features.claims import check_claim
from perfdb.models import Claim, Result, Run

LABEL_PREFIX = "run labelled "


def side_runs(claim: Claim, text: str, stored: list[int]) -> list[int]:
    if text.startswith(LABEL_PREFIX) or claim.setup_id is None:
        return stored
    kernel, _, patches = text.partition("+")
    return list(
        Run.objects.filter(setup_id=claim.setup_id, kernel__version=kernel, patch_set__name=patches)
        .order_by("id")
        .values_list("id", flat=True)
    )


def _values(run_ids: list[int], metric_id: int | None) -> list[float]:
    if metric_id is None or not run_ids:
        return []
    rows = Result.objects.filter(run_id__in=run_ids, metric_id=metric_id, discarded=False)
    return list(rows.order_by("run_id", "trial").values_list("value", flat=True))


def claim_check(claim: Claim, *, derive_tolerance: bool = False) -> Claim:
    """Check one claim against what is stored now, and save the outcome. With
    ``derive_tolerance`` (the bundle gave none) the tolerance comes from the stated figure."""
    base_ids = side_runs(claim, claim.baseline, list(claim.baseline_run_ids))
    new_ids = side_runs(claim, claim.candidate, list(claim.candidate_run_ids))
    base, new = _values(base_ids, claim.metric_id), _values(new_ids, claim.metric_id)
    better = claim.metric.better if claim.metric is not None else "higher"
    tolerance = None if derive_tolerance else claim.tolerance_pct
    check = check_claim(base, new, claim.stated_change_pct, better, tolerance)
    claim.baseline_run_ids, claim.candidate_run_ids = base_ids, new_ids
    claim.n_baseline, claim.n_candidate = len(base), len(new)
    claim.computed_change_pct = check.computed_pct
    claim.ci_low_pct, claim.ci_high_pct = check.ci_low_pct, check.ci_high_pct
    claim.tolerance_pct = check.tolerance_pct
    claim.verdict, claim.reason = check.verdict, check.reason
    claim.checked_at = timezone.now()
    claim.save()
    return claim


def claims_recheck(*, setup_ids: Iterable[int] | None = None) -> int:
    """Re-check the claims on these setups (all when None); returns how many."""
    claims = Claim.objects.select_related("metric")
    if setup_ids is not None:
        claims = claims.filter(setup_id__in=list(setup_ids))
    count = 0
    for claim in claims:
        claim_check(claim)
        count += 1
    return count

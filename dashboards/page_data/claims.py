"""Every claim a bundle stated, checked against the stored runs, contradicted first, each
with the compare view of the runs it was checked on: for the claims page (``/claims/``), its
CSV/JSON and ``GET /api/claims/``."""

from __future__ import annotations

from django.db.models import Case, IntegerField, Value, When

from dashboards.web import exports
from perfdb.models import Claim

ORDER = [Claim.Verdict.CONTRADICTED, Claim.Verdict.NOT_TESTABLE, Claim.Verdict.SUPPORTED]
VERDICTS = [v.value for v in Claim.Verdict]


def claims_list(verdict: str = "") -> list[Claim]:
    """Contradicted first, then not testable, supported, no data; one query."""
    rank = Case(
        *[When(verdict=v, then=Value(i)) for i, v in enumerate(ORDER)],
        default=Value(len(ORDER)),
        output_field=IntegerField(),
    )
    claims = Claim.objects.select_related("metric", "setup").annotate(rank=rank)
    if verdict:
        claims = claims.filter(verdict=verdict)
    return list(claims.order_by("rank", "document", "id"))


def compare_url(claim: Claim) -> str | None:
    if not claim.baseline_run_ids or not claim.candidate_run_ids:
        return None
    base = ",".join(map(str, claim.baseline_run_ids))
    new = ",".join(map(str, claim.candidate_run_ids))
    return f"/compare/?base={base}&new={new}"


def claim_json(claim: Claim) -> dict[str, object]:
    return {
        "id": claim.pk,
        "setup": claim.setup_text,
        "metric": claim.metric_name,
        "baseline": claim.baseline,
        "candidate": claim.candidate,
        "stated_change_pct": claim.stated_change_pct,
        "computed_change_pct": claim.computed_change_pct,
        "ci_low_pct": claim.ci_low_pct,
        "ci_high_pct": claim.ci_high_pct,
        "tolerance_pct": claim.tolerance_pct,
        "n_baseline": claim.n_baseline,
        "n_candidate": claim.n_candidate,
        "verdict": claim.verdict,
        "reason": claim.reason,
        "source": claim.source,
        "document": claim.document,
        "baseline_runs": list(claim.baseline_run_ids),
        "candidate_runs": list(claim.candidate_run_ids),
        "compare": compare_url(claim),
    }


def claims_table(claims: list[Claim]) -> exports.Table:
    rows = [claim_json(c) for c in claims]
    columns = tuple(rows[0]) if rows else ("id",)
    return exports.Table(
        "claims",
        columns,
        tuple(
            tuple(",".join(map(str, v)) if isinstance(v, list) else v for v in r.values())
            for r in rows
        ),
    )


def verdict_counts() -> dict[str, int]:
    """How many claims have each verdict (the page's filter shows them); one query."""
    counts: dict[str, int] = {}
    for verdict in Claim.objects.values_list("verdict", flat=True):
        counts[verdict] = counts.get(verdict, 0) + 1
    return counts

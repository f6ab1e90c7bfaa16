"""A/B tests: a patched build against the same kernel stock, or a run against a pinned or
declared baseline, judged when it arrives (``ab_change``).

The baseline is ``baseline_runs``; the test is ``policy.judge`` with the series' trial noise
(``noise.trial_noise``). The rules that make a change of a verdict live here: one that cannot
be tested yet is kept pending (``kept_untested``), and ``change_from`` makes the ``Change``. A
short series' kernels are judged the same way against their level (``short_scan``), with
these same rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from statistics import fmean

from perfdb.detector import policy
from perfdb.detector.points import Change, Point, kernel_key, kernel_of, run_order
from perfdb.detector.policy import Settings


def baseline_runs(
    points: Sequence[Point], candidate: Point, *, pinned_run_id: int | None = None
) -> tuple[Point, ...]:
    """The runs whose trials are pooled into the candidate's baseline, in run-id order.

    A pinned run wins; else a patched build is compared with the same kernel stock, and a
    stock build with the nearest earlier stock kernel. Repeated runs of the chosen
    kernel + patch set are pooled, the candidate itself never is. A patched build whose
    kernel has no stock run gets no baseline (comparing it with another kernel would mix
    two changes); the user can pin one.
    """
    if pinned_run_id is not None:
        pinned = [p for p in points if p.run_id == pinned_run_id]
        if not pinned:
            raise ValueError(f"pinned baseline run {pinned_run_id} is not in the series")
        kernel, patches = kernel_of(pinned[0]), pinned[0].patches
    elif candidate.patches:
        kernel, patches = kernel_of(candidate), ()
    else:
        key = kernel_key(candidate)
        earlier = [p for p in points if not p.patches and kernel_key(p) < key]
        if not earlier:
            return ()
        kernel, patches = kernel_of(max(earlier, key=run_order)), ()
    group = [
        p
        for p in points
        if p.patches == patches and p.run_id != candidate.run_id and kernel_of(p) == kernel
    ]
    return tuple(sorted(group, key=lambda p: p.run_id))


def kept_untested(verdict: policy.Verdict, settings: Settings) -> bool:
    """One value a side and nothing known of the noise: a change of at least
    ``default_threshold_pct`` is kept and shown, pending, never emailed on a guess; trials
    on each side (or more kernels) make it a test."""
    return (
        verdict.method == "untested"
        and verdict.direction != "none"
        and abs(verdict.change_pct) >= settings.default_threshold_pct
    )


def change_from(
    baseline_run_ids: tuple[int, ...], run_id: int, verdict: policy.Verdict, status: str
) -> Change:
    """The ``Change`` a test's verdict makes of a run against its baseline runs."""
    return Change(
        baseline_run_ids=baseline_run_ids,
        candidate_run_id=run_id,
        change_pct=verdict.change_pct,
        p_value=verdict.p_value,
        method=verdict.method,
        direction=verdict.direction,
        confidence=verdict.confidence,
        status=status,
    )


def ab_change(
    points: Sequence[Point],
    point: Point,
    better: str,
    settings: Settings,
    pinned_run_id: int | None,
    noise: policy.Noise | None,
) -> Change | None:
    """An A/B test: a patched build against its stock kernel, or a run against a pinned
    baseline, judged when it arrives (final at once)."""
    group = baseline_runs(points, point, pinned_run_id=pinned_run_id)
    if not group:
        return None
    baseline = [v for p in group for v in p.values]
    if fmean(baseline) == 0:
        return None
    resolution = settings.resolution or policy.resolution_of([*baseline, *point.values])
    verdict = policy.judge(baseline, point.values, better, noise, resolution, settings)
    runs = tuple(p.run_id for p in group)
    if kept_untested(verdict, settings):
        return change_from(runs, point.run_id, replace(verdict, method="threshold"), "unconfirmed")
    if not verdict.significant:
        return None
    return change_from(runs, point.run_id, verdict, "confirmed")

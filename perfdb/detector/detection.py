"""Regression detection over one series: the stages a check runs, in order, and nothing else.

``check`` is what the service asks of a series for an upload's runs. It orders the points
(``points``), analyses a long series once (``long_series``), and asks each test in turn:
``detect`` (A/B tests, ``ab_test``; a short series' steps, ``short_scan``; a long one's,
``long_series``), the stock series' confirmed steps (``change_points``) and its drift
(``drift``). ``pair_context`` gives the compare page the same view of a pair. The noise
every test is judged with is ``noise``; the test itself ``policy.judge``. Pure, no Django;
how it works and how well: docs/detector.md.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from perfdb.detector import policy
from perfdb.detector.ab_test import ab_change, baseline_runs
from perfdb.detector.drift import drift_changes
from perfdb.detector.long_series import analysed, analysed_once, series_changes
from perfdb.detector.noise import segment_spread, trial_noise
from perfdb.detector.order_stats import Floats
from perfdb.detector.points import Change, Columns, Ordered, kernel_of, ordered, stock_by_kernel
from perfdb.detector.points import Point as Point  # named detection.Point by the compare page
from perfdb.detector.policy import Settings as Settings  # and detection.Settings by tests
from perfdb.detector.short_scan import short_changes, short_scan

DEFAULTS = Settings()


def check(
    points: Sequence[Point],
    *,
    better: str,
    settings: Settings,
    candidates: Collection[int],
    pinned_run_id: int | None = None,
    declared: Mapping[int, int] | None = None,
    usable: Ordered | None = None,
    columns: tuple[Columns, Floats] | None = None,
) -> list[Change]:
    """What a regression check asks of one series for an upload's runs (``candidates``): the
    series as stored in, the changes worth an alert out.

    ``detect`` for the candidates, each against its pinned baseline (``pinned_run_id``, if
    still in the series) or the one its bundle names (``declared``: run -> baseline run),
    and every confirmed step of the stock series when a candidate is a stock run: a step
    that the upload's kernel confirms lands on an earlier upload's run and is still raised
    (or updated); and a drift of the stock series (``drift.drift_changes``, method "drift")
    when the newest stock kernel is a candidate. ``usable``: the points as ``ordered``
    gives them, when the caller read them so; ``columns``: their ``points.columns`` and
    single trials, likewise. The series is analysed once for every call
    (``analysed_once``)."""
    declared = declared or {}
    asked = {r: declared[r] for r in sorted(candidates) if r in declared}
    in_series = {p.run_id for p in points} if pinned_run_id is not None or asked else set()
    pinned = pinned_run_id if pinned_run_id in in_series else None
    usable = analysed_once(ordered(points) if usable is None else usable, settings, columns)
    changes = detect(
        usable,
        better=better,
        settings=settings,
        pinned_run_id=pinned,
        candidates=set(candidates) - asked.keys(),
    )
    for run_id, baseline_id in asked.items():
        changes += detect(
            usable,
            better=better,
            settings=settings,
            pinned_run_id=baseline_id if baseline_id in in_series else pinned,
            candidates={run_id},
        )
    # ``detect`` already returns the stock series' confirmed steps when a stock run is among
    # the candidates, but not with a pinned baseline
    wanted = set(candidates)
    stock_candidate = any(not p.patches for p in points if p.run_id in wanted)
    steps = change_points(usable, better=better, settings=settings)
    seen = {(c.candidate_run_id, c.method) for c in changes}
    changes += [
        s
        for s in steps
        if (s.candidate_run_id in wanted or stock_candidate)
        and (s.candidate_run_id, s.method) not in seen
    ]
    if stock_candidate:
        changes += drift_changes(usable, better, settings, wanted)
    return changes


def detect(
    points: Sequence[Point],
    *,
    better: str,
    settings: Settings = DEFAULTS,
    pinned_run_id: int | None = None,
    candidates: Collection[int] | None = None,
) -> list[Change]:
    """Changes for the candidate runs (default: every run), as the service checks an upload.

    Patched builds (against the same kernel stock) and pinned comparisons are A/B tests,
    judged on arrival (``policy.judge`` with the series' trial noise). Stock runs of a series
    with >= ``min_kernels`` stock kernels go through the step scan: when a candidate is a
    stock run, every confirmed step of the series is returned (the service's get-or-create
    makes that idempotent), plus the newest kernel's move as "unconfirmed". Shorter series
    are read kernel by kernel (``short_scan``): a move tested on the trials is confirmed with
    the upload that brings it; with one trial a kernel, when the next kernel agrees.
    Returned in kernel order; a zero change is never reported.
    """
    policy.check_better(better)
    if better == "none":
        return []
    usable = ordered(points)
    series = analysed(usable, settings)
    # a long series has its noise model; the trials' pass over every run is for short ones
    trials, ab_noise = None, series.noise if series is not None else None
    if series is None:
        trials = trial_noise(usable, settings)
        ab_noise = trials.noise(settings)
    changes: list[Change] = []
    stock_kernels: set[str] = set()
    wanted = None if candidates is None else set(candidates)
    for point in usable:
        if wanted is not None and point.run_id not in wanted:
            continue
        if not point.patches and pinned_run_id is None:
            stock_kernels.add(kernel_of(point))
            continue
        change = ab_change(usable, point, better, settings, pinned_run_id, ab_noise)
        if change is not None:
            changes.append(change)
    if stock_kernels and series is not None:
        changes += series_changes(series, better, stock_kernels)
    elif stock_kernels and trials is not None:
        changes += short_changes(
            usable, better, settings, trials, None if wanted is None else stock_kernels
        )
    if len(changes) < 2:
        return changes
    position = {p.run_id: at for at, p in enumerate(usable)}  # kernel order: one point a run
    return sorted(changes, key=lambda c: position[c.candidate_run_id])


@dataclass(frozen=True)
class PairContext:
    """How the detector would judge candidate runs against baseline runs of one series:
    the noise, resolution and alpha it uses, the baseline it picks itself, and whether a
    stock candidate is judged by the step scan (not pairwise). For the compare page."""

    noise: policy.Noise | float | None
    resolution: float | None  # the metric's (parser's); None: read from the compared values
    detector_baseline: tuple[int, ...]  # the runs ``detect`` pools as the candidate's baseline
    step_scan: bool  # a stock candidate in a series of >= min_kernels stock kernels
    stock: bool  # the candidates are stock kernels
    after_spike: bool = False  # short series: the candidates' kernel is a return or a spike
    # runs of kernels that moved and came back (a spike, or an excursion of at most
    # ``Settings.excursion_kernels``), left out of every baseline and never a step
    outlier_runs: frozenset[int] = frozenset()
    alpha: float | None = None  # the one-sided alpha the candidates' kernel is tested at
    one_trial: bool = False  # short series with one trial a kernel: the next kernel confirms


def pair_context(
    points: Sequence[Point],
    candidate_run_ids: Collection[int],
    *,
    settings: Settings = DEFAULTS,
    better: str,
) -> PairContext | None:
    """The detector's view of a comparison whose candidates are runs of this series (None if
    no candidate is in it): the same noise ``detect`` passes to ``policy.judge``."""
    usable = ordered(points)
    candidates = [p for p in usable if p.run_id in candidate_run_ids]
    if not candidates:
        return None
    series = analysed(usable, settings)
    trials = trial_noise(usable, settings)
    noise: policy.Noise | float | None = series.noise if series else trials.noise(settings)
    stock = all(not p.patches for p in candidates)
    first = candidates[0]
    group = baseline_runs(usable, first)
    alpha, outliers, after_spike = None, frozenset[int](), False
    if series is not None:
        outliers = frozenset(r for i in series.scan.outliers for r in series.kernels[i].run_ids)
    elif stock:
        kernels = stock_by_kernel(usable)
        names = [k.kernel for k in kernels]
        at = names.index(kernel_of(first))
        scan = short_scan(kernels, better, settings, trials)
        outliers = frozenset(r for i in scan.outliers for r in kernels[i].run_ids)
        after_spike = at in scan.outliers or at in scan.returns
        how = scan.tested[at]
        if how is not None:  # as the scan tested this kernel: its level, alpha and noise
            level = {names[i] for i in how.segment}
            group = tuple(p for p in usable if not p.patches and kernel_of(p) in level)
            alpha = how.alpha
            spread = segment_spread(kernels, how.segment, how.noise.within_pct)
            noise = how.noise.noise(settings, spread)
    return PairContext(
        noise=noise,
        resolution=settings.resolution,
        detector_baseline=tuple(sorted(p.run_id for p in group)),
        step_scan=stock and series is not None,
        stock=stock,
        after_spike=after_spike,
        outlier_runs=outliers,
        alpha=alpha,
        one_trial=stock and series is None and trials.within_pct is None,
    )


def change_points(
    points: Sequence[Point], *, better: str, settings: Settings = DEFAULTS
) -> list[Change]:
    """Confirmed steps of the whole stock series (the step scan), no declared baseline.

    Each kernel contributes the mean of its pooled trials. A step is reported at the first
    kernel of the new level (its earliest run is the candidate), against the stock runs of
    the segment before it (outliers left out); change_pct compares the two levels.
    """
    policy.check_better(better)
    if better == "none":
        return []
    series = analysed(ordered(points), settings)
    if series is None:
        return []
    return series_changes(series, better, set())

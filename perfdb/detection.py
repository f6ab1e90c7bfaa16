"""Regression detection over one series: runs that differ only in kernel and patch set.

Pure functions over frozen dataclasses, no Django: the Celery task loads a series from the
database, turns it into ``Point``s and stores the returned ``Change``s as alerts (direction
"regression") or as recorded improvements. The statistics policy (noise model, thresholds,
the pairwise judge shared with the compare page) is ``perfdb.policy``; ``Point``, ``Change``
and the stock series' step scan (``perfdb.stats.step_scan``) are ``perfdb.series``. How it
works and the accuracy figures: docs/detector.md.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from perfdb import policy, stats
from perfdb.policy import BETTER_CHOICES as BETTER_CHOICES
from perfdb.policy import Settings as Settings  # re-exported: detection.Settings
from perfdb.policy import validate_threshold_pct as validate_threshold_pct
from perfdb.series import Change as Change
from perfdb.series import Point as Point
from perfdb.series import Series as _Series
from perfdb.series import analyse as _analyse
from perfdb.series import kernel_key as _key
from perfdb.series import kernel_of as _kernel
from perfdb.series import run_order as _order
from perfdb.series import series_changes as _series_changes
from perfdb.series import stock_by_kernel as _stock_by_kernel
from perfdb.series import usable as _usable

DEFAULTS = Settings()


class Ordered(tuple[Point, ...]):
    """A series' usable points in kernel order (``ordered``): ``detect`` and ``change_points``
    take it as it is, so a check cleans, sorts and analyses a long series once, not twice."""

    analyses: dict[Settings, _Series | None]


def _analysed(usable: Ordered, settings: Settings) -> _Series | None:
    """``series.analyse`` of the points, once per settings: kept on ``usable`` too, as a
    lookup in analyse's own cache hashes every point of the series."""
    if not hasattr(usable, "analyses"):
        usable.analyses = {}
    if settings not in usable.analyses:
        usable.analyses[settings] = _analyse(tuple(usable), settings)
    return usable.analyses[settings]


def ordered(points: Sequence[Point]) -> Ordered:
    """The points with a finite trial (NaN and infinite trials dropped), in kernel order."""
    if isinstance(points, Ordered):
        return points
    return Ordered(sorted(_usable(points), key=_order))


@dataclass(frozen=True)
class Comparison:
    change_pct: float
    p_value: float | None
    method: str
    is_significant: bool
    threshold_pct: float  # the size a change had to reach
    confidence: float


# --- baselines ---


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
        kernel, patches = _kernel(pinned[0]), pinned[0].patches
    elif candidate.patches:
        kernel, patches = _kernel(candidate), ()
    else:
        key = _key(candidate)
        earlier = [p for p in points if not p.patches and _key(p) < key]
        if not earlier:
            return ()
        kernel, patches = _kernel(max(earlier, key=_order)), ()
    group = [
        p
        for p in points
        if p.patches == patches and p.run_id != candidate.run_id and _kernel(p) == kernel
    ]
    return tuple(sorted(group, key=lambda p: p.run_id))


def choose_baseline(
    points: Sequence[Point], candidate: Point, *, pinned_run_id: int | None = None
) -> Point | None:
    """The candidate's baseline as one Point holding the pooled trials of its runs.

    Its run_id is the earliest pooled run's; ``baseline_runs`` gives all of them.
    """
    group = baseline_runs(points, candidate, pinned_run_id=pinned_run_id)
    if not group:
        return None
    values = tuple(v for p in group for v in p.values)
    return Point(
        run_id=group[0].run_id, kernel=group[0].kernel, patches=group[0].patches, values=values
    )


# --- noise and thresholds ---


def series_noise_pct(points: Sequence[Point]) -> float | None:
    """Robust within-run relative sd (%) over the runs with >= 2 trials; None if none has."""
    return policy.within_run_pct([p.values for p in _usable(points)])[0]


def detection_noise_pct(points: Sequence[Point]) -> float | None:
    """Per-trial noise (%) for pairwise thresholds: within-run if any run has trials, else the
    stock kernels' level noise (needs >= 4 stock kernels); None: the default threshold."""
    within = series_noise_pct(points)
    if within is not None:
        return within
    levels = [k.level for k in _stock_by_kernel(_usable(points))]
    return policy.level_noise_pct(levels)[0] if len(levels) >= 4 else None


def threshold_pct(
    settings: Settings, noise_pct: float | None, n_baseline: int, n_candidate: int
) -> float:
    """The smallest |change| (%) worth an alert for these sample sizes (``policy``)."""
    return policy.pairwise_threshold_pct(settings, noise_pct, n_baseline, n_candidate)


# --- comparing one candidate with its baseline ---


def evaluate(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    better: str,
    settings: Settings = DEFAULTS,
    series_noise_pct: float | policy.Noise | None = None,
    resolution: float | None = None,
) -> Comparison:
    """``compare`` with the threshold and confidence it used (``policy.judge``)."""
    verdict = policy.judge(
        baseline, candidate, better, series_noise_pct, resolution or settings.resolution, settings
    )
    return Comparison(
        verdict.change_pct,
        verdict.p_value,
        verdict.method,
        verdict.significant,
        verdict.threshold_pct,
        verdict.confidence,
    )


def compare(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    better: str,
    settings: Settings = DEFAULTS,
    series_noise_pct: float | None = None,
) -> tuple[float, float | None, str, bool]:
    """(change_pct, p_value, method, is_significant) of candidate trials vs baseline trials.

    Both sides with >= 2 values: Welch's t-test, significant when p < alpha and the change
    passes ``threshold_pct``. Otherwise ``threshold`` alone. ``better == "none"`` is never
    significant: a metric without a better direction cannot regress.
    """
    result = evaluate(
        baseline, candidate, better=better, settings=settings, series_noise_pct=series_noise_pct
    )
    return result.change_pct, result.p_value, result.method, result.is_significant


def _pairwise(
    points: Sequence[Point],
    point: Point,
    better: str,
    settings: Settings,
    pinned_run_id: int | None,
    noise: policy.Noise | float | None,
    newest: tuple[object, ...] | None,
) -> Change | None:
    group = baseline_runs(points, point, pinned_run_id=pinned_run_id)
    if not group:
        return None
    baseline = [v for p in group for v in p.values]
    if stats.mean(baseline) == 0:
        return None
    resolution = settings.resolution or policy.resolution_of([*baseline, *point.values])
    # a stock kernel judged against the one before it is a step only once the next kernel
    # agrees (at the newest kernel: pending); a patched build or a pinned comparison is an
    # A/B test, final at once
    stock_step = not point.patches and pinned_run_id is None
    if stock_step:
        noise = _kernel_noise(noise, settings)
    verdict = policy.judge(baseline, point.values, better, noise, resolution, settings)
    if not verdict.significant:
        return None
    if stock_step and _back_from_spike(points, group, point.values, better, noise, settings):
        return None
    at_newest = stock_step and _key(point) == newest
    if stock_step and not at_newest:
        following = _next_kernel(points, point)
        if not _confirmed_by(following, baseline, point.values, verdict, better, noise, settings):
            return None  # the next kernel came back: a spike, cleared
    return Change(
        baseline_run_ids=tuple(p.run_id for p in group),
        candidate_run_id=point.run_id,
        change_pct=verdict.change_pct,
        p_value=verdict.p_value,
        method=verdict.method,
        direction=verdict.direction,
        confidence=verdict.confidence,
        status="unconfirmed" if at_newest else "confirmed",
    )


def _back_from_spike(
    points: Sequence[Point],
    group: Sequence[Point],
    values: Sequence[float],
    better: str,
    noise: policy.Noise | float | None,
    settings: Settings,
) -> bool:
    """Is the kernel before this one (``group``) a spike, or the last of an excursion of at
    most ``settings.excursion_kernels``, that this one came back from? Walking back from it,
    the first kernel that differs significantly from the kernels since (one run moved, or a
    few at one level) is the level before; this one is nearer that level than theirs. Before,
    the return was judged against the spike: a move, and with the next kernel agreeing, a
    confirmed step on the kernel after a bad run. The step scan's rule for longer series is
    the same (``stats._back``)."""
    visit = [v for p in group for v in p.values]
    earlier = baseline_runs(points, group[0])
    for _ in range(max(settings.excursion_kernels, 1)):
        if not earlier:
            return False
        before = [v for p in earlier for v in p.values]
        if stats.mean(before) == 0:
            return False
        resolution = settings.resolution or policy.resolution_of([*before, *visit])
        if policy.judge(before, visit, better, noise, resolution, settings).significant:
            if _spike_itself(points, earlier, before, visit):
                return False  # no level before the visit to come back to
            return not _nearer_new(stats.mean(values), stats.mean(before), stats.mean(visit))
        visit += before  # at the visit's level: one more kernel of it
        earlier = baseline_runs(points, earlier[0])
    return False


def _spike_itself(
    points: Sequence[Point],
    runs: Sequence[Point],
    values: Sequence[float],
    visit: Sequence[float],
) -> bool:
    """Is the kernel of ``runs`` (the level a visit started from) a spike itself: the kernel
    before it nearer the visit's level than its own?"""
    earlier = baseline_runs(points, runs[0])
    if not earlier:
        return False
    level = stats.mean([v for p in earlier for v in p.values])
    return not _nearer_new(level, stats.mean(visit), stats.mean(values))


def _kernel_noise(
    noise: policy.Noise | float | None, settings: Settings
) -> policy.Noise | float | None:
    """Two kernels differ by more than their trials' noise: each is another boot, another
    build. A short series has no noise model yet (only the trials' spread, a float), so its
    run-to-run part is taken as large as the within-run noise (a lab's reboot-to-reboot
    noise is rarely smaller), or the workload/metric's typical noise when that is larger."""
    if not isinstance(noise, float | int):
        return noise
    within = float(noise)
    between = within * settings.short_between_ratio
    if settings.prior_noise_pct is not None:  # a prior can only widen it: too few kernels to
        # tell a series noisier than typical (bimodal) from a step
        between = max(between, math.sqrt(max(settings.prior_noise_pct**2 - within**2 / 3, 0.0)))
    return policy.Noise(within, between, math.inf, 1)


def _next_kernel(points: Sequence[Point], point: Point) -> list[float]:
    """The pooled trials of the first stock kernel after ``point``'s (empty if none)."""
    key = _key(point)
    later = [p for p in points if not p.patches and _key(p) > key]
    if not later:
        return []
    first = min(_key(p) for p in later)
    return [v for p in later if _key(p) == first for v in p.values]


def _confirmed_by(
    following: Sequence[float],
    baseline: Sequence[float],
    moved: Sequence[float],
    verdict: policy.Verdict,
    better: str,
    noise: policy.Noise | float | None,
    settings: Settings,
) -> bool:
    """Does the next kernel confirm a kernel's move? It must differ from the old level in the
    same direction, significantly, and be closer to the new level than to the old one."""
    if not following or noise is None:
        return False  # nothing after it, or no idea of the noise (single values): pending
    resolution = settings.resolution or policy.resolution_of([*baseline, *following])
    again = policy.judge(baseline, following, better, noise, resolution, settings)
    if not again.significant or again.direction != verdict.direction:
        return False
    return _nearer_new(stats.mean(following), stats.mean(baseline), stats.mean(moved))


def _nearer_new(level: float, old: float, new: float) -> bool:
    """Is a kernel's level at least as near the new level as the old one?"""
    return abs(level - new) <= abs(level - old)


def _previous_stock(points: Sequence[Point], candidates: Collection[int]) -> set[int]:
    """Runs of the stock kernel right before each candidate stock kernel: the candidate is
    the "next kernel" that confirms or clears their pending move."""
    keys = sorted({_key(p) for p in points if not p.patches})
    wanted = set()
    for point in points:
        if point.run_id in candidates and not point.patches:
            at = keys.index(_key(point))
            if at > 0:
                wanted.add(keys[at - 1])
    return {p.run_id for p in points if not p.patches and _key(p) in wanted}


def detect(
    points: Sequence[Point],
    *,
    better: str,
    settings: Settings = DEFAULTS,
    pinned_run_id: int | None = None,
    candidates: Collection[int] | None = None,
) -> list[Change]:
    """Changes for the candidate runs (default: every run), as the service checks an upload.

    Patched builds (against the same kernel stock) and pinned comparisons are pairwise
    (``policy.judge``). Stock runs of a series with >= ``min_kernels`` stock kernels go
    through the step scan: when a candidate is a stock run, every confirmed step of the
    series is returned (the service's get-or-create makes that idempotent, and a step that
    this upload's kernel confirms is raised on the earlier run), plus the newest kernel's
    move as "unconfirmed". Shorter series compare a stock run with the previous kernel: at
    the newest kernel "unconfirmed", else only when the next kernel agrees (the kernel before
    a candidate is judged again for that). Returned in kernel order; candidates without a
    baseline or with a zero baseline mean are skipped, and a zero change is never reported.
    """
    policy.check_better(better)
    if better == "none":
        return []
    usable = ordered(points)
    series = _analysed(usable, settings)
    noise: policy.Noise | float | None = series.noise if series else detection_noise_pct(usable)
    # in kernel order: the last stock point has the newest kernel
    newest = next((_key(p) for p in reversed(usable) if not p.patches), None)
    changes, stock_kernels = [], set()
    wanted = None if candidates is None else set(candidates)
    if wanted is not None and series is None and pinned_run_id is None:
        # short series: the kernel before a new one is judged again, now that the new one
        # can confirm (or clear) its move
        wanted |= _previous_stock(usable, wanted)
    for point in usable:
        if wanted is not None and point.run_id not in wanted:
            continue
        if series is not None and not point.patches and pinned_run_id is None:
            stock_kernels.add(_kernel(point))
            continue
        change = _pairwise(usable, point, better, settings, pinned_run_id, noise, newest)
        if change is not None:
            changes.append(change)
    if series is not None and stock_kernels:
        changes += _series_changes(series, better, stock_kernels)
    if len(changes) < 2:
        return changes
    position = {p.run_id: at for at, p in enumerate(usable)}  # kernel order: one point a run
    return sorted(changes, key=lambda c: position[c.candidate_run_id])


@dataclass(frozen=True)
class PairContext:
    """How the detector would judge candidate runs against baseline runs of one series:
    the noise and resolution it uses, the baseline it picks itself, and whether a stock
    candidate is judged by the step scan (not pairwise). For the compare page."""

    noise: policy.Noise | float | None
    resolution: float | None  # the metric's (parser's); None: read from the compared values
    detector_baseline: tuple[int, ...]  # the runs ``detect`` pools as the candidate's baseline
    step_scan: bool  # a stock candidate in a series of >= min_kernels stock kernels
    stock: bool  # the candidates are stock kernels: a move needs the next kernel to agree
    after_spike: bool = False  # pairwise, the kernel before was a spike these came back from
    # step scan: runs of kernels that moved and came back (a spike, or an excursion of at most
    # ``Settings.excursion_kernels``), left out of every baseline and never a step
    outlier_runs: frozenset[int] = frozenset()


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
    series = _analyse(tuple(usable), settings)
    noise: policy.Noise | float | None = series.noise if series else detection_noise_pct(usable)
    stock = all(not p.patches for p in candidates)
    if stock:
        noise = _kernel_noise(noise, settings)
    first = candidates[0]
    group = baseline_runs(usable, first)
    pairwise = stock and series is None
    return PairContext(
        noise=noise,
        resolution=settings.resolution,
        detector_baseline=tuple(p.run_id for p in group),
        step_scan=stock and series is not None,
        stock=stock,
        after_spike=pairwise
        and bool(group)
        and _back_from_spike(usable, group, first.values, better, noise, settings),
        outlier_runs=frozenset()
        if series is None
        else frozenset(r for i in series.scan.outliers for r in series.kernels[i].run_ids),
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
    series = _analysed(ordered(points), settings)
    if series is None:
        return []
    return _series_changes(series, better, set())

"""Regression detection over one series: runs that differ only in kernel and patch set.

Pure functions over frozen dataclasses, no Django: the Celery task loads a series from the
database, turns it into ``Point``s and stores the returned ``Change``s as alerts (direction
"regression") or as recorded improvements. The statistics policy (noise model, thresholds,
the pairwise judge shared with the compare page) is ``perfdb.policy``; the step scan is
``perfdb.stats.step_scan``. How it works and the accuracy figures: docs/detector.md.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

from scipy import stats as scipy_stats

from perfdb import policy, stats
from perfdb.kernels import kernel_sort_key, parse_kernel
from perfdb.policy import BETTER_CHOICES as BETTER_CHOICES
from perfdb.policy import Settings as Settings  # re-exported: detection.Settings
from perfdb.policy import validate_threshold_pct as validate_threshold_pct

DEFAULTS = Settings()


@dataclass(frozen=True)
class Point:
    """One run in a series."""

    run_id: int
    kernel: str
    patches: tuple[str, ...]  # () = stock
    values: tuple[float, ...]  # trial values used for statistics (warm-up already removed)


@dataclass(frozen=True)
class Change:
    baseline_run_ids: tuple[int, ...]
    candidate_run_id: int
    change_pct: float  # (candidate mean - baseline mean) / |baseline mean| * 100
    p_value: float | None  # None when a side has a single value
    method: str  # "welch" | "threshold" | "changepoint"
    direction: str  # "regression" | "improvement"
    confidence: float  # 0..1, see docs/detector.md
    # "confirmed": alert and email. "unconfirmed": the newest kernel moved, the next kernel
    # confirms it (a later check returns it "confirmed") or clears it (it is never returned
    # again): store it, show it, do not email it yet. See docs/detector.md, "For the service".
    status: str = "confirmed"


@dataclass(frozen=True)
class Comparison:
    change_pct: float
    p_value: float | None
    method: str
    is_significant: bool
    threshold_pct: float  # the size a change had to reach
    confidence: float


# --- kernels, parsed once per kernel string ---


@lru_cache(maxsize=65536)
def _parsed(kernel: str) -> tuple[str, tuple[object, ...]]:
    return parse_kernel(kernel).text, tuple(kernel_sort_key(kernel))


def _kernel(point: Point) -> str:
    return _parsed(point.kernel)[0]  # "2.4.20-stock" is "2.4.20"


def _key(point: Point) -> tuple[object, ...]:
    return _parsed(point.kernel)[1]


def _order(point: Point) -> tuple[object, ...]:
    return (*_key(point), point.patches, point.run_id)


def _usable(points: Sequence[Point]) -> list[Point]:
    """NaN and infinite trials dropped; a run with no trial left is no observation."""
    cleaned = []
    for point in points:
        values = policy.finite(point.values)
        if values:
            cleaned.append(point if values == point.values else _with_values(point, values))
    return cleaned


def _with_values(point: Point, values: tuple[float, ...]) -> Point:
    return Point(point.run_id, point.kernel, point.patches, values)


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


def _kernel_noise(
    noise: policy.Noise | float | None, settings: Settings
) -> policy.Noise | float | None:
    """Two kernels differ by more than their trials' noise: each is another boot, another
    build. A short series has no noise model yet (only the trials' spread, a float), so its
    run-to-run part is the workload/metric's typical noise when known, else taken as large
    as the within-run noise (a lab's reboot-to-reboot noise is rarely smaller)."""
    if not isinstance(noise, float | int):
        return noise
    within = float(noise)
    if settings.prior_noise_pct is not None:
        between = math.sqrt(max(settings.prior_noise_pct**2 - within**2 / 3, 0.0))
    else:
        between = within * settings.short_between_ratio
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
    old, new, after = stats.mean(baseline), stats.mean(moved), stats.mean(following)
    return abs(after - new) <= abs(after - old)


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
    usable = sorted(_usable(points), key=_order)
    series = _analyse(tuple(usable), settings)
    noise: policy.Noise | float | None = series.noise if series else detection_noise_pct(usable)
    stock_keys = [_key(p) for p in usable if not p.patches]
    newest = max(stock_keys) if stock_keys else None
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
    order = {p.run_id: _order(p) for p in usable}
    return sorted(changes, key=lambda c: order[c.candidate_run_id])


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


def pair_context(
    points: Sequence[Point],
    candidate_run_ids: Collection[int],
    *,
    settings: Settings = DEFAULTS,
) -> PairContext | None:
    """The detector's view of a comparison whose candidates are runs of this series (None if
    no candidate is in it): the same noise ``detect`` passes to ``policy.judge``."""
    usable = sorted(_usable(points), key=_order)
    candidates = [p for p in usable if p.run_id in candidate_run_ids]
    if not candidates:
        return None
    series = _analyse(tuple(usable), settings)
    noise: policy.Noise | float | None = series.noise if series else detection_noise_pct(usable)
    stock = all(not p.patches for p in candidates)
    if stock:
        noise = _kernel_noise(noise, settings)
    first = candidates[0]
    return PairContext(
        noise=noise,
        resolution=settings.resolution,
        detector_baseline=tuple(p.run_id for p in baseline_runs(usable, first)),
        step_scan=stock and series is not None,
        stock=stock,
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
    series = _analyse(tuple(sorted(_usable(points), key=_order)), settings)
    if series is None:
        return []
    return _series_changes(series, better, set())


# --- the stock series ---


@dataclass(frozen=True)
class _KernelRuns:
    kernel: str
    run_ids: tuple[int, ...]
    values: tuple[float, ...]

    @property
    def level(self) -> float:
        return stats.mean(self.values)


def _stock_by_kernel(points: Sequence[Point]) -> list[_KernelRuns]:
    """Stock runs grouped by kernel, in kernel order: one observation per kernel.

    Sorting by kernel (and run id inside a kernel) is what makes the answer independent
    of the order the points were uploaded or passed in.
    """
    groups: dict[str, list[Point]] = {}
    for point in points:
        if not point.patches:
            groups.setdefault(_kernel(point), []).append(point)
    ordered = sorted(groups.items(), key=lambda item: _parsed(item[0])[1])
    return [
        _KernelRuns(
            kernel=kernel,
            run_ids=tuple(sorted(p.run_id for p in runs)),
            values=tuple(v for p in sorted(runs, key=lambda p: p.run_id) for v in p.values),
        )
        for kernel, runs in ordered
    ]


@dataclass(frozen=True)
class _Series:
    kernels: tuple[_KernelRuns, ...]
    noise: policy.Noise
    scan: stats.Scan


@lru_cache(maxsize=32)
def _analyse(points: tuple[Point, ...], settings: Settings) -> _Series | None:
    """Noise model and step scan of a series; None below ``min_kernels`` stock kernels.

    Cached: the service calls ``detect`` and ``change_points`` on the same points.
    """
    kernels = _stock_by_kernel(points)
    levels = [k.level for k in kernels]
    if len(kernels) < settings.min_kernels or any(level == 0 for level in levels):
        return None
    noise = policy.series_noise([p.values for p in points], levels, settings)
    if noise is None:
        return None
    centre = sorted(abs(v) for v in levels)[len(levels) // 2]
    resolution = settings.resolution or policy.resolution_of(v for p in points for v in p.values)
    variances = []
    for k in kernels:
        within = (noise.within_pct or 0.0) ** 2 / len(k.values)
        sd = math.sqrt(noise.between_pct**2 / len(k.run_ids) + within) / 100 * centre
        floor = (resolution or 0.0) / 2 / math.sqrt(len(k.values))
        variances.append(max(sd, floor, 1e-9 * centre) ** 2)
    per_kernel = settings.series_alpha / max(len(kernels), settings.budget_kernels)
    fixed = policy.usable_threshold_pct(settings.threshold_pct)
    rule = stats.ScanRule(
        critical=policy.critical_t(per_kernel / 2, noise.dof),
        homogeneity=tuple(
            policy.critical_chi2(settings.homogeneity_alpha, d) if d else math.inf
            for d in range(settings.confirm_window + 1)
        ),
        min_fraction=(fixed if fixed is not None else settings.min_change_pct) / 100,
        min_absolute=resolution or 0.0,
        window=settings.confirm_window,
        baseline_window=settings.baseline_window,
    )
    return _Series(tuple(kernels), noise, stats.step_scan(levels, variances, rule))


def _series_changes(series: _Series, better: str, new_kernels: set[str]) -> list[Change]:
    """Confirmed steps, plus the pending one when its kernel is among ``new_kernels``."""
    steps = list(series.scan.steps)
    pending = series.scan.pending
    if pending is not None and series.kernels[pending.index].kernel in new_kernels:
        steps.append(pending)
    changes = []
    for step in steps:
        change = (step.after_mean - step.before_mean) / abs(step.before_mean) * 100.0
        p_value = min(1.0, 2.0 * float(scipy_stats.t.sf(abs(step.z), series.noise.dof)))
        changes.append(
            Change(
                baseline_run_ids=tuple(
                    sorted(r for i in step.before for r in series.kernels[i].run_ids)
                ),
                candidate_run_id=series.kernels[step.index].run_ids[0],
                change_pct=change,
                p_value=p_value,
                method="changepoint",
                direction=policy.direction(change, better),
                confidence=1.0 - p_value,
                status="confirmed" if step.confirmed else "unconfirmed",
            )
        )
    return changes

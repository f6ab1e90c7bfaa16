"""Regression detection over one series: runs that differ only in kernel and patch set.

Pure functions over frozen dataclasses, no Django: the Celery task loads a series from the
database, turns it into ``Point``s and stores the returned ``Change``s as alerts (direction
"regression") or as recorded improvements. How it works and why the defaults are what they
are: docs/detector.md (with the accuracy table from bench/detector_accuracy.py).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from perfdb import stats
from perfdb.kernels import kernel_sort_key, parse_kernel

BETTER_CHOICES = ("higher", "lower", "none")


@dataclass(frozen=True)
class Point:
    """One run in a series."""

    run_id: int
    kernel: str
    patches: tuple[str, ...]  # () = stock
    values: tuple[float, ...]  # trial values used for statistics (warm-up already removed)


@dataclass(frozen=True)
class Settings:
    """Detector knobs. The defaults were tuned with bench/detector_accuracy.py."""

    alpha: float = 0.1  # Welch's t-test significance (the noise threshold does the heavy work)
    min_change_pct: float = 2.0  # below this a significant change is not worth an alert
    threshold_pct: float | None = None  # fixed threshold; None = derive from the series' noise
    default_threshold_pct: float = 5.0  # used when threshold_pct is None and noise is unknown
    noise_multiplier: float = 4.5  # standard errors of noise a change must exceed
    changepoint_alpha: float = 0.01  # permutation-test significance for E-Divisive
    changepoint_permutations: int = 199
    changepoint_seed: int = 20030723  # fixed: the same series always gives the same answer


@dataclass(frozen=True)
class Change:
    baseline_run_ids: tuple[int, ...]
    candidate_run_id: int
    change_pct: float  # (candidate mean - baseline mean) / |baseline mean| * 100
    p_value: float | None  # None when a side has a single value
    method: str  # "welch" | "threshold" | "changepoint"
    direction: str  # "regression" | "improvement"
    confidence: float  # 0..1, see docs/detector.md


@dataclass(frozen=True)
class Comparison:
    change_pct: float
    p_value: float | None
    method: str
    is_significant: bool
    threshold_pct: float  # the size a change had to reach
    confidence: float


# --- baselines ---


def _kernel(point: Point) -> str:
    return parse_kernel(point.kernel).text  # "2.4.20-stock" is "2.4.20"


def _order(point: Point) -> tuple:
    return (*kernel_sort_key(point.kernel), point.patches, point.run_id)


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
        earlier = [
            p
            for p in points
            if not p.patches and kernel_sort_key(p.kernel) < kernel_sort_key(candidate.kernel)
        ]
        if not earlier:
            return ()
        kernel, patches = _kernel(max(earlier, key=_order)), ()
    group = [
        p
        for p in points
        if _kernel(p) == kernel and p.patches == patches and p.run_id != candidate.run_id
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
    """Pooled within-run relative sd (%) over the runs with >= 2 trials; None if none has."""
    return stats.pooled_cv_pct([p.values for p in points])


def detection_noise_pct(points: Sequence[Point]) -> float | None:
    """The noise thresholds are derived from: within-run if any run has trials, else between.

    A series of single-value runs has no within-run noise; its stock kernels' levels, moving
    from one kernel to the next, still show how noisy it is (``successive_difference_cv_pct``,
    needs >= 4 stock kernels). None when neither is available: the default threshold applies.
    """
    within = series_noise_pct(points)
    if within is not None:
        return within
    return stats.successive_difference_cv_pct([k.level for k in _stock_by_kernel(points)])


def threshold_pct(
    settings: Settings, noise_pct: float | None, n_baseline: int, n_candidate: int
) -> float:
    """The smallest |change| (%) worth an alert for these sample sizes.

    A fixed ``threshold_pct`` is used as given. Otherwise, with the series' noise known,
    a change must exceed ``noise_multiplier`` standard errors of the difference of the two
    means (noise * sqrt(1/n1 + 1/n2)) and ``min_change_pct``; without it,
    ``default_threshold_pct``. Scaling by the standard error is what lets a 5-trial run
    flag a smaller change than a single value, and a multiplier well above 2 is what keeps
    a long series of noise-only comparisons free of false alerts (docs/detector.md).
    """
    if settings.threshold_pct is not None:
        return settings.threshold_pct
    if noise_pct is None:
        return max(settings.min_change_pct, settings.default_threshold_pct)
    standard_error = noise_pct * math.sqrt(1 / n_baseline + 1 / n_candidate)
    return max(settings.min_change_pct, settings.noise_multiplier * standard_error)


def _check_better(better: str) -> None:
    if better not in BETTER_CHOICES:
        raise ValueError(f"better must be one of {BETTER_CHOICES}, got {better!r}")


def _direction(change_pct: float, better: str) -> str:
    went_up = change_pct > 0
    return "improvement" if went_up == (better == "higher") else "regression"


# --- comparing one candidate with its baseline ---


def evaluate(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    better: str,
    settings: Settings = Settings(),
    series_noise_pct: float | None = None,
) -> Comparison:
    """``compare`` with the threshold and confidence it used, for callers that store them."""
    _check_better(better)
    change = stats.relative_change_pct(baseline, candidate)
    trials_both_sides = len(baseline) >= 2 and len(candidate) >= 2
    noise = series_noise_pct
    if noise is None and trials_both_sides:
        noise = stats.pooled_cv_pct([baseline, candidate])  # at least these runs' own noise
    limit = threshold_pct(settings, noise, len(baseline), len(candidate))
    big_enough = abs(change) >= limit
    if trials_both_sides:
        p_value = stats.welch_p_value(baseline, candidate)
        significant = p_value < settings.alpha and big_enough
        return Comparison(
            change, p_value, "welch", significant and better != "none", limit, 1.0 - p_value
        )
    # One side is a single value: no test is possible, only a size threshold. Confidence
    # treats the threshold as noise_multiplier standard errors of the difference.
    standard_error = limit / settings.noise_multiplier
    confidence = 1.0 - stats.normal_two_sided_p(change / standard_error)
    return Comparison(change, None, "threshold", big_enough and better != "none", limit, confidence)


def compare(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    better: str,
    settings: Settings = Settings(),
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


def detect(
    points: Sequence[Point],
    *,
    better: str,
    settings: Settings = Settings(),
    pinned_run_id: int | None = None,
    candidates: Collection[int] | None = None,
) -> list[Change]:
    """Significant changes of each candidate run (default: every run) against its baseline.

    Returned in kernel order. Candidates without a baseline, or whose baseline mean is 0
    (no relative change exists), are skipped.
    """
    _check_better(better)
    if better == "none":
        return []
    noise = detection_noise_pct(points)
    changes = []
    for point in sorted(points, key=_order):
        if candidates is not None and point.run_id not in candidates:
            continue
        group = baseline_runs(points, point, pinned_run_id=pinned_run_id)
        if not group:
            continue
        baseline = [v for p in group for v in p.values]
        if stats.mean(baseline) == 0:
            continue
        result = evaluate(
            baseline, point.values, better=better, settings=settings, series_noise_pct=noise
        )
        if result.is_significant:
            changes.append(
                Change(
                    baseline_run_ids=tuple(p.run_id for p in group),
                    candidate_run_id=point.run_id,
                    change_pct=result.change_pct,
                    p_value=result.p_value,
                    method=result.method,
                    direction=_direction(result.change_pct, better),
                    confidence=result.confidence,
                )
            )
    return changes


# --- change points over the stock series ---


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
    ordered = sorted(groups.items(), key=lambda item: kernel_sort_key(item[0]))
    return [
        _KernelRuns(
            kernel=kernel,
            run_ids=tuple(sorted(p.run_id for p in runs)),
            values=tuple(v for p in sorted(runs, key=lambda p: p.run_id) for v in p.values),
        )
        for kernel, runs in ordered
    ]


def change_points(
    points: Sequence[Point], *, better: str, settings: Settings = Settings()
) -> list[Change]:
    """Steps in the stock series found by E-Divisive, with no declared baseline.

    Each kernel contributes the mean of its pooled trials. A step is reported at the first
    kernel of the new segment (its earliest run is the candidate), against every stock run
    of the segment before it; change_pct compares the two segments' mean levels, p_value is
    the permutation test's and confidence 1 - p. Steps smaller than ``threshold_pct`` for
    the two segments' trial counts are dropped: a change point that small is noise that
    happened to line up, or too small to be worth an alert.
    """
    _check_better(better)
    if better == "none":
        return []
    kernels = _stock_by_kernel(points)
    levels = [k.level for k in kernels]
    found = stats.e_divisive(
        levels,
        significance=settings.changepoint_alpha,
        permutations=settings.changepoint_permutations,
        seed=settings.changepoint_seed,
    )
    cuts = [0, *sorted(cp.index for cp in found), len(kernels)]
    p_values = {cp.index: cp.p_value for cp in found}
    noise = detection_noise_pct(points)
    changes = []
    for before_start, at, after_end in zip(cuts, cuts[1:], cuts[2:], strict=False):
        before, after = levels[before_start:at], levels[at:after_end]
        if stats.mean(before) == 0:
            continue
        change = stats.relative_change_pct(before, after)
        trials_before = sum(len(k.values) for k in kernels[before_start:at])
        trials_after = sum(len(k.values) for k in kernels[at:after_end])
        if abs(change) < threshold_pct(settings, noise, trials_before, trials_after):
            continue
        changes.append(
            Change(
                baseline_run_ids=tuple(
                    sorted(r for k in kernels[before_start:at] for r in k.run_ids)
                ),
                candidate_run_id=kernels[at].run_ids[0],
                change_pct=change,
                p_value=p_values[at],
                method="changepoint",
                direction=_direction(change, better),
                confidence=1.0 - p_values[at],
            )
        )
    return changes

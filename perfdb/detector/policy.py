"""The one statistics policy: settings, thresholds, the workload's prior and the judge.

Pure functions, no Django. ``detector.detection`` (alerts, change points) and the compare page
(``dashboards.pure.compare``) both decide "is this change real?" here, so they cannot disagree
without saying why (``Verdict.reason``). docs/detector.md explains every choice; the figures
come from bench/detector_accuracy.py.

A metric's quantum (``resolution_of``: no change within one quantum is significant) is read
from its values, fast on long series. The exact test is per value in pure Python
(``round(value, d)``, a correctly rounded decimal conversion): ~1 ms for the 1,000 values of
a long series, and a check reads 60 such series. numpy's ``round`` multiplies by 10**d
instead, so its error can differ from Python's by a few units in the last place of the
value, never more (both pick the nearest multiple of 10**-d, or at a half-way point the two
neighbours, whose errors are equal up to those units). The tolerance is 1e-9 of the value,
~10 million such units: a value whose numpy error is within half the tolerance passes the
exact test for certain. Only the others (the first value that needs more decimals, a value
on the edge of the tolerance, a value numpy cannot scale) go through the exact test, in the
order the loop meets them, so the answer is the loop's, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import fmean

import numpy as np
from scipy import stats as scipy_stats

from perfdb.detector import stats
from perfdb.detector.points import finite
from perfdb.detector.stats import Floats

BETTER_CHOICES = ("higher", "lower", "none")


@dataclass(frozen=True)
class Settings:
    """Detector knobs. The defaults were tuned with bench/detector_accuracy.py (seed 2003)."""

    alpha: float = 0.1  # a stated claim's interval is at 1 - alpha (perfdb.claims)
    # One comparison's false-alert rate in the direction tested (one-sided): an A/B, a patched
    # build against its stock kernel, a short series' newest kernel against its level. A short
    # series spends it over its kernels (the k-th comparison gets alert_alpha / k^2), about
    # 1.5 x alert_alpha in all: 0.006 keeps a clean short series under one false alert in 100
    # (bench/detector_situations.py: 0.89 per 100 at 3-6 kernels, 0.44 for an A/B).
    alert_alpha: float = 0.006
    min_change_pct: float = 2.0  # below this a significant change is not worth an alert
    threshold_pct: float | None = None  # fixed threshold; None (or invalid) = derive from noise
    # one value a side and no noise known: a change this large is kept as a pending alert
    # (shown, not emailed) until trials make it a test
    default_threshold_pct: float = 5.0
    resolution: float | None = None  # smallest step the metric can show; None = from the values
    series_alpha: float = 0.01  # false-alert budget of one series of `budget_kernels` kernels
    budget_kernels: int = 40  # longer series share the same budget: alpha per kernel shrinks
    min_kernels: int = 6  # a series votes for its workload's prior from this many kernels
    # fewer stock kernels: read kernel by kernel as they arrive (detection.short_scan), not
    # by the step scan, whose noise comes from the kernel-to-kernel moves
    short_kernels: int = 12
    # a short series' level of fewer kernels: a move tested on trials is confirmed when it
    # arrives (an A/B, a handful of kernels); after a longer level the next kernel decides,
    # as a lone bad run is then likelier than a step
    arrival_kernels: int = 6
    # kernels after a step that may still confirm it: a small step is seen once enough
    # kernels after it agree (a 5 % step at 8 % CV needs about 15-20)
    confirm_window: int = 20
    excursion_kernels: int = 3  # a level back within this many kernels: an excursion, no step
    baseline_window: int = 30  # kernels of the current segment a step is measured against
    homogeneity_alpha: float = 0.01  # the kernels after a step must agree with each other
    dof_per_difference: float = 0.7  # dof per kernel-to-kernel move (trimmed estimate)
    noise_trim: float = 0.2  # share of the largest kernel-to-kernel moves left out of the noise
    prior_noise_pct: float | None = None  # typical level noise of the workload/metric
    prior_weight: float = 12.0  # how many kernel moves the prior is worth
    prior_tolerance: float = 1.0  # a series noisier than prior x this keeps its own noise
    # or, when set, the tolerance is the series' own estimate's upper bound at this level:
    # a series whose noise is consistent with the prior (narrower or wider) is pooled with it
    prior_consistency: float | None = 0.05
    # run-to-run noise assumed, as a share of the within-run noise, where nothing measures it
    # (no repeated build, no prior, too few kernels at one level): a test on the trials
    short_between_ratio: float = 0.0
    # how many degrees of freedom that assumption is worth beside a few repeated builds (no
    # prior): a kernel run twice whose runs disagree is one dof, whose t-quantile (~400 at
    # the short scan's alpha) hid a -30 % step lasting three kernels; pooled with this, the
    # rerun still widens the test without blinding it
    rerun_prior_dof: float = 4.0
    # A drift (perfdb/detector/drift.py): the slope of the stock series' trailing window of
    # this many kernels (at least ``drift_min_kernels`` since the last step), tested one-sided
    # at ``drift_alpha``: a series tests a window at every upload, so past ``budget_kernels``
    # each window gets drift_alpha x budget_kernels / kernels (bench/detector_situations.py
    # and detector_accuracy.py --lab: the clean rows hold, drift-2 75 %)
    drift_window: int = 10
    drift_min_kernels: int = 6
    drift_alpha: float = 0.00003


def validate_threshold_pct(value: float | None) -> float | None:
    """A threshold the model, admin and API may store: None, or finite and > 0 (%)."""
    if value is None:
        return None
    if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"threshold must be a finite percentage > 0, got {value!r}")
    return float(value)


def usable_threshold_pct(value: float | None) -> float | None:
    """The stored threshold if valid, else None: a bad row must not abort a whole check."""
    try:
        return validate_threshold_pct(value)
    except ValueError:
        return None


def check_better(better: str) -> None:
    if better not in BETTER_CHOICES:
        raise ValueError(f"better must be one of {BETTER_CHOICES}, got {better!r}")


def direction(change_pct: float, better: str) -> str:
    """ "regression" or "improvement"; a zero change is neither (callers never report it)."""
    if change_pct == 0:
        return "none"
    return "improvement" if (change_pct > 0) == (better == "higher") else "regression"


def _votes(series_levels: Iterable[Sequence[float]], min_kernels: int) -> list[tuple[float, int]]:
    """Each series' robust level noise (%) and its number of moves (>= ``min_kernels``)."""
    votes = []
    for levels in series_levels:
        if len(levels) >= min_kernels:
            noise, n = stats.level_noise_pct(levels)
            if noise is not None:
                votes.append((noise, n))
    return votes


def pooled_level_noise_pct(
    series_levels: Iterable[Sequence[float]], *, min_kernels: int = 6
) -> tuple[float | None, int]:
    """The workload/metric's typical level noise (%) from its other series, and #moves.

    A lab runs one workload on many setups; their series of one metric have similar noise.
    Each series with >= ``min_kernels`` kernels votes its robust level noise
    (``stats.level_noise_pct``); the median vote is the prior (a bimodal or flaky setup is one
    vote, not the answer), and the moves behind the votes say how well it is known.
    """
    return _median_vote(_votes(series_levels, min_kernels))


def _median_vote(votes: list[tuple[float, int]]) -> tuple[float | None, int]:
    if not votes:
        return None, 0
    return median_noise(sorted(v for v, _ in votes)), sum(n for _, n in votes)


def median_noise(ordered: Sequence[float]) -> float | None:
    """The median of sorted noise votes (%): of an even number, the geometric mean of the
    middle two (the votes are sds); None without votes."""
    if not ordered:
        return None
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else math.sqrt(ordered[mid - 1] * ordered[mid])


def pooled_prior(
    levels: Iterable[Sequence[float]], settings: Settings, *, alike: bool = False
) -> tuple[float | None, float]:
    """The pooled prior (%) and what it is worth in kernel moves (``prior_weight``).

    The prior predicts one more setup's noise; its error (in log variance) is the setups'
    own spread tau^2 plus the median's error, ~pi/2 x the votes' variance / votes. tau^2 is
    the votes' variance less their estimation error (2 / dof each, method of moments). A
    tight consensus earns more weight, a scattered one less; below 3 votes there is no
    spread to read, and the fixed ``settings.prior_weight`` stands. ``alike``: the setups
    share one noise (tau^2 = 0, the bench's lab model), only the median's error counts.
    """
    votes = _votes(levels, settings.min_kernels)  # series of >= min_kernels kernels vote
    median, _ = _median_vote(votes)
    if median is None or len(votes) < 3:
        return median, settings.prior_weight
    logs = [2 * math.log(v) for v, _ in votes]
    centre = math.fsum(logs) / len(logs)
    spread = math.fsum((x - centre) ** 2 for x in logs) / (len(logs) - 1)
    error = math.fsum(2 / (settings.dof_per_difference * n) for _, n in votes) / len(votes)
    setups = 0.0 if alike else max(spread - error, 0.0)
    predictive = setups + math.pi / 2 * max(spread, error) / len(votes)
    return median, 2 / predictive / settings.dof_per_difference


@dataclass(frozen=True)
class Noise:
    """A series' noise model, relative to its typical level (%)."""

    within_pct: float | None  # one trial around its run's mean
    between_pct: float  # run-to-run (reboot to reboot), beyond the trials' own noise
    dof: float  # how well it is known: degrees of freedom of the estimate (of ``between``
    # when ``within_dof`` is set)
    typical_trials: int
    within_dof: float | None = None  # the trials' own estimate, when read from them apart

    def level_pct(self, trials: int) -> float:
        """sd of one run's mean of ``trials`` trials."""
        within = (self.within_pct or 0.0) ** 2 / max(trials, 1)
        return math.sqrt(self.between_pct**2 + within)


@dataclass(frozen=True)
class Verdict:
    change_pct: float
    p_value: float | None  # one-sided, in the direction the change went; None: no test
    method: str  # "welch" (the two samples' own spread) | "t-test" (the series' noise) |
    # "summary" (a report's stated spreads) | "threshold" (a fixed threshold) |
    # "untested" (one value a side, no noise known)
    significant: bool
    threshold_pct: float  # the size the change had to reach (inf: it could not be tested)
    confidence: float  # 0..1: 1 - p_value
    direction: str  # "regression" | "improvement" | "none"
    reason: str  # why it is (not) significant, for pages that show a verdict


@dataclass(frozen=True)
class _Test:
    se_pct: float  # standard error of the relative change (%)
    dof: float
    method: str


def _test(
    base: Sequence[float],
    cand: Sequence[float],
    noise: Noise | float | None,
    kernels: tuple[int, int],
    floor_pct: float,
) -> _Test | None:
    """The standard error of candidate mean - baseline mean (% of the baseline) and its dof.

    With the series' ``Noise``: the trials' noise over each side's trials plus the run-to-run
    noise over each side's kernels, the dof by Welch-Satterthwaite when the two parts are
    known apart. A float is a per-trial noise known well. Without either, the two samples'
    own spread (Welch's test), which needs two values a side. ``floor_pct``: the least
    per-trial noise (half the metric's quantum)."""
    n1, n2 = len(base), len(cand)
    if isinstance(noise, Noise):
        within = max(noise.within_pct or 0.0, floor_pct) if noise.within_pct else 0.0
        part_w = within**2 * (1 / n1 + 1 / n2)
        part_b = noise.between_pct**2 * (1 / kernels[0] + 1 / kernels[1])
        if part_w + part_b > 0:
            return _Test(math.sqrt(part_w + part_b), test_dof(noise, part_w, part_b), "t-test")
    elif isinstance(noise, float | int) and noise > 0:
        return _Test(max(float(noise), floor_pct) * math.sqrt(1 / n1 + 1 / n2), math.inf, "t-test")
    if n1 < 2 or n2 < 2:
        return None
    centre = abs(fmean(base))
    v1 = _sample_var(base) / n1
    v2 = _sample_var(cand) / n2
    floor_var = (floor_pct * centre / 100) ** 2 * (1 / n1 + 1 / n2)
    se = math.sqrt(max(v1 + v2, floor_var))
    if v1 + v2 > 0:
        dof = (v1 + v2) ** 2 / (v1**2 / (n1 - 1) + v2**2 / (n2 - 1))
    else:
        dof = float(n1 + n2 - 2)
    return _Test(se / centre * 100.0, max(dof, 1.0), "welch")


def test_dof(noise: Noise, part_w: float, part_b: float) -> float:
    """The dof of a standard error whose variance is ``part_w`` (the trials' noise) plus
    ``part_b`` (the run-to-run noise): Welch-Satterthwaite's when the two are known apart,
    else the one part's."""
    if noise.within_dof is None or part_w == 0:
        return noise.dof if part_b > 0 else (noise.within_dof or noise.dof)
    return (part_w + part_b) ** 2 / (
        part_w**2 / max(noise.within_dof, 0.5) + part_b**2 / max(noise.dof, 0.5)
    )


def _sample_var(values: Sequence[float]) -> float:
    centre = fmean(values)
    return math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1)


def judge(
    baseline_values: Sequence[float],
    candidate_values: Sequence[float],
    better: str,
    noise: Noise | float | None = None,
    resolution: float | None = None,
    settings: Settings | None = None,
    *,
    kernels: tuple[int, int] = (1, 1),
    alpha: float | None = None,
) -> Verdict:
    """Is candidate vs baseline a real change? The rule alerts and the compare page share.

    A one-sided t-test in the direction the change went, at ``alpha`` (default
    ``settings.alert_alpha``), whose change must also reach ``min_change_pct``: the standard
    error comes from the series' ``noise`` (``_test``; ``kernels``: how many kernels each
    side pools, for the run-to-run part), or from the two samples' own spread (Welch). With
    one value a side and no noise known there is no test: not significant, and the reason
    says what would make one ("run 3 trials"). A staff-set ``threshold_pct`` replaces the
    test: a change that large counts. ``resolution``: the metric's quantum; a difference of
    at most one quantum is never significant, and the noise is at least half a quantum.
    NaN trials are ignored; a zero baseline mean raises ValueError (no relative change).
    """
    settings = settings or Settings()
    check_better(better)
    base, cand = finite(baseline_values), finite(candidate_values)
    change = stats.relative_change_pct(base, cand)
    base_mean = fmean(base)
    floor_pct = resolution / 2 / abs(base_mean) * 100 if resolution else 0.0
    test = _test(base, cand, noise, kernels, floor_pct)
    untested = (
        "one value on a side and no noise known for this series: "
        "run at least 3 trials on each side to test it"
    )
    moved = abs(fmean(cand) - base_mean)
    return _verdict(change, moved, test, untested, better, resolution, settings, alpha)


@dataclass(frozen=True)
class Stated:
    """A side a report gives as a mean with its spread instead of its trials (the kernel
    test robot's ``676543 ± 3%``, an mmtests Amean with its Stddev row). ``sd`` is in the
    value's unit; ``runs`` is None when the report does not say how many runs it is over."""

    mean: float
    sd: float
    runs: int | None


def judge_stated(
    base: Stated,
    cand: Stated,
    better: str,
    resolution: float | None = None,
    settings: Settings | None = None,
    *,
    alpha: float | None = None,
) -> Verdict:
    """The rule of :func:`judge` for two stated summaries: Welch's test from the means,
    spreads and run counts (method "summary"). Without a run count on either side there is
    no test: a spread over an unknown number of runs gives no standard error."""
    settings = settings or Settings()
    check_better(better)
    if base.mean == 0:
        raise ValueError("baseline mean is 0: no relative change")
    change = (cand.mean - base.mean) / abs(base.mean) * 100.0
    test: _Test | None = None
    if base.runs and cand.runs and base.runs > 1 and cand.runs > 1:
        v1, v2 = base.sd**2 / base.runs, cand.sd**2 / cand.runs
        floor_pct = resolution / 2 / abs(base.mean) * 100 if resolution else 0.0
        floor_var = (floor_pct * abs(base.mean) / 100) ** 2 * (1 / base.runs + 1 / cand.runs)
        se = math.sqrt(max(v1 + v2, floor_var))
        if v1 + v2 > 0:
            dof = (v1 + v2) ** 2 / (v1**2 / (base.runs - 1) + v2**2 / (cand.runs - 1))
        else:
            dof = float(base.runs + cand.runs - 2)
        test = _Test(se / abs(base.mean) * 100.0, max(dof, 1.0), "summary")
    untested = (
        "the report states each side's spread but not how many runs it is over: "
        "no test from its summary"
    )
    moved = abs(cand.mean - base.mean)
    return _verdict(change, moved, test, untested, better, resolution, settings, alpha)


def _verdict(
    change: float,
    moved: float,
    test: _Test | None,
    untested: str,
    better: str,
    resolution: float | None,
    settings: Settings,
    alpha: float | None,
) -> Verdict:
    """The verdict on a relative ``change`` (``moved``: its size in the metric's unit) with
    the standard error ``test`` gives; ``untested`` says why there is none."""
    way = direction(change, better)
    tail = settings.alert_alpha if alpha is None else alpha
    fixed = usable_threshold_pct(settings.threshold_pct)
    p_value: float | None = None
    if test is not None and test.se_pct > 0:
        p_value = float(scipy_stats.t.sf(abs(change) / test.se_pct, max(test.dof, 0.5)))
    elif test is not None:
        p_value = 0.0 if change else 1.0
    if fixed is not None:
        limit, method = fixed, "threshold"
        passed = abs(change) >= limit
        reason = f"a fixed threshold: {limit:.3g} % needed"
    elif test is None:
        limit, method, passed = math.inf, "untested", False
        reason = untested
    else:
        limit = max(settings.min_change_pct, stats.critical_t(tail, test.dof) * test.se_pct)
        method = test.method
        passed = abs(change) >= limit
        reason = f"p = {p_value:.2g}, one-sided at alpha {tail:.2g}"
        if method == "summary":
            reason += ", from the report's stated spread"
    confidence = 1.0 - p_value if p_value is not None else 0.0
    if resolution is not None and resolution > 0 and moved <= resolution * (1 + 1e-9):
        passed, reason = False, f"within the metric's resolution ({resolution:g})"
    if change == 0 or better == "none":
        passed, reason = False, "no change" if change == 0 else "metric has no better direction"
    return Verdict(change, p_value, method, passed, limit, confidence, way, reason)


# --- the metric's quantum, as its values show it ---

RESOLUTION_VECTOR_FROM = 64  # values: below this the plain loop is as fast


def resolution_of(values: Iterable[float], *, max_decimals: int = 6) -> float | None:
    """The metric's quantum as the values show it: 0.03 and 0.04 s -> 0.01; None if finer.

    The number of decimals every value is written with (``time`` prints 10 ms steps, a
    profile whole ticks). Values needing more than ``max_decimals`` decimals are continuous.
    """
    floats = isinstance(values, Floats)  # floats with their array
    found = values if isinstance(values, Floats) else list(values)
    if len(found) >= RESOLUTION_VECTOR_FROM and (floats or set(map(type, found)) == {float}):
        decimals = _decimals_vector(found, max_decimals)
    else:
        decimals = decimals_loop(found, 0, max_decimals)
    return None if decimals is None else 10.0**-decimals


def _fits(value: float, decimals: int, max_decimals: int) -> int | None:
    """The fewest decimals >= ``decimals`` that write ``value`` (None: more than the max)."""
    for d in range(decimals, max_decimals + 1):
        if abs(round(value, d) - value) <= 1e-9 * max(1.0, abs(value)):
            return d
    return None


def decimals_loop(values: Iterable[float], decimals: int, max_decimals: int) -> int | None:
    for value in values:
        found = _fits(value, decimals, max_decimals)
        if found is None:
            return None
        decimals = found
    return decimals


def _decimals_vector(values: Sequence[float], max_decimals: int) -> int | None:
    """``decimals_loop`` over floats: the values that surely fit the current decimals are
    skipped a block at a time; the first one that may not is tested exactly."""
    array = values.array if isinstance(values, Floats) else np.asarray(values, dtype=float)
    sure = 0.5e-9 * np.maximum(1.0, np.abs(array))  # half the exact test's tolerance
    # the first value is where the loop starts: tested exactly at once (a pass at 0 decimals
    # would only find it, unless every value is whole)
    first = _fits(values[0], 0, max_decimals)
    if first is None:
        return None
    decimals, at = first, 1
    while at < len(values):
        rest = array[at:]
        with np.errstate(all="ignore"):  # overflow or NaN: not sure, tested exactly
            error = np.abs(np.round(rest, decimals) - rest)
        unsure = np.flatnonzero(~(error <= sure[at:]))
        if not unsure.size:
            break
        at += int(unsure[0])
        found = _fits(values[at], decimals, max_decimals)
        if found is None:
            return None
        decimals, at = found, at + 1
    return decimals

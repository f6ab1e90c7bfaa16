"""Regression detection over one series: the stages a check runs, in order, and nothing else.

``check`` is what the service asks of a series for an upload's runs. It reads the series
once (``SeriesRead``: the points in kernel order, ``points``; a long series' analysis,
``long_series``; the trials' noise and a short series' scan, ``noise`` and ``short_scan``)
and hands each test what it needs: the candidates' own changes (``own_changes``, what
``detect`` answers: A/B tests, ``ab_compare``; the steps of a short or a long series), the stock
series' confirmed steps (as ``change_points`` gives them) and its drift (``drift``). Each
stage only calls down. ``pair_context`` gives the compare page the same view of a pair. The
test itself is ``policy.judge``. Pure, no Django; how it works and how well:
docs/detector.md.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from perfdb.detector import policy
from perfdb.detector.ab_compare import ab_change, baseline_runs
from perfdb.detector.drift import drift_changes
from perfdb.detector.long_series import Series, Steps, analysed, analysed_for_check, series_steps
from perfdb.detector.noise import trial_noise
from perfdb.detector.points import (
    Change,
    Columns,
    Ordered,
    Scanned,
    columns,
    kernel_of,
    ordered,
    stock_by_kernel,
    stock_kernels,
)
from perfdb.detector.points import Point as Point  # named detection.Point by the compare page
from perfdb.detector.policy import Settings as Settings  # and detection.Settings by tests
from perfdb.detector.short_scan import ShortScan, segment_spread, short_scan
from perfdb.detector.stats import Floats

DEFAULTS = Settings()


@dataclass(frozen=True)
class SeriesRead:
    """A series read once for every question a check asks of it: its usable points in
    kernel order, a long series' analysis or a short one's scan (when a stock run is asked
    about), and the noise its A/B tests are judged with."""

    usable: Ordered
    better: str
    settings: Settings
    long: Series | None
    steps: Steps | None  # a long series' steps as changes
    short: ShortScan | None
    noise: policy.Noise | None  # the A/B tests': a long series' model, else the trials'

    @property
    def scanned(self) -> Scanned | None:
        """The stock kernels as the scan read them, for the drift test."""
        if self.long is not None:
            return self.long.scanned
        return None if self.short is None else self.short.scanned


def read(
    points: Sequence[Point],
    better: str,
    settings: Settings,
    stock: bool,
    of: tuple[Columns, Floats] | None = None,
) -> SeriesRead:
    """The series read once for its tests: its usable points in kernel order, its stock
    kernels, and a long series' analysis (``long_series``) or, below ``short_kernels`` stock
    kernels, the trials' noise and, when a stock run is asked about (``stock``), the short
    scan of those kernels. ``of``: the usable points' ``columns`` and single trials, when the
    caller read them so; a long series' noise is its model's."""
    usable = ordered(points)
    found, singles = of if of is not None else (columns(usable), None)
    kernels = stock_kernels(usable, found, singles)
    series = analysed_for_check(usable, kernels, found[3], settings, singles)
    if series is not None:
        steps = series_steps(series, better) if stock else None
        return SeriesRead(usable, better, settings, series, steps, None, series.noise)
    trials = trial_noise(usable, settings)
    noise = trials.noise(settings)
    short = short_scan(kernels, better, settings, trials) if stock else None
    return SeriesRead(usable, better, settings, None, None, short, noise)


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

    The candidates' own changes (``detect``), each against its pinned baseline
    (``pinned_run_id``, if still in the series) or the one its bundle names (``declared``:
    run -> baseline run), and every confirmed step of the stock series when a candidate is a
    stock run: a step that the upload's kernel confirms lands on an earlier upload's run and
    is still raised (or updated); and a drift of the stock series (``drift.drift_changes``,
    method "drift") when the newest stock kernel is a candidate. ``usable``: the points as
    ``ordered`` gives them, when the caller read them so; ``columns``: their
    ``points.columns`` and single trials, likewise. The series is read once
    (``SeriesRead``) for every question."""
    policy.check_better(better)
    if better == "none":
        return []
    wanted = set(candidates)
    stock_candidate = any(not p.patches for p in points if p.run_id in wanted)
    series = read(points if usable is None else usable, better, settings, stock_candidate, columns)
    usable = series.usable
    declared = declared or {}
    asked = {r: declared[r] for r in sorted(candidates) if r in declared}
    in_series = {p.run_id for p in points} if pinned_run_id is not None or asked else set()
    pinned = pinned_run_id if pinned_run_id in in_series else None
    # (baseline, runs) asked: the pinned one for most, and the one each bundle declares
    asked_with = [(pinned, wanted - asked.keys())] + [
        (baseline_id if baseline_id in in_series else pinned, {run_id})
        for run_id, baseline_id in asked.items()
    ]
    changes = [c for baseline, runs in asked_with for c in own_changes(series, baseline, runs)]
    if series.steps is not None:  # a long series, and a stock run among the candidates
        # the candidates' own changes hold the stock series' confirmed steps, unless each
        # stock candidate was judged against a pinned or declared baseline
        seen = {(c.candidate_run_id, c.method) for c in changes}
        changes += [s for s in series.steps.confirmed if (s.candidate_run_id, s.method) not in seen]
    scanned = series.scanned  # the stock kernels as the scan read them
    if stock_candidate and scanned is not None:
        changes += drift_changes(usable, scanned, better, settings, wanted)
    return changes


def own_changes(
    series: SeriesRead, pinned_run_id: int | None, wanted: set[int] | None
) -> list[Change]:
    """The wanted runs' own changes (every run's when None), in kernel order: an A/B test
    for a patched build or against the pinned baseline; a stock run's kernel by the short
    scan or the step scan."""
    usable = series.usable
    asked = [p for p in usable if wanted is None or p.run_id in wanted]
    # the wanted stock runs, for the scans
    stock = {p.run_id for p in asked if not p.patches and pinned_run_id is None}
    short = series.short
    scanned = short_steps(short, stock) if stock and short is not None else None
    changes: list[Change] = []
    for point in asked:
        if point.run_id in stock:
            continue
        change = ab_change(
            usable, point, series.better, series.settings, pinned_run_id, series.noise
        )
        if change is not None:
            changes.append(change)
    if scanned is not None:
        changes += scanned
    elif stock and series.steps is not None:
        # a long series' confirmed steps, and its pending one when its kernel is asked about
        changes += series.steps.confirmed
        pending = series.steps.pending
        if pending is not None and not series.steps.pending_runs.isdisjoint(stock):
            changes.append(pending)
    if len(changes) < 2:
        return changes
    position = {p.run_id: at for at, p in enumerate(usable)}  # kernel order: one point a run
    return sorted(changes, key=lambda c: position[c.candidate_run_id])


def short_steps(scan: ShortScan, wanted_runs: Collection[int]) -> list[Change]:
    """The short scan's steps a check reports for the wanted runs: those on their kernels,
    and on the kernel before each (the one a new kernel confirms or clears)."""
    kernels = scan.kernels
    if len(kernels) < 2:
        return []
    standing = [change for _, _, change in scan.standing]  # seen at the newest kernel
    wanted = {i for i, k in enumerate(kernels) if not set(k.run_ids).isdisjoint(wanted_runs)}
    wanted |= {i - 1 for i in wanted}
    steps = [change for at, found, change in scan.steps if at in wanted or found in wanted]
    return steps + (standing if len(kernels) - 1 in wanted else [])


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
    wanted = None if candidates is None else set(candidates)
    stock = pinned_run_id is None and any(
        not p.patches and (wanted is None or p.run_id in wanted) for p in usable
    )
    return own_changes(read(usable, better, settings, stock), pinned_run_id, wanted)


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
        scan = short_scan(stock_by_kernel(usable), better, settings, trials)
        kernels = scan.kernels
        names = [k.kernel for k in kernels]
        at = names.index(kernel_of(first))
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
    return [] if series is None else list(series_steps(series, better).confirmed)

"""A short series read kernel by kernel, as its kernels arrived (``short_scan``).

Below ``Settings.short_kernels`` stock kernels each kernel is judged against its level so
far (the kernels since the last step, spikes left out) with the A/B test's rules
(``policy.judge``, ``points.kept_untested``) and the series' trial noise plus the level's
own spread (``noise``): a step, a return, a spike, or a move still pending.
``stock_scan`` reads a series once for a check; ``short_changes`` are the steps it reports,
``ShortScan.scanned`` the levels the drift test keeps to. docs/detector.md, "Short series",
tells how it decides.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from statistics import fmean

from perfdb.detector import policy
from perfdb.detector.noise import TrialNoise, segment_spread
from perfdb.detector.points import (
    Change,
    KernelRuns,
    Ordered,
    Scanned,
    change_from,
    kept_untested,
    stock_by_kernel,
)
from perfdb.detector.policy import Settings


@dataclass(frozen=True)
class Tested:
    """How the short scan tested one kernel as it arrived: against which kernels of its
    level, at which alpha, with which noise (the spikes seen so far included)."""

    segment: tuple[int, ...]  # kernel indexes
    alpha: float
    noise: TrialNoise


@dataclass(frozen=True)
class ShortScan:
    """A short stock series read kernel by kernel: its steps, the kernels left out as
    spikes or excursions, and how each kernel was tested."""

    kernels: Sequence[KernelRuns]  # the stock kernels read, in kernel order
    steps: tuple[tuple[int, int, Change], ...]  # (kernel index, found at kernel, change)
    outliers: frozenset[int]  # kernel indexes
    returns: frozenset[int]  # kernels back at the level before a spike or an excursion
    tested: tuple[Tested | None, ...]  # by kernel index; None for the first kernel
    # One trial a kernel: moves the kernels after them still share at the newest kernel,
    # significant at ``alert_alpha`` but not yet at the level's budget: pending, shown with
    # what would confirm them, never emailed, and no break in the level (nor for the drift).
    standing: tuple[tuple[int, int, Change], ...] = ()

    @property
    def scanned(self) -> Scanned:
        """Where the scan's levels start (its steps) and the kernels it left out."""
        return Scanned(self.kernels, tuple(at for at, _, _ in self.steps), self.outliers)


# With one trial a kernel, a step from a level of one kernel is tested at this share of the
# kernel's alpha (short_scan).
ONE_VALUE_LEVEL_SHARE = 0.1


def kernel_alpha(settings: Settings, index: int, one_trial: bool = False) -> float:
    """The one-sided alpha the ``index``-th kernel of a level is tested at: the budget spent
    over its kernels, ``alert_alpha`` / k^2, which sums to at most 1.64 x ``alert_alpha``
    however long the level lasts, and leaves an A/B (k = 1) the whole of it. A step starts
    the count again: the new level is a new comparison, and a clean series never resets.
    With one trial a kernel a move also waits for the next kernel, which spikes rarely
    pass, and its noise is known from few kernels: ``alert_alpha`` / k^1.5."""
    power = 1.5 if one_trial else 2.0
    return float(settings.alert_alpha / max(index, 1) ** power)


def short_scan(
    kernels: Sequence[KernelRuns], better: str, settings: Settings, noise: TrialNoise
) -> ShortScan:
    """Each kernel against the kernels of its level so far (the segment since the last
    step, spikes left out), as it arrived.

    With trials, a significant move is a step at once while the level before it has fewer
    than ``arrival_kernels`` kernels: the test is on the trials, and an A/B of two stock
    kernels is judged with the upload that brings the second one. After a longer level the
    kernels that follow decide, as with one trial. A step
    too small for its first kernel is found once later kernels agree (``_earlier_step``;
    the kernel's alpha is shared half and half between the two tests). A kernel back near
    the level before a step of at most ``excursion_kernels`` kernels ago (and not a move
    from it) is a return: the visit's kernels become outliers, the old level goes on, and
    no second alert is raised. With one trial a kernel, a move (or, with no noise known
    yet, a change of ``default_threshold_pct``) is pending until the kernels after it that
    stay at its level make it significant; if the next one comes back, the kernel was a
    spike, and if a later one does before the move is significant, it was noise.
    """
    one_trial = noise.within_pct is None
    steps: list[tuple[int, int, Change]] = []
    outliers: set[int] = set()
    returns: set[int] = set()
    tested: list[Tested | None] = [None]
    segment: list[int] = [0]
    before: list[int] = []
    last = -1
    spikes: list[tuple[float, float]] = []
    standing: dict[int, tuple[int, Change]] = {}  # step kernel: (found at, change)
    measured = noise
    for at in range(1, len(kernels)):
        if len(spikes) >= 2:  # one bad run is an outlier; two say the runs wander
            noise = replace(measured, sources=(*measured.sources, *spikes))
        alpha = kernel_alpha(settings, at - segment[0], one_trial)  # each level anew
        share = 0.5 if len(segment) >= 2 else 0.0  # no cut inside a one-kernel level
        # With one trial a kernel an arrival is never confirmed by itself: its test only makes
        # the kernel a pending step, which the kernels that stay confirm at the kernel's alpha.
        arrival = (settings.alert_alpha if one_trial else alpha) * (1 - share)
        tested.append(Tested(tuple(segment), arrival, noise))
        verdict = _judge_kernels(kernels, segment, [at], better, settings, noise, arrival)
        untested = verdict is not None and kept_untested(verdict, settings)
        if verdict is None or not (verdict.significant or untested):
            found = _earlier_step(kernels, segment, at, better, settings, noise, alpha * share)
            if found is None:
                if one_trial:
                    _note_standing(kernels, segment, at, better, settings, noise, standing)
                segment.append(at)
                continue
            cut, step = found
            first = segment[cut]
            change = change_from(
                _runs(kernels, segment[:cut]), kernels[first].run_ids[0], step, "confirmed"
            )
            steps.append((first, at, change))
            before, segment, last = segment[:cut], [*segment[cut:], at], first
            continue
        recent = bool(before) and at - last <= settings.excursion_kernels
        if recent and _returns(kernels, before, segment, at, better, settings, noise, alpha):
            if len(segment) == 1:  # a spike: one kernel's move is run-to-run noise
                spikes.append(_spike_move(noise, kernels, before, segment[0]))
            outliers.update(segment)
            returns.add(at)
            segment, before, last = [*before, at], [], -1
            continue
        status, seen_at = "confirmed", at
        if one_trial or len(segment) >= settings.arrival_kernels:
            old = _mean_of(kernels, segment)
            staying = _staying(kernels, at, old)
            if not staying and at + 1 < len(kernels):
                spikes.append(_spike_move(noise, kernels, segment, at))
                outliers.add(at)  # a spike: the next kernel came back
                returns.add(at + 1)
                continue
            again = None
            # One value is no level: it may be the bad run, unless three kernels at the new
            # level give the noise that tells a bad run from a step. Those kernels are the
            # ones that stayed, chosen by their closeness (a narrower spread than chance
            # gives), so that test is held to a tenth of the kernel's alpha.
            if staying and (len(segment) >= 2 or len(staying) >= 2):
                level = [at, *staying]
                held = alpha if len(segment) >= 2 else alpha * ONE_VALUE_LEVEL_SHARE
                again = _judge_kernels(kernels, segment, level, better, settings, noise, held)
            if again is not None and again.significant and again.direction == verdict.direction:
                verdict, seen_at = again, staying[-1]
            elif staying and staying[-1] + 1 < len(kernels):
                segment.append(at)  # the level went back after all: no step, noise
                continue
            else:  # the newest kernels: the next one decides
                status = "unconfirmed"
                # Kernels that stayed up to the newest keep the move pending, seen there:
                # evidence still gathering, not a move the series came back from.
                seen_at = staying[-1] if staying else at
                if untested:
                    verdict = replace(verdict, method="threshold")
        change = change_from(_runs(kernels, segment), kernels[at].run_ids[0], verdict, status)
        steps.append((at, seen_at, change))
        before, segment, last = segment, [at], at
    newest, stepped = len(kernels) - 1, {at for at, _, _ in steps}
    still = tuple(
        (at, found, change)
        for at, (found, change) in sorted(standing.items())
        if found == newest and at not in stepped
    )
    return ShortScan(
        kernels, tuple(steps), frozenset(outliers), frozenset(returns), tuple(tested), still
    )


def _note_standing(
    kernels: Sequence[KernelRuns],
    segment: Sequence[int],
    at: int,
    better: str,
    settings: Settings,
    noise: TrialNoise,
    standing: dict[int, tuple[int, Change]],
) -> None:
    """With one trial a kernel, a move from the level that the kernels after it share (at
    least two at the new level, the new kernel among them), significant at ``alert_alpha``
    shared over the cuts but not at the level's budget for its kernel: kept as pending, so a
    drop of 4/5 that two kernels show is on the chart with what would confirm it, not
    silent. It never breaks the level: the confirmed steps are the scan's alone."""
    found = _earlier_step(kernels, segment, at, better, settings, noise, settings.alert_alpha)
    if found is None:
        return
    cut, verdict = found
    first = segment[cut]
    change = change_from(
        _runs(kernels, segment[:cut]), kernels[first].run_ids[0], verdict, "unconfirmed"
    )
    standing[first] = (at, change)


def _spike_move(
    noise: TrialNoise, kernels: Sequence[KernelRuns], level: Sequence[int], spike: int
) -> tuple[float, float]:
    """A spike's move as run-to-run evidence (variance %^2, one dof): a kernel that moved and
    came back showed how far a run strays from its level, beyond its trials. From the second
    spike on, a lab whose kernels wander from boot to boot is read as noisy, not as a run of
    steps and returns."""
    centre = _mean_of(kernels, level)
    moved = (kernels[spike].level - centre) / centre * 100 if centre else 0.0
    trials = len(kernels[spike].values)
    share = (noise.within_pct or 0.0) ** 2 / trials
    return (max(moved**2 - share, 0.0), 1.0)


def _runs(kernels: Sequence[KernelRuns], indexes: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted(r for i in indexes for r in kernels[i].run_ids))


def _returns(
    kernels: Sequence[KernelRuns],
    before: Sequence[int],
    visit: Sequence[int],
    at: int,
    better: str,
    settings: Settings,
    noise: TrialNoise,
    alpha: float,
) -> bool:
    """Is kernel ``at`` back at the level before a visit: nearer it than the visit's level,
    and no move from it?"""
    back = _judge_kernels(kernels, before, [at], better, settings, noise, alpha)
    if back is not None and back.significant:
        return False
    level = kernels[at].level
    return _nearer_new(level, _mean_of(kernels, visit), _mean_of(kernels, before))


def _staying(kernels: Sequence[KernelRuns], at: int, old: float) -> list[int]:
    """The kernels after ``at`` that stay nearer its level than the old one, up to the first
    that does not: with one trial a kernel, what may confirm ``at``'s move."""
    staying = []
    for later in range(at + 1, len(kernels)):
        if not _nearer_new(kernels[later].level, old, kernels[at].level):
            break
        staying.append(later)
    return staying


def _earlier_step(
    kernels: Sequence[KernelRuns],
    segment: Sequence[int],
    at: int,
    better: str,
    settings: Settings,
    noise: TrialNoise,
    alpha: float,
) -> tuple[int, policy.Verdict] | None:
    """A step inside the level so far that the new kernel now shows: the cut of the segment
    (kernels before it against the kernels from it to the new one, at least two) whose
    change is the most significant, at ``alpha`` shared over the cuts, and whose kernels
    after the cut agree with the new one (``homogeneity_alpha``). A step too small to
    see on its first kernel is seen once the kernels after it agree, and the level before a
    missed step is not averaged with the level after it."""
    cuts = range(1, len(segment))
    if not cuts:
        return None
    shared = alpha / len(cuts)
    best: tuple[int, policy.Verdict] | None = None
    for cut in cuts:
        verdict = _judge_kernels(
            kernels, segment[:cut], [*segment[cut:], at], better, settings, noise, shared
        )
        if verdict is None or not verdict.significant:
            continue
        agree = _judge_kernels(
            kernels, segment[cut:], [at], better, settings, noise, settings.homogeneity_alpha
        )
        if agree is not None and agree.significant:
            continue  # the new kernel is a level of its own: the cut would misplace a step
        if best is None or (verdict.p_value or 0.0) < (best[1].p_value or 0.0):
            best = (cut, verdict)
    return best


def _mean_of(kernels: Sequence[KernelRuns], indexes: Sequence[int]) -> float:
    return fmean([v for i in indexes for v in kernels[i].values])


def _judge_kernels(
    kernels: Sequence[KernelRuns],
    base: Sequence[int],
    candidate: Sequence[int],
    better: str,
    settings: Settings,
    noise: TrialNoise,
    alpha: float,
) -> policy.Verdict | None:
    baseline = [v for i in base for v in kernels[i].values]
    values = [v for i in candidate for v in kernels[i].values]
    if fmean(baseline) == 0:
        return None
    spread = segment_spread(kernels, base, noise.within_pct)
    if len(candidate) >= 2:
        spread += segment_spread(kernels, candidate, noise.within_pct)
    model = noise.noise(settings, spread)
    return policy.judge(
        baseline,
        values,
        better,
        model,
        settings.resolution or policy.resolution_of([*baseline, *values]),
        settings,
        kernels=(len(base), len(candidate)),
        alpha=alpha,
    )


def _nearer_new(level: float, old: float, new: float) -> bool:
    """Is a kernel's level at least as near the new level as the old one?"""
    return abs(level - new) <= abs(level - old)


def stock_scan(usable: Ordered, better: str, settings: Settings, noise: TrialNoise) -> ShortScan:
    """The ``short_scan`` of the series' stock kernels (``stock_by_kernel``); ``noise``: the
    series' ``trial_noise``."""
    return short_scan(stock_by_kernel(usable), better, settings, noise)


def short_changes(scan: ShortScan, wanted_runs: Collection[int]) -> list[Change]:
    """The short scan's steps on the kernels of the wanted runs, and on the kernel before
    each (the one a new kernel confirms or clears)."""
    kernels = scan.kernels
    if len(kernels) < 2:
        return []
    standing = [change for _, _, change in scan.standing]  # seen at the newest kernel
    wanted = {i for i, k in enumerate(kernels) if not set(k.run_ids).isdisjoint(wanted_runs)}
    wanted |= {i - 1 for i in wanted}
    steps = [change for at, found, change in scan.steps if at in wanted or found in wanted]
    return steps + (standing if len(kernels) - 1 in wanted else [])

"""A short series read kernel by kernel, as its kernels arrived (``short_scan``).

Below ``Settings.short_kernels`` stock kernels each kernel is judged against its level so
far (the kernels since the last step, spikes left out) with the A/B test's rules
(``policy.judge``, ``ab_compare.kept_untested``) and the series' trial noise plus the
level's own spread (``segment_spread``): a step, a return, a spike, or a move still pending.
A check scans a series' stock kernels once, as it read them; ``ShortScan.scanned`` gives
the levels the drift test keeps to. docs/detector.md, "Short series", tells how it decides.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from statistics import fmean

from perfdb.detector import policy
from perfdb.detector.ab_compare import change_from, kept_untested
from perfdb.detector.noise import TrialNoise
from perfdb.detector.points import Change, KernelRuns, Scanned
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
    kernels that follow decide, as with one trial. A step too small for its first kernel is
    found once later kernels agree (``earlier_step``; the kernel's alpha is shared half and
    half between the two tests). A kernel back near
    the level before a step of at most ``excursion_kernels`` kernels ago (and not a move
    from it) is a return: the visit's kernels become outliers, the old level goes on, and
    no second alert is raised. With one trial a kernel, a move (or, with no noise known
    yet, a change of ``default_threshold_pct``) is pending until the kernels after it that
    stay at its level make it significant; if the next one comes back, the kernel was a
    spike, and if a later one does before the move is significant, it was noise. Each step
    of the reading is a method of ``_Reading``: ``read``, then ``no_move``, ``came_back`` or
    ``moved`` (and ``after_move``).
    """
    reading = _Reading(kernels, better, settings, noise)
    for at in range(1, len(kernels)):
        reading.read(at)
    return reading.scan()


@dataclass
class _Reading:
    """``short_scan`` under way: the level so far (``segment``: the kernels since the last
    step, outliers left out), the level before the last step (``before``, for a return) and
    what the kernels read so far showed. Each step of the reading is a method."""

    kernels: Sequence[KernelRuns]
    better: str
    settings: Settings
    measured: TrialNoise  # the series' trial noise; from the second spike on, spikes join it
    segment: list[int] = field(default_factory=lambda: [0])
    before: list[int] = field(default_factory=list)
    last: int = -1  # the last step's kernel: a return is back from it
    spikes: list[tuple[float, float]] = field(default_factory=list)
    steps: list[tuple[int, int, Change]] = field(default_factory=list)
    outliers: set[int] = field(default_factory=set)
    returns: set[int] = field(default_factory=set)
    tested: list[Tested | None] = field(default_factory=lambda: [None])
    standing: dict[int, tuple[int, Change]] = field(default_factory=dict)  # kernel: (at, change)

    def read(self, at: int) -> None:
        """Kernel ``at`` against the level so far, as it arrived: no move (``no_move``), a
        return (``came_back``) or a move (``moved``)."""
        settings, one_trial = self.settings, self.measured.within_pct is None
        noise = self.measured
        if len(self.spikes) >= 2:  # one bad run is an outlier; two say the runs wander
            noise = replace(self.measured, sources=(*self.measured.sources, *self.spikes))
        alpha = kernel_alpha(settings, at - self.segment[0], one_trial)  # each level anew
        share = 0.5 if len(self.segment) >= 2 else 0.0  # no cut inside a one-kernel level
        # With one trial a kernel an arrival is never confirmed by itself: its test only makes
        # the kernel a pending step, which the kernels that stay confirm at the kernel's alpha.
        arrival = (settings.alert_alpha if one_trial else alpha) * (1 - share)
        self.tested.append(Tested(tuple(self.segment), arrival, noise))
        verdict = self.judge(self.segment, [at], noise, arrival)
        untested = verdict is not None and kept_untested(verdict, settings)
        if verdict is None or not (verdict.significant or untested):
            self.no_move(at, noise, alpha * share)
        elif not self.came_back(at, noise, alpha):
            self.moved(at, noise, alpha, verdict, untested)

    def no_move(self, at: int, noise: TrialNoise, alpha: float) -> None:
        """No move on arrival: a step inside the level that the new kernel now shows
        (``earlier_step``, at ``alpha``), else the kernel joins the level. With one trial a
        kernel, a move from the level that the kernels after it share (at least two at the
        new level, the new kernel among them), significant at ``alert_alpha`` shared over
        the cuts but not at the level's budget, is kept pending (``standing``): a drop of 4/5
        that two kernels show is on the chart with what would confirm it, not silent. It
        never breaks the level: the confirmed steps are the scan's alone."""
        segment = self.segment
        found = self.earlier_step(at, noise, alpha)
        if found is not None:
            cut, step = found
            first = segment[cut]
            self.steps.append((first, at, self.change(segment[:cut], first, step, "confirmed")))
            self.before, self.segment, self.last = segment[:cut], [*segment[cut:], at], first
            return
        if self.measured.within_pct is None:
            standing = self.earlier_step(at, noise, self.settings.alert_alpha)
            if standing is not None:
                cut, move = standing
                first = segment[cut]
                self.standing[first] = (at, self.change(segment[:cut], first, move, "unconfirmed"))
        segment.append(at)

    def came_back(self, at: int, noise: TrialNoise, alpha: float) -> bool:
        """Is kernel ``at`` back at the level before a step of at most ``excursion_kernels``
        ago: nearer it than the visit's level, and no move from it? Then the visit's kernels
        are outliers (one kernel's move is run-to-run noise: a spike) and the old level goes
        on, with no second alert."""
        before, visit = self.before, self.segment
        if not before or at - self.last > self.settings.excursion_kernels:
            return False
        back = self.judge(before, [at], noise, alpha)
        if back is not None and back.significant:
            return False
        if not _nearer_new(self.kernels[at].level, self._mean(visit), self._mean(before)):
            return False
        if len(visit) == 1:  # a spike: one kernel's move is run-to-run noise
            self.spikes.append(_spike_move(noise, self.kernels, before, visit[0]))
        self.outliers.update(visit)
        self.returns.add(at)
        self.segment, self.before, self.last = [*before, at], [], -1
        return True

    def moved(
        self, at: int, noise: TrialNoise, alpha: float, verdict: policy.Verdict, untested: bool
    ) -> None:
        """A move on arrival: a step, confirmed at once after a level of fewer than
        ``arrival_kernels`` kernels with trials; else as the kernels after it say
        (``after_move``). A step starts a new level."""
        status, seen_at = "confirmed", at
        one_trial = self.measured.within_pct is None
        if one_trial or len(self.segment) >= self.settings.arrival_kernels:
            decided = self.after_move(at, noise, alpha, verdict, untested)
            if decided is None:
                return
            verdict, status, seen_at = decided
        self.steps.append((at, seen_at, self.change(self.segment, at, verdict, status)))
        self.before, self.segment, self.last = self.segment, [at], at

    def after_move(
        self, at: int, noise: TrialNoise, alpha: float, verdict: policy.Verdict, untested: bool
    ) -> tuple[policy.Verdict, str, int] | None:
        """What the kernels after a move say: a spike if the next one came back, noise if a
        later one did first (None: no step), a step confirmed once those that stayed make it
        significant (the verdict, its status, the kernel it was seen at), else pending."""
        kernels, segment = self.kernels, self.segment
        staying = _staying(kernels, at, self._mean(segment))
        if not staying and at + 1 < len(kernels):
            self.spikes.append(_spike_move(noise, kernels, segment, at))
            self.outliers.add(at)  # a spike: the next kernel came back
            self.returns.add(at + 1)
            return None
        again = None
        # One value is no level: it may be the bad run, unless three kernels at the new
        # level give the noise that tells a bad run from a step. Those kernels are the
        # ones that stayed, chosen by their closeness (a narrower spread than chance
        # gives), so that test is held to a tenth of the kernel's alpha.
        if staying and (len(segment) >= 2 or len(staying) >= 2):
            held = alpha if len(segment) >= 2 else alpha * ONE_VALUE_LEVEL_SHARE
            again = self.judge(segment, [at, *staying], noise, held)
        if again is not None and again.significant and again.direction == verdict.direction:
            return again, "confirmed", staying[-1]
        if staying and staying[-1] + 1 < len(kernels):
            segment.append(at)  # the level went back after all: no step, noise
            return None
        # The newest kernels: the next one decides. Kernels that stayed up to the newest
        # keep the move pending, seen there: evidence still gathering, not a move the
        # series came back from.
        pending = replace(verdict, method="threshold") if untested else verdict
        return pending, "unconfirmed", staying[-1] if staying else at

    def earlier_step(
        self, at: int, noise: TrialNoise, alpha: float
    ) -> tuple[int, policy.Verdict] | None:
        """A step inside the level so far that the new kernel now shows: the cut of the
        segment (kernels before it against the kernels from it to the new one, at least two)
        whose change is the most significant, at ``alpha`` shared over the cuts, and whose
        kernels after the cut agree with the new one (``homogeneity_alpha``). A step too
        small to see on its first kernel is seen once the kernels after it agree, and the
        level before a missed step is not averaged with the level after it."""
        segment, agreeing = self.segment, self.settings.homogeneity_alpha
        cuts = range(1, len(segment))
        if not cuts:
            return None
        shared = alpha / len(cuts)
        best: tuple[int, policy.Verdict] | None = None
        for cut in cuts:
            verdict = self.judge(segment[:cut], [*segment[cut:], at], noise, shared)
            if verdict is None or not verdict.significant:
                continue
            agree = self.judge(segment[cut:], [at], noise, agreeing)
            if agree is not None and agree.significant:
                continue  # the new kernel is a level of its own: the cut would misplace a step
            if best is None or (verdict.p_value or 0.0) < (best[1].p_value or 0.0):
                best = (cut, verdict)
        return best

    def judge(
        self, base: Sequence[int], candidate: Sequence[int], noise: TrialNoise, alpha: float
    ) -> policy.Verdict | None:
        """``policy.judge`` of kernels against kernels, with the trials' noise plus the
        spread of each side's kernels (``segment_spread``)."""
        kernels, settings = self.kernels, self.settings
        baseline = [v for i in base for v in kernels[i].values]
        values = [v for i in candidate for v in kernels[i].values]
        if fmean(baseline) == 0:
            return None
        spread = segment_spread(kernels, base, noise.within_pct)
        if len(candidate) >= 2:
            spread += segment_spread(kernels, candidate, noise.within_pct)
        return policy.judge(
            baseline,
            values,
            self.better,
            noise.noise(settings, spread),
            settings.resolution or policy.resolution_of([*baseline, *values]),
            settings,
            kernels=(len(base), len(candidate)),
            alpha=alpha,
        )

    def change(
        self, base: Sequence[int], kernel: int, verdict: policy.Verdict, status: str
    ) -> Change:
        """The change of ``kernel``'s first run against the runs of the ``base`` kernels."""
        runs = tuple(sorted(r for i in base for r in self.kernels[i].run_ids))
        return change_from(runs, self.kernels[kernel].run_ids[0], verdict, status)

    def _mean(self, indexes: Sequence[int]) -> float:
        return fmean([v for i in indexes for v in self.kernels[i].values])

    def scan(self) -> ShortScan:
        """What the reading found; the moves still standing at the newest kernel."""
        newest, stepped = len(self.kernels) - 1, {at for at, _, _ in self.steps}
        still = tuple(
            (at, found, change)
            for at, (found, change) in sorted(self.standing.items())
            if found == newest and at not in stepped
        )
        return ShortScan(
            self.kernels,
            tuple(self.steps),
            frozenset(self.outliers),
            frozenset(self.returns),
            tuple(self.tested),
            still,
        )


def _spike_move(
    noise: TrialNoise, kernels: Sequence[KernelRuns], level: Sequence[int], spike: int
) -> tuple[float, float]:
    """A spike's move as run-to-run evidence (variance %^2, one dof): a kernel that moved and
    came back showed how far a run strays from its level, beyond its trials. From the second
    spike on, a lab whose kernels wander from boot to boot is read as noisy, not as a run of
    steps and returns."""
    level_values = [v for i in level for v in kernels[i].values]
    centre = fmean(level_values)
    moved = (kernels[spike].level - centre) / centre * 100 if centre else 0.0
    trials = len(kernels[spike].values)
    share = (noise.within_pct or 0.0) ** 2 / trials
    return (max(moved**2 - share, 0.0), 1.0)


def _staying(kernels: Sequence[KernelRuns], at: int, old: float) -> list[int]:
    """The kernels after ``at`` that stay nearer its level than the old one, up to the first
    that does not: with one trial a kernel, what may confirm ``at``'s move."""
    staying = []
    for later in range(at + 1, len(kernels)):
        if not _nearer_new(kernels[later].level, old, kernels[at].level):
            break
        staying.append(later)
    return staying


def _nearer_new(level: float, old: float, new: float) -> bool:
    """Is a kernel's level at least as near the new level as the old one?"""
    return abs(level - new) <= abs(level - old)


def segment_spread(
    kernels: Sequence[KernelRuns], segment: Sequence[int], within: float | None
) -> tuple[tuple[float, float], ...]:
    """Run-to-run evidence from the kernels of one level (a segment of >= 3 kernels; >= 2
    with one trial a kernel): their means' spread beyond the trials' share. Not the moves
    being judged: the candidate is never in its own baseline."""
    if len(segment) < (2 if within is None else 3):
        return ()
    levels = [kernels[i].level for i in segment]
    centre = fmean(levels)
    if centre == 0:
        return ()
    spread = math.fsum(((v - centre) / centre * 100) ** 2 for v in levels) / (len(levels) - 1)
    if within is not None:
        share = within**2 * math.fsum(1 / len(kernels[i].values) for i in segment) / len(segment)
        spread = max(spread - share, 0.0)
    return ((spread, float(len(segment) - 1)),)

"""The lab-like series of bench/detector_accuracy.py and how an alert is scored.

Shared by the accuracy bench and its peers (bench/detector_peers.py), so every detector is
scored on the same series with the same rule.
"""

from __future__ import annotations

import math
import random
import statistics
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perfdb.alerting import moves_rule  # noqa: E402
from perfdb.detector import Change, Point, Settings, check, policy  # noqa: E402

KINDS = ("step", "clean", "spike", "bimodal")


@dataclass(frozen=True)
class Series:
    kind: str
    points: tuple[Point, ...]  # one stock run per kernel, in kernel order
    better: str
    trials: int
    sigma_steps: int  # step size in sigma (step series), else 0
    step_at: int  # index of the step's / spike's kernel, -1 if none
    step_up: bool
    level_noise_pct: float = 0.0  # true sd of one kernel's mean (%): what a lab's prior knows
    within: float = 0.0  # within-run sd of one trial (fraction)
    between: float = 0.0  # run-to-run sd (fraction)
    steps: tuple[tuple[int, bool], ...] = ()  # peer suite: (first kernel, up) of each step
    base: float = 0.0  # the value of level 1.0 (the true level before a step)
    mixed: bool = False  # each kernel has 1..trials trials (drawn), not ``trials`` each


BETWEEN = (0.25, 1.0)  # run-to-run noise as a multiple of the within-run noise, drawn uniformly


def make_series(
    rng: random.Random,
    kind: str,
    trials: int,
    sigma_steps: int,
    between_ratio: tuple[float, float] = BETWEEN,
    mixed: bool = False,
) -> Series:
    """One lab-like series; ``between_ratio`` (0, 0) makes every trial independent, with no
    run-to-run noise (the same random draws, so the series are otherwise the same);
    ``mixed``: each kernel has a drawn number of trials, 1 to ``trials``, as a lab's reruns
    give (the trials column then reads "up to")."""
    n = rng.randint(10, 40)
    within = rng.uniform(1.0, 5.0) / 100
    between = within * rng.uniform(*between_ratio)
    return generate(rng, kind, trials, sigma_steps, n, within, between, mixed)


def generate(
    rng: random.Random,
    kind: str,
    trials: int,
    sigma_steps: int,
    n: int,
    within: float,
    between: float,
    mixed: bool = False,
) -> Series:
    """One series of ``n`` kernels with this within-run and run-to-run noise (fractions)."""
    sigma = math.hypot(within, between)
    better = rng.choice(["higher", "lower"])
    base = rng.uniform(50.0, 5000.0)
    up = rng.random() < 0.5
    sign = 1.0 if up else -1.0
    at = rng.randint(2, n - 2) if kind in ("step", "spike") else -1
    mode_offset = sign * rng.uniform(2.0, 4.0) * sigma
    first = rng.randint(0, 200)
    points = []
    for i in range(n):
        level = 1.0
        if kind == "step" and i >= at:
            level += sign * sigma_steps * sigma
        if kind == "spike" and i == at:
            level += sign * rng.uniform(4.0, 8.0) * sigma
        if kind == "bimodal" and rng.random() < 0.3:
            level += mode_offset
        run_level = level + rng.gauss(0.0, between)
        count = rng.randint(1, trials) if mixed else trials
        values = tuple(base * (run_level + rng.gauss(0.0, within)) for _ in range(count))
        points.append(Point(run_id=i + 1, kernel=f"2.6.{first + i}", patches=(), values=values))
    level = math.sqrt(between**2 + within**2 / trials) * 100
    return Series(
        kind,
        tuple(points),
        better,
        trials,
        sigma_steps,
        at,
        up,
        level,
        within,
        between,
        (),
        base,
        mixed,
    )


def lab_prior(seed: int, series: Series, siblings: int = 4) -> float | None:
    """The prior the service pools from the same workload/metric's other setups.

    A lab's series of one metric have similar noise: each sibling's within-run and run-to-run
    noise is this series' times a lognormal factor (sd 0.25), with the same trials per run;
    most siblings are clean, some have a step or are bimodal. Pooled as the service does
    (``policy.pooled_level_noise_pct`` over their stock kernels' levels).
    """
    return policy.pooled_level_noise_pct(sibling_levels(seed, series))[0]


def sibling_levels(seed: int, series: Series, siblings: int = 4) -> list[list[float]]:
    """The stock levels of the ``siblings`` other setups ``lab_prior`` pools."""
    return [
        [statistics.fmean(p.values) for p in sibling.points]
        for sibling in sibling_series(seed, series, siblings)
    ]


def sibling_series(seed: int, series: Series, siblings: int = 4) -> list[Series]:
    """The ``siblings`` other setups of the series' workload/metric (``lab_prior``)."""
    rng = random.Random(seed + 2)
    made = []
    for _ in range(siblings):
        kind = rng.choices(["clean", "step", "bimodal"], weights=[7, 2, 1])[0]
        within = series.within * math.exp(rng.gauss(0.0, 0.25))
        between = series.between * math.exp(rng.gauss(0.0, 0.25))
        size = rng.randint(2, 5) if kind == "step" else 0
        n = rng.randint(10, 40)
        made.append(generate(rng, kind, series.trials, size, n, within, between, series.mixed))
    return made


def true_direction(series: Series) -> str:
    went_up = series.step_up
    return "improvement" if went_up == (series.better == "higher") else "regression"


def score(series: Series, alerts: list[tuple[int, str]]) -> tuple[bool, int, int, int]:
    """(step caught, true alerts, exact-kernel alerts, false alerts)."""
    if series.kind != "step":
        return False, 0, 0, len(alerts)
    want = true_direction(series)
    true = [(i, d) for i, d in alerts if d == want and abs(i - series.step_at) <= 1]
    exact = sum(1 for i, _ in true if i == series.step_at)
    return bool(true), len(true), exact, len(alerts) - len(true)


def placed_exactly_by_oracle(series: Series) -> bool:
    """Would a placement that knows the true levels put this step on its own kernel?

    The best any rule can do with the data (for the step's kernel against either
    neighbour): with the levels before and after the step known, splitting at the step's
    kernel j is more likely than at j + 1 when kernel j's mean is on the new level's side of
    the midpoint, and more likely than at j - 1 when kernel j - 1's is on the old side. Every
    kernel's mean has the same noise, so that is the maximum-likelihood (and, with the
    step's kernel drawn uniformly, the most probable) placement. Over any set of caught
    steps no placement rule is exact more often in expectation, so the share of caught
    steps this returns True for is the ceiling of the bench's "exact kernel" on that set.
    """
    if series.kind != "step":
        raise ValueError("only a step series has a kernel to place")
    sign = 1.0 if series.step_up else -1.0
    sigma = math.hypot(series.within, series.between)
    midpoint = series.base * (1.0 + sign * series.sigma_steps * sigma / 2)
    before, first = (
        statistics.fmean(series.points[i].values) for i in (series.step_at - 1, series.step_at)
    )
    return (before - midpoint) * sign < 0 < (first - midpoint) * sign


def peer_series(rng: random.Random, noisy: bool) -> Series:
    """A series of the peer suite, scored whole: 30-80 kernels, 3 trials, 1-3 % within-run
    noise plus run-to-run noise, 0-2 steps of 3-6 sigma (segments >= 6 kernels). ``noisy``
    adds either 1-2 spikes of 5-8 sigma (not next to a step) or bimodal runs (each in a
    second mode 2.5-4 sigma away with probability 0.2)."""
    n = rng.randint(30, 80)
    within = rng.uniform(1.0, 3.0) / 100
    between = within * rng.uniform(0.25, 1.0)
    sigma = math.hypot(within, between)
    count = rng.choices([0, 1, 2], weights=[1, 2, 2])[0]
    while True:
        at = sorted(rng.sample(range(6, n - 5), count))
        if all(b - a >= 6 for a, b in zip(at, at[1:], strict=False)):
            break
    steps = tuple((i, rng.random() < 0.5) for i in at)
    shift = [0.0] * n
    for i, up in steps:
        size = rng.uniform(3.0, 6.0) * sigma * (1 if up else -1)
        shift[i:] = [s + size for s in shift[i:]]
    spikes: set[int] = set()
    bimodal = noisy and rng.random() < 0.5
    if noisy and not bimodal:
        free = [i for i in range(1, n - 1) if all(abs(i - s) > 2 for s in at)]
        spikes = set(rng.sample(free, rng.randint(1, 2)))
    offset = rng.uniform(2.5, 4.0) * sigma * rng.choice([1, -1])
    base, better, first = rng.uniform(50.0, 5000.0), rng.choice(["higher", "lower"]), 0
    points = []
    for i in range(n):
        level = 1.0 + shift[i]
        if i in spikes:
            level += rng.uniform(5.0, 8.0) * sigma * rng.choice([1, -1])
        if bimodal and rng.random() < 0.2:
            level += offset
        run_level = level + rng.gauss(0.0, between)
        values = tuple(base * (run_level + rng.gauss(0.0, within)) for _ in range(3))
        points.append(Point(run_id=i + 1, kernel=f"2.6.{first + i}", patches=(), values=values))
    kind = "noisy" if noisy else "steps"
    return Series(kind, tuple(points), better, 3, 0, -1, False, 0.0, within, between, steps)


def peer_score(series: Series, alerts: list[tuple[int, str]]) -> tuple[int, int, int]:
    """(steps found, true alerts, false alerts): an alert is true within one kernel of a step
    in its direction; each step is found once."""
    wanted = [
        (i, "improvement" if up == (series.better == "higher") else "regression")
        for i, up in series.steps
    ]
    found = {s for s in wanted for a in alerts if a[1] == s[1] and abs(a[0] - s[0]) <= 1}
    true = sum(1 for a in alerts if any(a[1] == s[1] and abs(a[0] - s[0]) <= 1 for s in wanted))
    return len(found), true, len(alerts) - true


def service_check(
    points: Sequence[Point], new: Collection[int], better: str, settings: Settings
) -> list[Change]:
    """What the service asks of one series for an upload's runs (no pinned or declared
    baseline): the detector's ``check``, the same call perfdb.alerting makes."""
    return check(points, better=better, settings=settings, candidates=new)


def status(change: Change) -> str:
    return getattr(change, "status", "confirmed")


def whole_series_alerts(series: Series, settings: Settings) -> list[tuple[int, str]]:
    """The service's reading of a series uploaded whole: its confirmed changes, (kernel
    index, direction), sorted (the peer suite's scoring)."""
    every = {p.run_id for p in series.points}
    changes = service_check(series.points, every, series.better, settings)
    return sorted(
        {(c.candidate_run_id - 1, c.direction) for c in changes if status(c) != "unconfirmed"}
    )


class AlertBook:
    """A replay's alerts as the service keeps them (perfdb/alerting/regressions.py): one per
    run and direction, pending until confirmed, and a confirmed step-scan alert re-attributed
    to a neighbouring kernel when a later check places its step there (``moves_rule``).
    ``alerts()`` is what the series' alerts say at the end of the replay. ``every_kernel``:
    alerts keep no record of the runs they saw, so a move's distance counts every kernel of
    the series, as the rule did before ``moves_rule.KernelOrder``."""

    def __init__(self, every_kernel: bool = False) -> None:
        self.every_kernel = every_kernel
        self.book: list[moves_rule.Held] = []
        self.moved = 0
        self.made = 0

    def _same_run(self, change: Change) -> int | None:
        """The alert the change updates, as ``perfdb.alerting.record`` picks it."""
        here = [i for i, a in enumerate(self.book) if a.run_id == change.candidate_run_id]
        same_method = [i for i in here if self.book[i].method == change.method]
        if same_method:
            return same_method[0]
        same_direction = [i for i in here if self.book[i].direction == change.direction]
        return min(same_direction, key=lambda i: (not self.book[i].confirmed, i), default=None)

    def record(self, points: Sequence[Point], changes: Sequence[Change]) -> None:
        """One check's changes, as the service stores them: moves first (a moving alert
        absorbs the pending/cleared ones on its new run, ``moves_rule.merged``). An alert
        placed (made, confirmed or moved) has seen the series' runs so far."""
        order = moves_rule.KernelOrder.of(points)
        seen = None if self.every_kernel else max(p.run_id for p in points)
        moving, staying = moves_rule.placed_anew(order, self.book, changes)
        for index, alert in moving.items():
            gone = moves_rule.merged(self.book, changes[index])
            self.book = [a for a in self.book if a not in gone]
            moved = self.book.index(alert)
            run_id = changes[index].candidate_run_id
            self.book[moved] = replace(alert, run_id=run_id, seen_through=seen)
            self.moved += 1
        for index, change in enumerate(changes):
            confirmed = status(change) != "unconfirmed"
            if index in moving or index in staying:
                continue
            at = self._same_run(change)
            if at is None:
                self.made += 1  # a key no other alert of the replay has had
                held = moves_rule.Held(
                    self.made,
                    change.candidate_run_id,
                    change.direction,
                    change.method,
                    confirmed,
                    seen,
                )
                self.book.append(held)
            elif confirmed and not self.book[at].confirmed:
                self.book[at] = replace(
                    self.book[at], confirmed=True, method=change.method, seen_through=seen
                )

    def held(self) -> list[tuple[int, str, bool]]:
        """(kernel index, direction, confirmed) of every alert kept, pending and cleared ones
        too (the service keeps those as rows), sorted."""
        return sorted((a.run_id - 1, a.direction, a.confirmed) for a in self.book)

    def alerts(self) -> list[tuple[int, str]]:
        """(kernel index, direction) of each confirmed alert, where it stands now."""
        return [(a.run_id - 1, a.direction) for a in self.book if a.confirmed]

"""Which open alert a step found on a neighbouring kernel re-attributes, instead of a new alert.

Pure, no Django: the service (``perfdb.alerting.moves``) applies the answer to its alerts and
bench/detector_accuracy.py to the alerts of its replay, so the bench measures the rule the
service runs.

Every check re-runs the step scan over the whole series with the noise it now reads. With
more kernels after a step (and a better noise estimate) the scan may place a step it already
confirmed one kernel earlier or later: the kernel at the boundary looked like the other
level at first. Raising a second alert would email the same regression twice, on two
neighbouring kernels, one of them wrong. So the open alert moves to the kernel the scan now
names, keeping its id, triage and email (docs/detector.md, "Long series").
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from perfdb.detector import Change, Point, kernel_key

MOVE_METHOD = "changepoint"  # only the step scan's steps move (and are moved)
MOVE_DISTANCE = 1  # stock kernels: a step re-placed further away is another step


@dataclass(frozen=True)
class Held:
    """An alert the series already has, as the rule sees it."""

    key: int  # the alert's id (the bench: any unique number)
    run_id: int
    direction: str
    method: str
    confirmed: bool  # confirmed (and emailed, for a regression); pending/cleared ones never move
    # the series' newest run (by id) when the alert was placed (made, confirmed or moved);
    # None: every run of the series counts as seen
    seen_through: int | None = None


@dataclass
class KernelOrder:
    """The series' stock kernels in order, and how far a step moved between two of them.

    Distance is counted in the kernels the alert's placement saw. A kernel uploaded since
    that sorts between the alert's kernel and its neighbour (release candidates backfilled
    between two releases, a bisection's kernels) lies in the gap the alert's step was
    already placed at: a step re-placed onto it is 0.5 away, the same step placed more
    exactly, however many such kernels came in one upload. Before, five -rc kernels uploaded
    together between 2.6.9 and 2.6.10 put the step three kernels from its alert on 2.6.10,
    and it was raised and emailed a second time on 2.6.10-rc3."""

    keys: dict[int, tuple[object, ...]]  # stock run -> its kernel's sort key
    _seen: dict[int | None, list[tuple[object, ...]]] = field(default_factory=dict)

    @classmethod
    def of(cls, points: Sequence[Point]) -> KernelOrder:
        """Patched runs are left out: they are never moved."""
        return cls({p.run_id: kernel_key(p) for p in points if not p.patches})

    def position(self, run_id: int) -> int | None:
        """The run's kernel's place among the stock kernels (runs of one kernel share it)."""
        key = self.keys.get(run_id)
        return None if key is None else bisect_left(self._kernels(None), key)

    def distance(self, alert: Held, run_id: int) -> float | None:
        """Kernels from the alert's to the run's, counted in those the alert's placement saw
        (a kernel uploaded since sits half-way into its gap); None if either is not stock."""
        if alert.run_id not in self.keys or run_id not in self.keys:
            return None
        seen = self._kernels(alert.seen_through)
        key = self.keys[run_id]
        at = bisect_left(seen, key)
        to = at if at < len(seen) and seen[at] == key else at - 0.5
        return abs(to - bisect_left(seen, self.keys[alert.run_id]))

    def _kernels(self, seen_through: int | None) -> list[tuple[object, ...]]:
        """The distinct kernel keys of the stock runs up to ``seen_through``, sorted."""
        if seen_through not in self._seen:
            self._seen[seen_through] = sorted(
                {k for run, k in self.keys.items() if seen_through is None or run <= seen_through}
            )
        return self._seen[seen_through]


def placed_anew(
    order: KernelOrder, held: Sequence[Held], changes: Sequence[Change]
) -> tuple[dict[int, Held], dict[int, Held]]:
    """(moving, staying): change index -> the held alert it re-attributes, and change index
    -> the held alert that stays where it is; what the service and the bench apply.

    A confirmed step-scan change on a stock run that has no confirmed alert in its direction
    (nor a step-scan alert of the other one, which the alerts' uniqueness forbids) takes over
    a confirmed step-scan alert of the same direction on a neighbouring stock kernel (or a
    kernel uploaded since in the gap either side of the alert's: ``KernelOrder``), when
    this check no longer returns that alert's own run in that direction: the same step,
    placed anew. A pending or cleared alert of its direction on the change's run is no
    obstacle: the moving alert absorbs it (``merged``). Each alert moves at most once per
    check; with one on either side, the older (lower key) moves.

    Unless the change's placement (``Change.runner_up``) gives the alert's kernel the larger
    share: then the alert stays where it is although the scan names the neighbouring kernel.
    The change is that alert's step, so it raises nothing either. In the accuracy bench the
    placement was right in 17 of the 25 such moves whose old or new kernel was the step's
    (seeds 2003 and 7), and the scan's new kernel in 8 (docs/detector.md, "Long series").
    """
    moving: dict[int, Held] = {}
    staying: dict[int, Held] = {}
    for index, alert in _same_step(order, held, changes).items():
        (staying if _stays(alert, changes[index]) else moving)[index] = alert
    return moving, staying


def _stays(alert: Held, change: Change) -> bool:
    other = change.runner_up
    share = change.location_share
    return other is not None and share is not None and other[0] == alert.run_id and other[1] > share


def _same_step(
    order: KernelOrder, held: Sequence[Held], changes: Sequence[Change]
) -> dict[int, Held]:
    """Change index -> the held alert on a neighbouring kernel it is the step of (``placed_anew``;
    near: ``KernelOrder.distance`` at most ``MOVE_DISTANCE``)."""
    returned = {(c.candidate_run_id, c.direction) for c in changes if c.status != "unconfirmed"}
    taken: set[int] = set()
    found: dict[int, Held] = {}
    for index, change in enumerate(changes):
        to = change.candidate_run_id
        if change.status == "unconfirmed" or change.method != MOVE_METHOD or to not in order.keys:
            continue
        gone = merged(held, change)
        here = [a for a in held if a.run_id == change.candidate_run_id and a not in gone]
        if any(a.direction == change.direction or a.method == MOVE_METHOD for a in here):
            continue  # the change updates the alert on its own run
        movable = [
            a
            for a in held
            if a.confirmed
            and a.method == MOVE_METHOD
            and a.direction == change.direction
            and a.key not in taken
            and (a.run_id, a.direction) not in returned
            and _near(order, a, to)
        ]
        if movable:
            alert = min(movable, key=lambda a: a.key)
            taken.add(alert.key)
            found[index] = alert
    return found


def _near(order: KernelOrder, alert: Held, run_id: int) -> bool:
    distance = order.distance(alert, run_id)
    return distance is not None and distance <= MOVE_DISTANCE


def merged(held: Sequence[Held], change: Change) -> list[Held]:
    """The alerts an alert moved onto the change's run absorbs: the pending or cleared ones in
    its direction there. They flagged the same step before it was confirmed (the newest
    kernel moved, then the next one did not confirm it there); left alone, the change would
    confirm one of them and email the step a second time, beside the moved alert."""
    return [
        a
        for a in held
        if a.run_id == change.candidate_run_id
        and a.direction == change.direction
        and not a.confirmed
    ]

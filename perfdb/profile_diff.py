"""Which kernel functions moved between two profiles: the readprofile side-by-side, computed.

Pure: plain data in, plain rows out. Each side is one or more runs' profiles (trials and runs
pooled by adding their ticks, the way a longer profiling session would have counted them).
Functions are compared by their share of the side's kernel ticks, because tick counts depend
on HZ (100 on 2.4, 1000 on 2.6) and on how long the profile ran; where a side has a
throughput figure, ticks per unit of work are given too, since a share can fall only because
another function grew. The scheduler set of each side's kernel era is summed as one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from perfdb.kernel_functions import scheduler_functions

SCHEDULER_LINE = "(scheduler: all functions of the set)"


@dataclass(frozen=True)
class ProfileSide:
    """One side of the diff: pooled ticks per function and what they were measured on."""

    label: str
    kernel: str
    ticks: Mapping[str, float]
    work: float | None = None  # throughput of the same runs (msg/s, TOPS), when known

    @property
    def total(self) -> float:
        return sum(self.ticks.values())


@dataclass(frozen=True)
class DiffRow:
    function: str
    base_ticks: float
    new_ticks: float
    base_share_pct: float
    new_share_pct: float
    delta_share_pp: float  # percentage points of kernel ticks
    base_ticks_per_work: float | None
    new_ticks_per_work: float | None
    status: str  # "both" | "appeared" | "vanished" | "set"


def pool(entries: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Ticks per function over several trials or runs."""
    pooled: dict[str, float] = {}
    for function, ticks in entries:
        pooled[function] = pooled.get(function, 0.0) + ticks
    return pooled


def _share(ticks: float, total: float) -> float:
    return ticks / total * 100 if total > 0 else 0.0


def _per_work(ticks: float, side: ProfileSide) -> float | None:
    return ticks / side.work if side.work else None


def _row(
    function: str, base: float, new: float, b: ProfileSide, n: ProfileSide, status: str
) -> DiffRow:
    base_share, new_share = _share(base, b.total), _share(new, n.total)
    return DiffRow(
        function=function,
        base_ticks=base,
        new_ticks=new,
        base_share_pct=base_share,
        new_share_pct=new_share,
        delta_share_pp=new_share - base_share,
        base_ticks_per_work=_per_work(base, b),
        new_ticks_per_work=_per_work(new, n),
        status=status,
    )


def _status(function: str, base: ProfileSide, new: ProfileSide) -> str:
    if function not in base.ticks:
        return "appeared"
    if function not in new.ticks:
        return "vanished"
    return "both"


def profile_diff(base: ProfileSide, new: ProfileSide) -> list[DiffRow]:
    """Every function of either side, largest |change in share| first, the scheduler line on top.

    Ties are broken by name so the order never depends on input order.
    """
    functions = set(base.ticks) | set(new.ticks)
    rows = [
        _row(f, base.ticks.get(f, 0.0), new.ticks.get(f, 0.0), base, new, _status(f, base, new))
        for f in functions
    ]
    rows.sort(key=lambda r: (-abs(r.delta_share_pp), r.function))
    sched_base = sum(t for f, t in base.ticks.items() if f in scheduler_functions(base.kernel))
    sched_new = sum(t for f, t in new.ticks.items() if f in scheduler_functions(new.kernel))
    return [_row(SCHEDULER_LINE, sched_base, sched_new, base, new, "set"), *rows]


def top_movers(rows: list[DiffRow], n: int = 15) -> list[DiffRow]:
    """The ``n`` functions whose share moved most (the scheduler line is kept apart)."""
    return [r for r in rows if r.status != "set"][:n]

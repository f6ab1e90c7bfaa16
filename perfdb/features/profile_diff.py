"""Which kernel functions moved between two profiles: the readprofile side-by-side, computed.

Pure: plain data in, plain rows out. Each side is one or more runs' profiles (trials and runs
pooled by adding their ticks, the way a longer profiling session would have counted them).
Functions are compared by their share of ticks, because tick counts depend on HZ (100 on 2.4,
1000 on 2.6) and on how long the profile ran; where a side has a throughput figure, ticks per
unit of work are given too, since a share can fall only because another function grew.

The idle loop (``default_idle``, ``intel_idle``, …: ``perfdb.kernels.functions``) is kept
apart. On a lightly loaded machine it is most of the profile (002 Table 6: 54,048 of 60,332
ticks), so it would lead every ranking, and any change in load would move every other
function's share of all ticks by the same factor. So the busy functions are ranked among
themselves, each by its share of the side's *busy* (non-idle) ticks, as readprofile users read
them; the idle functions, and one line summing them, give shares of *all* ticks. The
scheduler set of each side's kernel era is summed as one line too, a share of busy ticks (what
readprofile's ``scheduler_pct`` is).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from perfdb.kernels.functions import idle_functions, scheduler_functions

SCHEDULER_LINE = "(scheduler: all functions of the set)"
IDLE_LINE = "(idle: all functions of the set)"


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
    """One function (or set) of the diff. A busy row's shares are of the side's busy ticks,
    an idle row's (``idle``) of all its ticks."""

    function: str
    base_ticks: float
    new_ticks: float
    base_share_pct: float
    new_share_pct: float
    delta_share_pp: float  # percentage points
    base_ticks_per_work: float | None
    new_ticks_per_work: float | None
    status: str  # "both" | "appeared" | "vanished" | "set"
    idle: bool = False


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


def _status(function: str, base: ProfileSide, new: ProfileSide) -> str:
    if function not in base.ticks:
        return "appeared"
    if function not in new.ticks:
        return "vanished"
    return "both"


def _ranked(rows: list[DiffRow]) -> list[DiffRow]:
    """Largest |change in share| first; ties by name, so the order never depends on input."""
    return sorted(rows, key=lambda r: (-abs(r.delta_share_pp), r.function))


def idle_set(base: ProfileSide, new: ProfileSide) -> frozenset[str]:
    """The idle functions of either side's kernel era: both sides split their ticks into busy
    and idle on the same functions, so a 2.4 and a 6.x profile compare like with like."""
    return idle_functions(base.kernel) | idle_functions(new.kernel)


def profile_diff(base: ProfileSide, new: ProfileSide) -> list[DiffRow]:
    """Every function of either side: the scheduler line, the idle line, the busy functions
    ranked by |change in share of busy ticks|, then the idle functions ranked by |change in
    share of all ticks|."""
    idle = idle_set(base, new)
    base_idle = sum(t for f, t in base.ticks.items() if f in idle)
    new_idle = sum(t for f, t in new.ticks.items() if f in idle)
    totals = {
        False: (base.total - base_idle, new.total - new_idle),  # busy rows: of busy ticks
        True: (base.total, new.total),  # idle rows: of all ticks
    }

    def row(function: str, b: float, n: float, status: str, is_idle: bool) -> DiffRow:
        base_total, new_total = totals[is_idle]
        base_share, new_share = _share(b, base_total), _share(n, new_total)
        return DiffRow(
            function=function,
            base_ticks=b,
            new_ticks=n,
            base_share_pct=base_share,
            new_share_pct=new_share,
            delta_share_pp=new_share - base_share,
            base_ticks_per_work=_per_work(b, base),
            new_ticks_per_work=_per_work(n, new),
            status=status,
            idle=is_idle,
        )

    rows = [
        row(f, base.ticks.get(f, 0.0), new.ticks.get(f, 0.0), _status(f, base, new), f in idle)
        for f in set(base.ticks) | set(new.ticks)
    ]
    sched_base = sum(t for f, t in base.ticks.items() if f in scheduler_functions(base.kernel))
    sched_new = sum(t for f, t in new.ticks.items() if f in scheduler_functions(new.kernel))
    return [
        row(SCHEDULER_LINE, sched_base, sched_new, "set", False),
        row(IDLE_LINE, base_idle, new_idle, "set", True),
        *_ranked([r for r in rows if not r.idle]),
        *_ranked([r for r in rows if r.idle]),
    ]


def top_movers(rows: list[DiffRow], n: int = 15) -> list[DiffRow]:
    """The ``n`` busy functions whose share moved most (the sets and idle are kept apart)."""
    return [r for r in rows if r.status != "set" and not r.idle][:n]


def idle_rows(rows: list[DiffRow]) -> list[DiffRow]:
    """The idle line and the idle functions, as ``profile_diff`` ranked them."""
    return [r for r in rows if r.idle]

"""The series as the detector reads it: ``Point``s in kernel order, grouped by kernel, and
the ``Change``s it reports on them.

A ``Point`` is one run (kernel, patch set, trials); ``ordered`` drops the trials that are not
numbers (``finite``: the rule every test applies to its values, ``policy.judge`` too) and
sorts the runs by kernel (``kernel_key``: the version's order, or the one a
``with_order`` name states); ``stock_by_kernel`` and ``stock_kernels`` group the stock runs
into one observation a kernel (``KernelRuns``), the unit every test reads. Pure, no Django.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from itertools import compress
from operator import itemgetter, not_
from statistics import fmean
from typing import NamedTuple, cast, overload

from perfdb.detector import placement
from perfdb.detector.stats import Floats
from perfdb.kernels import parse_kernel


class Point(NamedTuple):
    """One run in a series. A named tuple, not a dataclass: a check builds one per run of
    every series it reads (60,000 for 60 series of 1,000 kernels), in bulk from C
    (``points_from``), and ``analyse``'s cache hashes every point of a series."""

    run_id: int
    kernel: str
    patches: tuple[str, ...]  # () = stock
    values: tuple[float, ...]  # trial values used for statistics (warm-up already removed)


_new_point = cast(
    Callable[[tuple[int, str, tuple[str, ...], tuple[float, ...]]], Point],
    partial(tuple.__new__, Point),
)


def points_from(
    run_ids: Iterable[int],
    kernels: Iterable[str],
    patches: Iterable[tuple[str, ...]],
    values: Iterable[tuple[float, ...]],
) -> Iterator[Point]:
    """``Point``s from parallel columns, made without a Python call per point."""
    return map(_new_point, zip(run_ids, kernels, patches, values, strict=True))


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
    # again): store it, show it, do not email it yet. docs/detector.md, "The states of an alert".
    status: str = "confirmed"
    # A step's placement (``perfdb.detector.placement``), worked out when read; None for a pairwise
    # change, whose kernel is the one compared.
    placement: placement.Placement | None = field(default=None, compare=False, repr=False)

    @property
    def location_share(self) -> float | None:
        """How likely it is that the step starts at the candidate run's kernel (0..1)."""
        return None if self.placement is None else self.placement.found()[0]

    @property
    def runner_up(self) -> tuple[int, float] | None:
        """The next likeliest first kernel's run and its share."""
        return None if self.placement is None else self.placement.found()[1]


# --- kernels, parsed once per kernel string ---

_PLAIN = re.compile(r"(\d{1,2})\.(\d{1,3})\.(\d{1,3})")


_PLAIN_TAIL = parse_kernel("0.0.0").sort_key[3:]  # no sublevel, final release, no suffix


ORDER_MARK = "#"  # "893598979838#6.8.0...": a kernel name followed by its stored order


def with_order(kernel: str, order: Sequence[int]) -> str:
    """``kernel`` as a point names a kernel whose name carries no order (a commit, ordered
    by the base or describe an upload stated; perfdb/kernels.py ``ref_sort_key``): the name,
    then the sort key the database stores for it. The series orders it by that key and
    names it by the name."""
    return kernel + ORDER_MARK + ".".join(map(str, order))


@lru_cache(maxsize=1 << 20)  # a series of 100,000 kernels must not evict its own
def parsed_kernel(kernel: str) -> tuple[str, tuple[object, ...]]:
    """(the kernel as the series names it, its sort key), parsing the string once."""
    plain = _PLAIN.fullmatch(kernel) if isinstance(kernel, str) else None
    if plain:  # "2.6.12", most kernels: what parse_kernel gives, without building a version
        major, minor, patch = (int(g) for g in plain.groups())
        return kernel, ((major, minor, patch, *_PLAIN_TAIL), kernel)
    name, mark, order = kernel.partition(ORDER_MARK)
    if mark:  # with_order's form: the order is stated, not read from the name
        return name, (tuple(int(n) for n in order.split(".") if n), name)
    version = parse_kernel(kernel)
    return version.text, (version.sort_key, version.text)  # = kernel_sort_key(kernel)


def kernel_order(kernel: str) -> tuple[object, ...]:
    """The order of a kernel as a point names it (a version, or ``with_order``'s form)."""
    return parsed_kernel(kernel)[1]


def kernel_name(kernel: str) -> str:
    """A kernel as a person reads it, from its name as a point gives it (``with_order``'s
    form included)."""
    return parsed_kernel(kernel)[0]


def kernel_of(point: Point) -> str:
    return parsed_kernel(point.kernel)[0]  # "2.4.20-stock" is "2.4.20"


def kernel_key(point: Point) -> tuple[object, ...]:
    return parsed_kernel(point.kernel)[1]


def run_order(point: Point) -> tuple[object, ...]:
    return (*kernel_key(point), point.patches, point.run_id)


# --- the usable points, in kernel order ---


def finite(values: Iterable[float]) -> tuple[float, ...]:
    """The trials that are numbers: NaN and infinities are dropped before any statistic."""
    return tuple(float(v) for v in values if isinstance(v, int | float) and math.isfinite(v))


def usable_points(points: Sequence[Point]) -> list[Point]:
    """NaN and infinite trials dropped; a run with no trial left is no observation."""
    cleaned = []
    for point in points:
        if _plain_finite(point.values):  # the usual case, checked in C: nothing to drop
            cleaned.append(point)
            continue
        values = finite(point.values)
        if values:
            same = values == point.values
            cleaned.append(
                point if same else Point(point.run_id, point.kernel, point.patches, values)
            )
    return cleaned


def _plain_finite(values: tuple[float, ...]) -> bool:
    """Every trial a finite float (what ``finite`` would keep unchanged)."""
    return (
        type(values) is tuple
        and set(map(type, values)) == {float}
        and all(map(math.isfinite, values))
    )


class Ordered(tuple[Point, ...]):
    """A series' usable points in kernel order (``ordered``), taken as they are: a caller
    that read a series so (the service's bulk read) hands it to ``check``, which does not
    clean and sort it again."""


def ordered(points: Sequence[Point]) -> Ordered:
    """The points with a finite trial (NaN and infinite trials dropped), in kernel order."""
    if isinstance(points, Ordered):
        return points
    return Ordered(sorted(usable_points(points), key=run_order))


# --- the stock runs, one observation a kernel ---


class KernelRuns(NamedTuple):
    """One stock kernel's runs (a tuple: half the cost of a frozen dataclass to build, and a
    check builds one per kernel of every series it reads: 60,000 for 60 x 1,000 kernels)."""

    kernel: str
    run_ids: tuple[int, ...]
    values: tuple[float, ...]

    @property
    def level(self) -> float:
        return fmean(self.values)


def stock_by_kernel(points: Sequence[Point]) -> list[KernelRuns]:
    """Stock runs grouped by kernel, in kernel order: one observation per kernel.

    Sorting by kernel (and run id inside a kernel) is what makes the answer independent
    of the order the points were uploaded or passed in.
    """
    groups: dict[str, list[Point]] = {}
    for point in points:
        if not point.patches:
            groups.setdefault(kernel_of(point), []).append(point)
    ordered = sorted(groups.items(), key=lambda item: kernel_key(item[1][0]))
    return [_kernel_runs(kernel, runs) for kernel, runs in ordered]


def _kernel_runs(kernel: str, runs: list[Point]) -> KernelRuns:
    if len(runs) == 1:  # most kernels: one run, nothing to sort
        return KernelRuns(kernel, (runs[0].run_id,), tuple(runs[0].values))
    runs = sorted(runs, key=lambda p: p.run_id)
    return KernelRuns(
        kernel=kernel,
        run_ids=tuple(p.run_id for p in runs),
        values=tuple(v for p in runs for v in p.values),
    )


@dataclass(frozen=True)
class Scanned:
    """The stock kernels as a scan read them (the short scan or the step scan): where its
    levels start and the kernels it left out, which the drift test keeps to."""

    kernels: Sequence[KernelRuns]
    breaks: tuple[int, ...]  # kernel indexes where a level starts: steps, a pending one
    outliers: frozenset[int]  # kernels left out as spikes or excursions


class StockKernels(Sequence[KernelRuns]):
    """``stock_by_kernel`` as columns, with each kernel's level: the analysis reads the
    columns, and a ``KernelRuns`` is made only for a kernel a reported step names."""

    __slots__ = ("names", "values", "levels", "_runs", "_only_runs")

    def __init__(
        self,
        names: Sequence[str],
        values: Sequence[Sequence[float]],
        levels: list[float],
        *,
        runs: Sequence[tuple[int, ...]] = (),  # each kernel's runs, in run-id order
        only_runs: Sequence[int] | None = None,  # or: each kernel's only run
    ) -> None:
        self.names, self.values, self.levels = names, values, levels
        self._runs, self._only_runs = runs, only_runs

    def __len__(self) -> int:
        return len(self.names)

    def __eq__(self, other: object) -> bool:  # as the tuple of ``KernelRuns`` it stands for
        return isinstance(other, StockKernels) and list(self) == list(other)

    def __hash__(self) -> int:
        return hash(tuple(self.names))

    def run_ids(self, index: int) -> tuple[int, ...]:
        """The kernel's runs, in run-id order."""
        if self._only_runs is not None:
            return (self._only_runs[index],)
        return self._runs[index]

    def run_counts(self) -> list[int]:
        """How many runs each kernel has."""
        if self._only_runs is not None:
            return [1] * len(self.names)
        return list(map(len, self._runs))

    @overload
    def __getitem__(self, index: int) -> KernelRuns: ...

    @overload
    def __getitem__(self, index: slice) -> list[KernelRuns]: ...

    def __getitem__(self, index: int | slice) -> KernelRuns | list[KernelRuns]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return KernelRuns(self.names[index], self.run_ids(index), tuple(self.values[index]))


Columns = tuple[
    Sequence[int], Sequence[str], Sequence[tuple[str, ...]], Sequence[tuple[float, ...]]
]


def columns(points: Sequence[Point]) -> Columns:
    """The points' run ids, kernels, patch sets and trials, each as one tuple."""
    found = tuple(zip(*points, strict=True))
    return (found[0], found[1], found[2], found[3]) if found else ((), (), (), ())


def stock_kernels(
    points: Sequence[Point], of: Columns | None = None, singles: Floats | None = None
) -> StockKernels:
    """``stock_by_kernel`` with each kernel's level (``KernelRuns.level``), without a Python
    call per point when each stock kernel has one run and the runs come in kernel order (a
    long series as the check reads it): then the grouping is the points' own order, checked
    once per sequence of kernels (``_one_run_each``), not once per series. ``of``: the
    points' ``columns`` when the caller has them; ``singles``: when each point has one
    trial, those trials in the points' order (made once with their array): the levels, when
    the points are stock runs, one per kernel (``_levels`` gives them then)."""
    run_ids, kernels, patches, values = of or columns(points)
    if any(patches):  # the stock runs only
        singles = None  # the trials of every run: not the stock levels
        stock = list(map(not_, patches))
        run_ids, kernels = tuple(compress(run_ids, stock)), tuple(compress(kernels, stock))
        values = tuple(compress(values, stock))
    names = _one_run_each(tuple(kernels))
    if names is None:
        found = stock_by_kernel(points)
        return StockKernels(
            [k.kernel for k in found],
            [k.values for k in found],
            [math.fsum(k.values) / len(k.values) for k in found],  # = k.level, inlined
            runs=[k.run_ids for k in found],
        )
    return StockKernels(
        names, values, _levels(values) if singles is None else singles, only_runs=run_ids
    )


@lru_cache(maxsize=256)
def _one_run_each(kernels: tuple[str, ...]) -> tuple[str, ...] | None:
    """The kernels as ``stock_by_kernel`` names them, if each names a kernel of its own and
    they come in ``stock_by_kernel``'s order (strictly increasing keys); else None. A
    setup's series share their runs, so a check over 60 of them asks once."""
    names = tuple(parsed_kernel(k)[0] for k in kernels)
    keys = [parsed_kernel(k)[1] for k in kernels]
    if len(set(names)) != len(names) or not all(map(tuple.__lt__, keys, keys[1:])):
        return None
    return names


def _levels(values: Sequence[Sequence[float]]) -> list[float]:
    """Each kernel's level, ``math.fsum(trials) / len(trials)``: a lone float trial is its
    own level (fsum of one float is that float; -0.0 comes back 0.0, a zero level either
    way, and ``analyse`` gives up on a zero level)."""
    if set(map(len, values)) == {1}:
        firsts = list(map(itemgetter(0), values))
        if set(map(type, firsts)) == {float}:
            return firsts
    return [math.fsum(v) / len(v) for v in values]

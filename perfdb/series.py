"""One series of runs as the detector sees it: ``Point``s in kernel order and the stock
series' step scan (``perfdb.stats.step_scan``) with the ``Change``s it finds.

Pure, no Django. ``perfdb.detection`` builds on it (baselines, pairwise checks, what to
report) and re-exports ``Point`` and ``Change``; docs/detector.md tells how it works.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from scipy import stats as scipy_stats

from perfdb import policy, start_noise, stats
from perfdb.kernels import parse_kernel
from perfdb.policy import Settings


@dataclass(frozen=True)
class Point:
    """One run in a series."""

    run_id: int
    kernel: str
    patches: tuple[str, ...]  # () = stock
    values: tuple[float, ...]  # trial values used for statistics (warm-up already removed)


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
    # again): store it, show it, do not email it yet. See docs/detector.md, "For the service".
    status: str = "confirmed"


# --- kernels, parsed once per kernel string ---

_PLAIN = re.compile(r"(\d{1,2})\.(\d{1,3})\.(\d{1,3})")
_PLAIN_TAIL = parse_kernel("0.0.0").sort_key[3:]  # no sublevel, final release, no suffix


@lru_cache(maxsize=1 << 20)  # a series of 100,000 kernels must not evict its own
def parsed_kernel(kernel: str) -> tuple[str, tuple[object, ...]]:
    """(the kernel as the series names it, its sort key), parsing the string once."""
    plain = _PLAIN.fullmatch(kernel) if isinstance(kernel, str) else None
    if plain:  # "2.6.12", most kernels: what parse_kernel gives, without building a version
        major, minor, patch = (int(g) for g in plain.groups())
        return kernel, ((major, minor, patch, *_PLAIN_TAIL), kernel)
    version = parse_kernel(kernel)
    return version.text, (version.sort_key, version.text)  # = kernel_sort_key(kernel)


def kernel_of(point: Point) -> str:
    return parsed_kernel(point.kernel)[0]  # "2.4.20-stock" is "2.4.20"


def kernel_key(point: Point) -> tuple[object, ...]:
    return parsed_kernel(point.kernel)[1]


def run_order(point: Point) -> tuple[object, ...]:
    return (*kernel_key(point), point.patches, point.run_id)


def usable(points: Sequence[Point]) -> list[Point]:
    """NaN and infinite trials dropped; a run with no trial left is no observation."""
    cleaned = []
    for point in points:
        if _plain_finite(point.values):  # the usual case, checked in C: nothing to drop
            cleaned.append(point)
            continue
        values = policy.finite(point.values)
        if values:
            cleaned.append(point if values == point.values else with_values(point, values))
    return cleaned


def _plain_finite(values: tuple[float, ...]) -> bool:
    """Every trial a finite float (what ``policy.finite`` would keep unchanged)."""
    return (
        type(values) is tuple
        and set(map(type, values)) == {float}
        and all(map(math.isfinite, values))
    )


def with_values(point: Point, values: tuple[float, ...]) -> Point:
    return Point(point.run_id, point.kernel, point.patches, values)


# --- the stock series ---


class KernelRuns(NamedTuple):
    """One stock kernel's runs (a tuple: half the cost of a frozen dataclass to build, and a
    check builds one per kernel of every series it reads: 60,000 for 60 x 1,000 kernels)."""

    kernel: str
    run_ids: tuple[int, ...]
    values: tuple[float, ...]

    @property
    def level(self) -> float:
        return stats.mean(self.values)


def stock_by_kernel(points: Sequence[Point]) -> list[KernelRuns]:
    """Stock runs grouped by kernel, in kernel order: one observation per kernel.

    Sorting by kernel (and run id inside a kernel) is what makes the answer independent
    of the order the points were uploaded or passed in.
    """
    groups: dict[str, list[Point]] = {}
    for point in points:
        if not point.patches:
            groups.setdefault(kernel_of(point), []).append(point)
    ordered = sorted(groups.items(), key=lambda item: parsed_kernel(item[0])[1])
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
class Series:
    kernels: tuple[KernelRuns, ...]
    noise: policy.Noise
    scan: stats.Scan


@lru_cache(maxsize=32)
def analyse(points: tuple[Point, ...], settings: Settings) -> Series | None:
    """Noise model and step scan of a series; None below ``min_kernels`` stock kernels.

    Cached: the service calls ``detect`` and ``change_points`` on the same points.
    """
    kernels = stock_by_kernel(points)
    levels = [math.fsum(k.values) / len(k.values) for k in kernels]  # = k.level, inlined
    if len(kernels) < settings.min_kernels or any(level == 0 for level in levels):
        return None
    noise = policy.series_noise([p.values for p in points], levels, settings)
    if noise is None:
        return None
    centre = sorted(map(abs, levels))[len(levels) // 2]
    resolution = settings.resolution or policy.resolution_of(v for p in points for v in p.values)
    variances = _variances(kernels, noise, centre, resolution)
    per_kernel = settings.series_alpha / max(len(kernels), settings.budget_kernels)
    fixed = policy.usable_threshold_pct(settings.threshold_pct)
    rule = stats.ScanRule(
        critical=policy.critical_t(per_kernel / 2, noise.dof),
        homogeneity=tuple(
            policy.critical_chi2(settings.homogeneity_alpha, d) if d else math.inf
            for d in range(settings.confirm_window + 1)
        ),
        min_fraction=(fixed if fixed is not None else settings.min_change_pct) / 100,
        min_absolute=resolution or 0.0,
        window=settings.confirm_window,
        baseline_window=settings.baseline_window,
        location=settings.step_location,
    )
    if settings.step_noise != "series":  # docs/detector.md, "fourth pass"
        rule = start_noise.with_starts(
            rule, levels, noise, centre, resolution, per_kernel, settings
        )
    return Series(tuple(kernels), noise, stats.step_scan(levels, variances, rule))


def _variances(
    kernels: Sequence[KernelRuns], noise: policy.Noise, centre: float, resolution: float | None
) -> list[float]:
    """Each kernel's level variance: run-to-run over its runs plus within-run over its trials,
    at least half the resolution; one computation per (runs, trials) shape."""
    by_shape: dict[tuple[int, int], float] = {}
    variances = []
    for k in kernels:
        shape = (len(k.run_ids), len(k.values))
        if shape not in by_shape:
            within = (noise.within_pct or 0.0) ** 2 / len(k.values)
            sd = math.sqrt(noise.between_pct**2 / len(k.run_ids) + within) / 100 * centre
            floor = (resolution or 0.0) / 2 / math.sqrt(len(k.values))
            by_shape[shape] = max(sd, floor, 1e-9 * centre) ** 2
        variances.append(by_shape[shape])
    return variances


def series_changes(series: Series, better: str, new_kernels: set[str]) -> list[Change]:
    """Confirmed steps, plus the pending one when its kernel is among ``new_kernels``."""
    steps = list(series.scan.steps)
    pending = series.scan.pending
    if pending is not None and series.kernels[pending.index].kernel in new_kernels:
        steps.append(pending)
    changes = []
    for step in steps:
        change = (step.after_mean - step.before_mean) / abs(step.before_mean) * 100.0
        dof = series.noise.dof if step.dof is None else step.dof
        p_value = min(1.0, 2.0 * float(scipy_stats.t.sf(abs(step.z), dof)))
        changes.append(
            Change(
                baseline_run_ids=tuple(
                    sorted(r for i in step.before for r in series.kernels[i].run_ids)
                ),
                candidate_run_id=series.kernels[step.index].run_ids[0],
                change_pct=change,
                p_value=p_value,
                method="changepoint",
                direction=policy.direction(change, better),
                confidence=1.0 - p_value,
                status="confirmed" if step.confirmed else "unconfirmed",
            )
        )
    return changes

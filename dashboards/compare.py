"""Baseline against candidate, metric by metric: pure functions over plain values.

The compare page and ``GET /api/compare/`` both show these rows: each side's mean ± sd (n),
the % change, Welch's p-value when both sides have at least two values, and whether the change
is better or worse in the metric's own direction (msg/s up, µs down).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import fmean, stdev

from scipy import stats as scipy_stats

from perfdb.detection import Settings

ALPHA = 0.05
# Fewer values than this on a side and the row says "more runs needed": two values do give a
# p-value, but one outlier then decides it.
MIN_VALUES = 3

SINGLE_VALUE = "single value"
# With a single value on a side there is no test: a change this large (%) counts, as in the
# regression detector's default single-value threshold (perfdb.detection.Settings).
SINGLE_VALUE_THRESHOLD_PCT = Settings().default_threshold_pct
MISSING = "missing on one side"


@dataclass(frozen=True)
class MetricValues:
    """One metric's kept values on each side (all baseline runs pooled, all candidates pooled)."""

    name: str
    unit: str
    better: str  # "higher" | "lower" | "none", as perfdb.models.Better
    base: tuple[float, ...]
    new: tuple[float, ...]


@dataclass(frozen=True)
class Side:
    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float | None:
        return fmean(self.values) if self.values else None

    @property
    def sd(self) -> float | None:
        return stdev(self.values) if self.n > 1 else None


@dataclass(frozen=True)
class CompareLine:
    metric: str
    unit: str
    direction: str  # "higher" | "lower" | "none"
    base: Side
    new: Side
    change_pct: float | None
    p_value: float | None
    confidence: str  # "p = 0.003", "single value" or "missing on one side"
    better: bool | None  # None: no direction, no change, or nothing to compare
    significant: bool
    more_runs_needed: bool

    @property
    def verdict(self) -> str:
        """better / worse (significant only), "not significant", or why there is no verdict."""
        if self.change_pct is None:
            return "not comparable"
        if self.direction == "none":
            return "no direction"
        if self.better is None:
            return "no change"
        if not self.significant:
            return "not significant"
        return "better" if self.better else "worse"

    @property
    def base_text(self) -> str:
        return side_text(self.base)

    @property
    def new_text(self) -> str:
        return side_text(self.new)

    @property
    def change_text(self) -> str:
        return "—" if self.change_pct is None else f"{self.change_pct:+.1f} %"

    def as_json(self) -> dict[str, object]:
        return {
            "metric": self.metric,
            "unit": self.unit,
            "direction": self.direction,
            "base_mean": self.base.mean,
            "base_sd": self.base.sd,
            "base_n": self.base.n,
            "new_mean": self.new.mean,
            "new_sd": self.new.sd,
            "new_n": self.new.n,
            "change_pct": self.change_pct,
            "p_value": self.p_value,
            "confidence": self.confidence,
            "better": self.better,
            "significant": self.significant,
            "verdict": self.verdict,
            "more_runs_needed": self.more_runs_needed,
        }


def number_text(value: float) -> str:
    """Four significant digits, thousands separated: 13,100 and 15.27 and 0.0123."""
    return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:,.4g}"


def side_text(side: Side) -> str:
    """``mean ± sd (n)``, the sd left out for a single value, a dash for no value."""
    if side.mean is None:
        return "—"
    text = number_text(side.mean)
    if side.sd is not None:
        text += f" ± {number_text(side.sd)}"
    return f"{text} ({side.n})"


def change_pct(base: float | None, new: float | None) -> float | None:
    """(new - base) / |base| x 100; None when a side is missing or the baseline is 0."""
    if base is None or new is None or base == 0:
        return None
    return (new - base) / abs(base) * 100


def welch_p(base: tuple[float, ...], new: tuple[float, ...]) -> float | None:
    """Two-sided Welch p-value; None with fewer than 2 values a side.

    With no spread on either side scipy gives NaN; then equal means mean p = 1 and different
    means p = 0 (every value moved), as ``perfdb.stats.welch_p_value`` decides.
    """
    if len(base) < 2 or len(new) < 2:
        return None
    if max(base) == min(base) and max(new) == min(new):
        return 1.0 if fmean(base) == fmean(new) else 0.0
    p = float(scipy_stats.ttest_ind(base, new, equal_var=False).pvalue)
    return None if math.isnan(p) else p


def is_better(direction: str, change: float | None) -> bool | None:
    if change is None or change == 0 or direction not in ("higher", "lower"):
        return None
    return (change > 0) == (direction == "higher")


def compare_line(values: MetricValues, alpha: float = ALPHA) -> CompareLine:
    base, new = Side(values.base), Side(values.new)
    change = change_pct(base.mean, new.mean)
    p = welch_p(values.base, values.new)
    if base.n == 0 or new.n == 0:
        confidence = MISSING
    elif p is None:
        confidence = SINGLE_VALUE
    else:
        confidence = f"p = {p:.3g}"
    return CompareLine(
        metric=values.name,
        unit=values.unit,
        direction=values.better,
        base=base,
        new=new,
        change_pct=change,
        p_value=p,
        confidence=confidence,
        better=is_better(values.better, change),
        significant=(p < alpha)
        if p is not None
        else (
            change is not None
            and base.n > 0
            and new.n > 0
            and abs(change) >= SINGLE_VALUE_THRESHOLD_PCT
        ),
        more_runs_needed=min(base.n, new.n) < MIN_VALUES,
    )


def compare_lines(metrics: Iterable[MetricValues], alpha: float = ALPHA) -> list[CompareLine]:
    """One line per metric, worst significant changes first so regressions lead the table."""
    lines = [compare_line(m, alpha) for m in metrics]
    return sorted(lines, key=_rank)


def _rank(line: CompareLine) -> tuple[int, float, str]:
    order = {"worse": 0, "better": 1, "not significant": 2}.get(line.verdict, 3)
    return (order, -abs(line.change_pct or 0.0), line.metric)

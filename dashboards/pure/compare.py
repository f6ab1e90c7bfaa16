"""Baseline against candidate, metric by metric: pure functions over plain values.

The compare page and ``GET /api/compare/`` both show these rows: each side's mean ± sd (n),
the % change, Welch's p-value when both sides have at least two values, and whether the change
is better or worse in the metric's own direction (msg/s up, µs down).

"Significant" is the detector's rule (``perfdb.detector.policy.judge``), with the series' noise when
the compared runs belong to one series (``SeriesContext``), so the page and the alerts agree;
where they do not (another baseline, the series' step test, a pending or cleared alert) the
row says why (``CompareLine.alert_note``).

The rule lives here; how a row writes its numbers (``mean ± sd (n)``, ``p < 0.0001``, a
threshold without an exponent) is ``dashboards.pure.compare_text``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from statistics import fmean, stdev

from dashboards.pure.compare_text import (
    change_pct_text,
    p_text,
    percent_text,
    plain_text,
    report_side_text,
    side_text,
    without_exponents,
)
from perfdb.detector import DRIFT_METHOD, policy, stats
from perfdb.detector.detection import PairContext, Settings

# Fewer values than this on a side and the row says "more runs needed": two values do give a
# p-value, but one outlier then decides it.
MIN_VALUES = 3

SINGLE_VALUE = "single value"
MISSING = "missing on one side"


@dataclass(frozen=True)
class AlertInfo:
    """An alert the detector raised on one of the candidate runs, for this metric."""

    pk: int
    status: str  # Alert.Status: "pending" and "cleared" are the detector's own states
    direction: str
    change_pct: float
    method: str
    baseline_run_ids: tuple[int, ...]


@dataclass(frozen=True)
class SeriesContext:
    """What the detector knows about one metric of the compared runs (see compare_series)."""

    settings: Settings = field(default_factory=Settings)
    pair: PairContext | None = None  # None: the runs are not of one series
    alerts: tuple[AlertInfo, ...] = ()
    base_run_ids: tuple[int, ...] = ()
    new_run_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class MetricValues:
    """One metric's kept values on each side (all baseline runs pooled, all candidates pooled)."""

    name: str
    unit: str
    better: str  # "higher" | "lower" | "none", as perfdb.models.Better
    base: tuple[float, ...]
    new: tuple[float, ...]
    # A side that is one run's mean with the spread its report states (LKP, mmtests).
    base_stated: StatedSpread | None = None
    new_stated: StatedSpread | None = None


@dataclass(frozen=True)
class StatedSpread:
    """A report's ``± 3%`` (``sd_pct``) or Stddev row (``sd``), as printed, and its runs."""

    sd: float | None
    sd_pct: float | None
    runs: int | None

    @property
    def has_spread(self) -> bool:
        return self.sd is not None or self.sd_pct is not None

    def stated(self, mean: float) -> policy.Stated:
        """The summary in the value's unit, for a test: a relative spread times the mean.
        Only for a summary with a spread (``has_spread``): a run count alone is no spread."""
        sd = self.sd if self.sd is not None else (self.sd_pct or 0.0) / 100 * abs(mean)
        return policy.Stated(mean=mean, sd=sd, runs=self.runs)


@dataclass(frozen=True)
class Side:
    values: tuple[float, ...]
    stated: StatedSpread | None = None  # the one value is a mean with this stated spread

    @property
    def n(self) -> int:
        if self.stated is not None and self.stated.runs is not None:
            return self.stated.runs
        return len(self.values)

    @property
    def mean(self) -> float | None:
        return fmean(self.values) if self.values else None

    @property
    def sd(self) -> float | None:
        if self.stated is not None and self.mean is not None:
            return self.stated.stated(self.mean).sd
        return stdev(self.values) if len(self.values) > 1 else None

    @property
    def text(self) -> str:
        """As the page writes it: ``mean ± sd (n)``, or a report's mean with its spread as
        printed (``676,543 ± 3 % (report, n 6)``)."""
        if self.stated is not None and self.mean is not None:
            stated = self.stated
            return report_side_text(self.mean, stated.sd, stated.sd_pct, stated.runs)
        return side_text(self.mean, self.sd, self.n)


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
    reason: str = ""  # why it is (not) significant, from perfdb.detector.policy.judge
    alert_note: str = ""  # the alert for this pair, or why there is none / why it differs
    threshold_pct: float | None = None  # the |change| the detector's rule needed

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
        return self.base.text

    @property
    def new_text(self) -> str:
        return self.new.text

    @property
    def change_text(self) -> str:
        return change_pct_text(self.change_pct)

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
            "reason": self.reason,
            "alert_note": self.alert_note,
            # Each side is a report's mean with its stated spread, tested from the summaries.
            "from_stated_spread": self.base.stated is not None and self.new.stated is not None,
        }


def change_pct(base: float | None, new: float | None) -> float | None:
    """(new - base) / |base| x 100; None when a side is missing or the baseline is 0."""
    if base is None or new is None or base == 0:
        return None
    return (new - base) / abs(base) * 100


def welch_p(base: tuple[float, ...], new: tuple[float, ...]) -> float | None:
    """Two-sided Welch p-value (the detector's ``stats.welch_p_value``: with no spread on
    either side, equal means p = 1 and different means p = 0); None with fewer than 2 values
    a side."""
    if len(base) < 2 or len(new) < 2:
        return None
    p = stats.welch_p_value(base, new)
    return None if math.isnan(p) else p


def is_better(direction: str, change: float | None) -> bool | None:
    if change is None or change == 0 or direction not in ("higher", "lower"):
        return None
    return (change > 0) == (direction == "higher")


def compare_line(values: MetricValues, context: SeriesContext | None = None) -> CompareLine:
    """One metric, judged by the detector's rule (``detector.policy.judge``): with the series'
    noise and the metric's resolution when ``context`` has them, else the two samples' own
    spread (or the single-value threshold) and the resolution the values show."""
    context = context or SeriesContext()
    stated = _both_stated(values)
    base = Side(values.base, values.base_stated if stated else None)
    new = Side(values.new, values.new_stated if stated else None)
    change = change_pct(base.mean, new.mean)
    if stated:
        verdict = _judge_stated(values, change, context)
        p = None if verdict is None or verdict.p_value is None else min(1.0, 2 * verdict.p_value)
    else:
        verdict = _judge(values, change, context)
        p = welch_p(values.base, values.new)
    if base.n == 0 or new.n == 0 or not values.base or not values.new:
        confidence = MISSING
    elif stated:
        confidence = "runs not stated" if p is None else f"{p_text(p)} (stated spread)"
    elif p is None:
        confidence = SINGLE_VALUE
    else:
        confidence = p_text(p)
    significant = verdict is not None and verdict.significant
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
        significant=significant,
        more_runs_needed=min(base.n, new.n) < MIN_VALUES
        and not (stated and verdict is not None and verdict.method == "untested"),
        reason=_reason(verdict, context),
        alert_note=_alert_note(values, verdict, context),
        threshold_pct=verdict.threshold_pct if verdict is not None else None,
    )


def _both_stated(values: MetricValues) -> bool:
    """Each side is one report's mean with its stated spread: tested from the summaries. A
    summary that states runs but no spread is not one (its spread would read as zero)."""
    return (
        values.base_stated is not None
        and values.new_stated is not None
        and values.base_stated.has_spread
        and values.new_stated.has_spread
        and len(values.base) == 1
        and len(values.new) == 1
    )


def _judge_stated(
    values: MetricValues, change: float | None, context: SeriesContext
) -> policy.Verdict | None:
    if change is None or values.better not in policy.BETTER_CHOICES:
        return None
    assert values.base_stated is not None and values.new_stated is not None
    resolution = (context.pair.resolution if context.pair else None) or policy.resolution_of(
        (*values.base, *values.new)
    )
    return policy.judge_stated(
        values.base_stated.stated(values.base[0]),
        values.new_stated.stated(values.new[0]),
        values.better,
        resolution,
        context.settings,
    )


def _judge(
    values: MetricValues, change: float | None, context: SeriesContext
) -> policy.Verdict | None:
    if change is None or values.better not in policy.BETTER_CHOICES:
        return None
    pair = context.pair
    resolution = (pair.resolution if pair else None) or policy.resolution_of(
        (*values.base, *values.new)
    )
    noise = pair.noise if pair else None
    alpha = pair.alpha if pair else None
    return policy.judge(
        values.base, values.new, values.better, noise, resolution, context.settings, alpha=alpha
    )


def _reason(verdict: policy.Verdict | None, context: SeriesContext) -> str:
    if verdict is None:
        return ""
    verdict = replace(verdict, reason=without_exponents(verdict.reason))
    needed = percent_text(verdict.threshold_pct)
    if verdict.significant:
        return f"beyond the detector's threshold ({needed} needed; {verdict.reason})"
    if verdict.direction == "none" or verdict.method == "untested":
        return verdict.reason
    if verdict.reason.startswith("within the metric"):
        return verdict.reason
    if abs(verdict.change_pct) < verdict.threshold_pct:
        where = " for this series" if context.pair and context.pair.noise is not None else ""
        return f"below the detector's noise threshold{where} ({needed} needed; {verdict.reason})"
    return verdict.reason


def _alert_note(
    values: MetricValues, verdict: policy.Verdict | None, context: SeriesContext
) -> str:
    """The alert on these runs, or why the page and the detector differ."""
    if verdict is None or values.better == "none":
        return ""
    significant = verdict.significant
    same_way = [a for a in context.alerts if a.direction == verdict.direction]
    alert = same_way[0] if same_way else (context.alerts[0] if context.alerts else None)
    came_back = _came_back(context)
    if alert is not None and alert.status == "pending" and alert.method == "threshold":
        return (
            f"pending (alert {alert.pk}): one value a side and no noise known; run at least "
            "3 trials on each side to test it"
        )
    if alert is not None and alert.status == "pending":
        return (
            f"pending (alert {alert.pk}): one trial a kernel, so a move is confirmed when the "
            "next kernel agrees, or cleared if it comes back"
        )
    if alert is not None and alert.status == "cleared":
        if came_back:
            return f"cleared: not a step (alert {alert.pk}): {came_back}"
        return f"cleared: the next kernel came back, a spike (alert {alert.pk})"
    if alert is not None and significant:
        return f"alert {alert.pk}"
    if alert is not None:
        if alert.method == "changepoint":
            how = "the series' step test (kernels before the step against those after it)"
        elif alert.method == DRIFT_METHOD:
            how = (
                "the series' drift test (a line through its last kernels, from run "
                f"{_ids(alert.baseline_run_ids)}): a slow slide, not one step"
            )
        else:
            how = f"its own baseline (runs {_ids(alert.baseline_run_ids)})"
        return f"alert {alert.pk} ({alert.change_pct:+.1f} %): the detector judged it with {how}"
    if not significant:
        return ""
    pair = context.pair
    if pair is None:
        return "no alert: the detector judges runs of one series; these runs are not one series"
    if pair.step_scan and came_back:
        return f"no alert: {came_back}"
    if pair.step_scan:
        return (
            "no alert: the detector judges a stock kernel with the series' step test, which "
            "needs the kernels after it to agree; it found no step here"
        )
    if not pair.detector_baseline:
        return "no alert: the detector has no baseline for these runs (pin one)"
    if pair.after_spike:
        return (
            "no alert: these runs moved and the series came back (a spike), or came back from "
            "an excursion; the detector does not count a spike or a return as a step"
        )
    if set(pair.detector_baseline) != set(context.base_run_ids):
        return (
            "no alert: the detector compares these runs with their level so far, runs "
            f"{_ids(pair.detector_baseline)}"
        )
    if pair.one_trial:
        return "no alert yet: one trial a kernel, so the next kernel must agree"
    if pair.alpha is not None and pair.alpha < context.settings.alert_alpha:
        return (
            f"no alert: the detector tests this kernel at alpha {plain_text(pair.alpha, 2)} "
            "(a short series spends its false-alert budget over its kernels)"
        )
    return "no alert: not checked with this data yet (it is checked when an upload adds runs)"


def _came_back(context: SeriesContext) -> str:
    """Which compared runs the step scan left out, kernels that moved and came back; "" if
    none (or the runs are not one series)."""
    runs = set() if context.pair is None else context.pair.outlier_runs
    came_back = sorted(runs & {*context.base_run_ids, *context.new_run_ids})
    if not came_back:
        return ""
    return (
        f"runs {_ids(came_back)} moved and the series came back (a spike, or an excursion of "
        f"at most {context.settings.excursion_kernels} kernels); the detector leaves them out "
        "of its baselines and counts no step there"
    )


def _ids(run_ids: Iterable[int]) -> str:
    return ", ".join(str(i) for i in run_ids) or "none"


def compare_lines(
    metrics: Iterable[MetricValues],
    contexts: Mapping[tuple[str, str], SeriesContext] | None = None,
) -> list[CompareLine]:
    """One line per metric, worst significant changes first so regressions lead the table.
    ``contexts``: the detector's view per (metric name, unit), from ``compare_series``."""
    contexts = contexts or {}
    lines = [compare_line(m, contexts.get((m.name, m.unit))) for m in metrics]
    return sorted(lines, key=_rank)


def _rank(line: CompareLine) -> tuple[int, float, str]:
    order = {"worse": 0, "better": 1, "not significant": 2}.get(line.verdict, 3)
    return (order, -abs(line.change_pct or 0.0), line.metric)


# The headline metric is the one ``dashboards.pure.selection.default_metric`` picks for a page's
# default (higher-is-better first: throughput; then lower-is-better: latency), so the compare
# page leads with the number the across-kernels page opens on. Neither the workload nor the
# parsers store a headline, and most alerts would favour whichever metric is noisiest.
_HEADLINE_RANK = {"higher": 0, "lower": 1}


def headline_metric(lines: Iterable[CompareLine]) -> tuple[str, str] | None:
    """(name, unit) of the workload's headline metric among ``lines``; None when no metric
    has a direction (vmstat's means alone)."""
    directed = [line for line in lines if line.direction in _HEADLINE_RANK]
    if not directed:
        return None
    best = min(directed, key=lambda line: (_HEADLINE_RANK[line.direction], line.metric))
    return best.metric, best.unit


def table_order(lines: Iterable[CompareLine]) -> list[CompareLine]:
    """The page's rows: the headline metric first, then metrics with a direction before
    those without one (vmstat's means, a message count), each group by verdict (worse,
    better, not significant, the rest), then tested rows (a p-value) before untested ones,
    then the larger |change| first. ``compare_lines``' order otherwise."""
    lines = list(lines)
    headline = headline_metric(lines)

    def key(line: CompareLine) -> tuple[int, int, int, int, float, str]:
        return (
            0 if (line.metric, line.unit) == headline else 1,
            1 if line.direction == "none" else 0,
            _rank(line)[0],
            0 if line.p_value is not None else 1,
            -abs(line.change_pct or 0.0),
            line.metric,
        )

    return sorted(lines, key=key)

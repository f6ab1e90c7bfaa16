"""Plain inputs for the figure builders in ``dashboards.figures``.

The selectors turn database rows into these frozen dataclasses; the builders turn them into
Plotly figures. Keeping this layer free of Django and the ORM means a chart can be tested (and
reasoned about) with a handful of literals.

Every point carries a :class:`RunInfo`, so that every chart can say in its hover which run a
value came from and link to ``/runs/<id>/``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunInfo:
    """The keys of one run, as a hover needs them. All text here is untrusted."""

    run_id: int
    kernel: str
    patches: tuple[str, ...] = ()
    hardware: str = ""
    mode: str = ""  # "UP" or "SMP"
    n_trials: int = 1
    params: tuple[tuple[str, str], ...] = ()  # (name, value) pairs, in display order
    notes: str = ""

    @property
    def patch_label(self) -> str:
        """``task+sched`` for a patched build, ``stock`` for none."""
        return "+".join(self.patches) if self.patches else "stock"

    @property
    def build(self) -> str:
        """Kernel plus patches the way the papers write it: ``2.3.28+task+sched``."""
        return "+".join((self.kernel, *self.patches))


@dataclass(frozen=True)
class Metric:
    name: str  # "VolanoMark throughput"
    unit: str  # "msg/s"
    higher_is_better: bool = True


@dataclass(frozen=True)
class Point:
    """One run's value for a metric: the mean of its kept trials and their sd."""

    run: RunInfo
    value: float
    sd: float | None = None  # None with a single trial


@dataclass(frozen=True)
class Series:
    """Runs differing only in kernel and patch set, for one metric.

    ``kernels`` is the x axis in kernel order (the caller sorts it with
    ``perfdb.kernels``); every point's kernel must be in it.
    """

    metric: Metric
    kernels: tuple[str, ...]
    points: tuple[Point, ...]
    title: str = ""

    def __post_init__(self) -> None:
        missing = {p.run.kernel for p in self.points} - set(self.kernels)
        if missing:
            raise ValueError(f"points on kernels not in the x order: {sorted(missing)}")


@dataclass(frozen=True)
class Baseline:
    """The value that relative mode calls 100 ("Base1 = 100" in 002 Table 2)."""

    value: float
    label: str = "Base1"


@dataclass(frozen=True)
class ScalingPoint:
    run: RunInfo
    x: float  # the parameter's value: rooms, threads, clients
    value: float
    sd: float | None = None


@dataclass(frozen=True)
class ScalingChart:
    """A metric against a numeric parameter; one line per kernel build (000 Figures 1, 8, 11)."""

    metric: Metric
    param: str  # "rooms"
    param_unit: str  # "" when the parameter is a plain count
    points: tuple[ScalingPoint, ...]
    title: str = ""


@dataclass(frozen=True)
class KernelTimePoint:
    """Shares of *total* time (not of kernel time) in the kernel and in the scheduler."""

    run: RunInfo
    kernel_pct: float
    scheduler_pct: float
    x: float | None = None  # parameter value, when charted against one


@dataclass(frozen=True)
class KernelTimeChart:
    """000 Figures 4, 10, 13. With ``param`` None the x axis is one category per run."""

    points: tuple[KernelTimePoint, ...]
    param: str | None = None
    param_unit: str = ""
    title: str = ""


@dataclass(frozen=True)
class KernelProfile:
    """One run's profile: ticks per kernel function and the profile's total ticks.

    ``total`` is the profiler's own total (readprofile's ``Total`` line), so functions the
    source did not list still count towards "other".
    """

    run: RunInfo
    ticks: tuple[tuple[str, float], ...]  # (function, ticks)
    total: float


@dataclass(frozen=True)
class WakeupRow:
    """One row of 001 Tables 1-2: a nice pair at one preemption threshold."""

    run: RunInfo
    server_nice: int
    client_nice: int
    threshold: int
    throughput: float  # msg/s
    wakeup_calls: float  # calls to try_to_wake_up, a count (3.49 M is 3_490_000)
    preempt_pct: float  # % of wakeups that caused a priority preemption


@dataclass(frozen=True)
class VmstatRun:
    """One run's vmstat samples, parsed by header name.

    ``first_is_since_boot`` says the first row is procps' average since boot; the chart
    leaves it out (it is not a sample of the run).
    """

    run: RunInfo
    columns: tuple[str, ...]
    rows: tuple[tuple[float, ...], ...]
    first_is_since_boot: bool = True
    timestamps: tuple[str, ...] = ()  # one per row when vmstat -t was used
    stride: int = 1  # rows are every stride-th sample of a long series (thinned for drawing)


@dataclass(frozen=True)
class CompareRow:
    """One metric compared between a baseline run and a candidate run.

    Significance: ``p_value`` < alpha when both sides have trials; otherwise
    ``|% change| >= threshold_pct`` when a threshold is set; otherwise not tested.
    """

    metric: Metric
    baseline: RunInfo
    candidate: RunInfo
    baseline_value: float
    candidate_value: float
    p_value: float | None = None
    threshold_pct: float | None = None
    # The compare table's verdict (detector.policy.judge) when known; None: p_value/threshold.
    significant: bool | None = None
    reason: str = ""  # why (not) significant, and the alert for the pair


@dataclass(frozen=True)
class AlertMark:
    """One alert of a series, marked on the across-kernels chart at its candidate run's point.

    ``status`` and ``direction`` are the alert's own values (perfdb.models.Alert); ``url`` is
    its page, opened by a click on the mark."""

    alert_id: int
    run_id: int  # the candidate run: the mark sits on its point
    status: str
    direction: str  # "regression" or "improvement"
    change_pct: float
    url: str

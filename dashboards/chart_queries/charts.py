"""Selectors for the comparison dashboards: database rows in, ``dashboards.pure.chartdata`` out.

Each chart costs one query (``values()`` over the joins it needs, never a query per run or per
point); the choice lists behind the pickers are plain dicts. Means and sds leave out discarded
(warm-up) trials, and every x axis of kernels follows ``Kernel.sort_key``, never upload time.
Each function names the index it relies on, so a schema change can be checked against it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from math import fsum, sqrt
from operator import attrgetter
from statistics import fmean
from typing import Any, cast

from django.db.models import Exists, F, OuterRef, QuerySet

from dashboards.pure.chartdata import (
    KernelProfile,
    KernelTimeChart,
    KernelTimePoint,
    Metric,
    RunInfo,
    ScalingChart,
    ScalingPoint,
    WakeupRow,
)
from perfdb.models import Better, ProfileEntry, Result, Run

# The run keys every chart needs, reached from a Result / ProfileEntry / Sample row.
RUN_KEYS = {
    "kernel": "run__kernel__version",
    "sort_key": "run__kernel__sort_key",
    "patches": "run__patch_set__name",
    "hardware": "run__setup__hardware__name",
    "mode": "run__setup__mode",
    "params": "run__setup__params",
    "notes": "run__notes",
    "label": "run__label",
}
RUN_EXPRESSIONS = {alias: F(path) for alias, path in RUN_KEYS.items()}
KERNEL_ORDER = ("run__kernel__sort_key", "run__kernel__version", "run__patch_set__name", "run_id")

KERNEL_BUSY, SCHEDULER, KERNEL_TICKS = "kernel_busy_pct", "scheduler_pct", "kernel_ticks"
WAKEUP_METRICS = ("wakeup_calls", "priority_preemption_pct", "throughput")
WAKEUP_PARAMS = ("server_nice", "client_nice", "preempt_threshold")


# --- shaping helpers (no queries) ----------------------------------------------------------


def _sd(values: list[float]) -> float:
    """Sample standard deviation in floats: ``statistics.stdev`` computes in exact fractions,
    which took 1.8 s of a 2 s scaling chart (30,000 values) and half of a series query."""
    mean = fsum(values) / len(values)
    return sqrt(fsum((v - mean) ** 2 for v in values) / (len(values) - 1))


def params_text(params: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((str(k), str(v)) for k, v in sorted(params.items()))


def metric_data(row: Mapping[str, Any]) -> Metric:
    """A metric choice dict as the figures want it; "none" direction draws as higher-is-better."""
    return Metric(row["name"], row["unit"], higher_is_better=row["better"] != Better.LOWER)


@dataclass
class RunValues:
    """Kept values of one run, gathered from rows already ordered by kernel."""

    keys: Mapping[str, Any]
    values: list[float] = field(default_factory=list)

    def info(self) -> RunInfo:
        k = self.keys
        return RunInfo(
            run_id=k["run_id"],
            kernel=k["kernel"],
            patches=tuple(p for p in k["patches"].split("+") if p),
            hardware=k["hardware"],
            mode=k["mode"],
            n_trials=max(1, len(self.values)),
            # _run_keys gives it once per setup: per run, it was a third of a scaling chart.
            params=k["params_text"] if "params_text" in k else params_text(k["params"]),
            notes=k["notes"],
        )

    @property
    def mean(self) -> float:
        return fmean(self.values)

    @property
    def sd(self) -> float | None:
        return _sd(self.values) if len(self.values) > 1 else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


# --- charts -------------------------------------------------------------------------------


def _run_keys(
    *, setup_ids: Sequence[int] | None = None, run_ids: Iterable[int] | None = None
) -> dict[int, dict[str, Any]]:
    """RUN_KEYS of every run of these setups (or of these runs), one row per run: a scope's
    chart reads 16,000 results of 3,000 runs, and reading the keys (a JSON ``params`` among
    them) with every result row had cost three quarters of the chart. One query; served by
    run_series_idx (setup, ...), or the primary key."""
    runs = Run.objects.all()
    if setup_ids is not None:
        runs = runs.filter(setup_id__in=setup_ids)
    if run_ids is not None:
        runs = runs.filter(pk__in=list(run_ids))
    return _keys_of(runs)


def _keys_of(runs: QuerySet[Run]) -> dict[int, dict[str, Any]]:
    """``_run_keys`` of these runs, in the query's order."""
    # Aliased: "kernel", "label" and "notes" are also Run's own field names.
    keys = {f"k_{alias}": F(path.removeprefix("run__")) for alias, path in RUN_KEYS.items()}
    # Typed as plain dicts: the aliases are built, not literals django-stubs can see.
    rows = cast("Iterable[dict[str, Any]]", runs.values("id", "setup_id", **keys))
    texts: dict[int, tuple[tuple[str, str], ...]] = {}
    out = {}
    for r in rows:
        text = texts.get(r["setup_id"])
        if text is None:
            text = texts[r["setup_id"]] = params_text(r["k_params"])
        keys_of_run = {alias: r[f"k_{alias}"] for alias in RUN_KEYS}
        out[r["id"]] = {
            "run_id": r["id"],
            "setup_id": r["setup_id"],
            "params_text": text,
            **keys_of_run,
        }
    return out


def _kernel_order(keys: Mapping[str, Any]) -> tuple[Any, ...]:
    """KERNEL_ORDER of a run from its ``_run_keys``."""
    return (keys["sort_key"], keys["kernel"], keys["patches"], keys["run_id"])


# A point of a scaling chart's per-setup piece (dashboards/page_data/scaling.py), unpickled for
# each setup of a scope after an upload: a tuple costs a third of the dataclasses. (kernel
# order, build, x, value, sd, the RunInfo's fields)
PiecePoint = tuple[tuple[Any, ...], str, float, float, float | None, tuple[Any, ...]]


def scaling_pieces(
    *, setup_ids: Sequence[int], metric: Mapping[str, Any], param: str
) -> dict[int, tuple[PiecePoint, ...]]:
    """Each setup's points of a metric against a numeric parameter (none where it is missing
    or not a number). Two queries for any number of setups: the values, served by
    result_series_idx (setup IN (...), metric), and the runs' keys (``_run_keys``)."""
    # In run order, not kernel order: sorting the result rows by kernel joined every one to
    # its run and kernel; the points carry their kernel order instead.
    rows = (
        Result.objects.filter(setup_id__in=setup_ids, metric_id=metric["id"], discarded=False)
        .values_list("run_id", "value")
        .order_by("run_id", "trial")
    )
    values: dict[int, list[float]] = {}
    for run_id, value in rows:
        values.setdefault(run_id, []).append(value)
    keys = _run_keys(setup_ids=setup_ids)
    pieces: dict[int, list[PiecePoint]] = {setup_id: [] for setup_id in setup_ids}
    fields_of = attrgetter(*(f.name for f in dataclass_fields(RunInfo)))  # one tuple a point
    for run_id, kept in values.items():
        run = RunValues(keys=keys[run_id], values=kept)
        x = _number(run.keys["params"].get(param))
        if x is not None:
            info = run.info()
            point = (_kernel_order(run.keys), info.build, x, run.mean, run.sd, fields_of(info))
            pieces[run.keys["setup_id"]].append(point)
    return {setup_id: tuple(points) for setup_id, points in pieces.items()}


def scaling_chart(
    pieces: Iterable[Sequence[PiecePoint]],
    *,
    metric: Mapping[str, Any],
    param: str,
    title: str,
    builds: Collection[str] | None = None,
) -> ScalingChart:
    """The chart of the pieces' points (of ``builds`` only if given), in kernel order."""
    kept = sorted(
        (p for piece in pieces for p in piece if builds is None or p[1] in builds),
        key=lambda p: p[0],
    )
    return ScalingChart(
        metric=metric_data(metric),
        param=param,
        param_unit="",
        points=tuple(ScalingPoint(run=RunInfo(*p[5]), x=p[2], value=p[3], sd=p[4]) for p in kept),
        title=title,
    )


def scaling_points(
    *, setup_ids: Sequence[int], metric: Mapping[str, Any], param: str, title: str = ""
) -> ScalingChart:
    """A metric against a numeric parameter over the setups given (one scope's setups)."""
    pieces = scaling_pieces(setup_ids=setup_ids, metric=metric, param=param)
    return scaling_chart(pieces.values(), metric=metric, param=param, title=title)


def kernel_time_points(
    *, setup_ids: Sequence[int], param: str | None = None, title: str = ""
) -> KernelTimeChart:
    """% of profiled time in the kernel (non-idle) and in the scheduler, per run.

    readprofile's ``scheduler_pct`` is a share of *non-idle* ticks; the chart wants shares of
    the whole profile, so it is scaled by ``kernel_busy_pct`` / 100. Two queries: the
    values, served by result_series_idx (setup IN (...), metric IN (...)), in run order (not
    joined to every run and kernel for the sort), then the keys of the runs that have them
    (``_run_keys``), put in kernel order here.
    """
    rows = (
        Result.objects.filter(
            setup_id__in=setup_ids, metric__name__in=(KERNEL_BUSY, SCHEDULER), discarded=False
        )
        .values_list("run_id", "value", "metric__name")
        .order_by("run_id", "metric__name", "trial")
    )
    per_run: dict[int, dict[str, list[float]]] = {}
    for run_id, value, name in rows:
        per_run.setdefault(run_id, {}).setdefault(name, []).append(value)
    keys = _run_keys(run_ids=per_run)
    points = []
    for run_id in sorted(per_run, key=lambda r: _kernel_order(keys[r])):
        values = per_run[run_id]
        if KERNEL_BUSY not in values or SCHEDULER not in values:
            continue
        busy, sched = fmean(values[KERNEL_BUSY]), fmean(values[SCHEDULER])
        run = RunValues(keys=keys[run_id], values=values[KERNEL_BUSY])
        x = None if param is None else _number(run.keys["params"].get(param))
        if param is not None and x is None:
            continue
        points.append(KernelTimePoint(run.info(), busy, sched * busy / 100, x))
    return KernelTimeChart(points=tuple(points), param=param, title=title)


def kernel_profiles(*, setup_ids: Sequence[int], limit_runs: int = 40) -> list[KernelProfile]:
    """The first ``limit_runs`` profiled runs' kernel profiles (ticks per function, all
    trials summed), kernel order.

    The profile's total is the profiler's own (ticks / share_pct), so functions the source
    left out still count towards "other". Two queries: the runs drawn with their keys
    (run_series_idx (setup, ...) with an EXISTS probe on profile_uniq (run, ...)), then only
    their entries (profile_uniq's leading run column). Reading every profiled run's entries
    of the scope to keep 40 had cost 0.9 s after each upload to a 5M-result scope.
    """
    drawn = _keys_of(
        Run.objects.filter(setup_id__in=setup_ids)
        .filter(Exists(ProfileEntry.objects.filter(run_id=OuterRef("pk"))))
        .order_by(*(key.removeprefix("run__") for key in KERNEL_ORDER[:-1]), "id")[:limit_runs]
    )
    # In run order, not joined to each entry's run, kernel, patch set and setup for a sort
    # by kernel (0.8-1.2 s after an upload at 10M results): the runs are in kernel order.
    rows = (
        ProfileEntry.objects.filter(run_id__in=list(drawn))
        .values_list("run_id", "trial", "function", "ticks", "share_pct")
        .order_by("run_id", "trial", "-ticks")
    )
    ticks: dict[int, dict[str, float]] = {}
    totals: dict[int, dict[int, float]] = {}
    for run_id, trial, function, tick, share_pct in rows:
        functions = ticks.setdefault(run_id, {})
        functions[function] = functions.get(function, 0.0) + tick
        trial_totals = totals.setdefault(run_id, {})
        if trial not in trial_totals and share_pct:
            trial_totals[trial] = tick * 100 / share_pct
    profiles = []
    for run_id in (r for r in drawn if r in ticks):
        total = sum(totals[run_id].values()) or sum(ticks[run_id].values())
        info = RunValues(keys=drawn[run_id], values=[0.0]).info()
        profiles.append(KernelProfile(info, tuple(ticks[run_id].items()), total))
    return profiles


def wakeup_rows(*, setup_ids: Sequence[int]) -> tuple[list[WakeupRow], int]:
    """001 Tables 1-2: runs with nice values and a preemption threshold, their wakeup counts,
    preemption share and throughput. Returns (rows, runs left out for a missing value).

    Two queries: the values, served by result_series_idx (setup IN (...), metric IN (...)),
    in run order (sorting them by kernel joined every result row to its run, kernel, patch
    set and setup: most of the page's time after an upload), then the runs' keys
    (``_run_keys``), put in kernel order here.
    """
    rows = (
        Result.objects.filter(
            setup_id__in=setup_ids, metric__name__in=WAKEUP_METRICS, discarded=False
        )
        .values_list("run_id", "value", "metric__name")
        .order_by("run_id", "metric__name", "trial")
    )
    per_run: dict[int, dict[str, list[float]]] = {}
    for run_id, value, name in rows:
        per_run.setdefault(run_id, {}).setdefault(name, []).append(value)
    keys = _run_keys(setup_ids=setup_ids) if per_run else {}
    out, skipped = [], 0
    for run_id in sorted(per_run, key=lambda r: _kernel_order(keys[r])):
        values = per_run[run_id]
        row = _wakeup_row(RunValues(keys=keys[run_id], values=values.get("throughput", [])), values)
        if row is None:
            skipped += 1
        else:
            out.append(row)
    out.sort(key=lambda r: (r.threshold, r.server_nice, r.client_nice))
    return out, skipped


def _wakeup_row(run: RunValues, values: Mapping[str, list[float]]) -> WakeupRow | None:
    """A run's row, None when a parameter or a counter is missing."""
    params = run.keys["params"]
    nice = [_number(params.get(p)) for p in WAKEUP_PARAMS]
    if any(v is None for v in nice) or any(m not in values for m in WAKEUP_METRICS):
        return None
    server, client, threshold = (int(v) for v in nice)  # type: ignore[arg-type]
    return WakeupRow(
        run=run.info(),
        server_nice=server,
        client_nice=client,
        threshold=threshold,
        throughput=fmean(values["throughput"]),
        wakeup_calls=fmean(values["wakeup_calls"]),
        preempt_pct=fmean(values["priority_preemption_pct"]),
    )

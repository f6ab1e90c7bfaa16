"""What a regression check reads, loaded for all of an upload's series at once.

A check used to ask the database a few questions per series (its points, its threshold, its
pinned baseline, the declared baselines, its alerts three times over); an upload touching
a hundred series paid hundreds of round trips, more than the detector itself cost. Here each
question is asked once per upload, for every series together: points, thresholds, pinned
baselines, declared baselines, the series' alerts (locked, as the check updates them) and
the alerts' baseline runs. ``perfdb.alerting.regressions`` then works on these in memory
and keeps them current as it writes, so every later lookup in the same check sees what an
earlier one wrote, as the per-series queries did.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np
from django.conf import settings as django_settings
from django.db import connection
from django.db.models import Aggregate, BinaryField, F, Func, Q, Value

from perfdb import detector
from perfdb.alerting import noise_prior
from perfdb.alerting.kernel_order import detector_names
from perfdb.models import Alert, Metric, PinnedBaseline, Result, Run, Setup, Threshold

SeriesKey = tuple[int, int]  # (setup id, metric id)
_RUN_ID = attrgetter("run_id")


def detector_settings(
    metric: Metric, threshold_pct: float | None, typical_noise_pct: float | None
) -> detector.Settings:
    """The detector's settings for a series: the staff's Threshold row (a fixed threshold
    and/or the workload/metric's typical noise, ignored when invalid) and the metric's
    resolution from its parser, and where the step scan takes over from the kernel-by-kernel
    reading (``PERFDB_SHORT_KERNELS``). The compare page judges with the same."""
    resolution = metric.resolution
    return detector.Settings(
        threshold_pct=detector.usable_threshold_pct(threshold_pct),
        prior_noise_pct=detector.usable_threshold_pct(typical_noise_pct),
        resolution=resolution if resolution is not None and resolution > 0 else None,
        short_kernels=django_settings.PERFDB_SHORT_KERNELS,
    )


@dataclass
class CheckData:
    """Everything one check reads, by series, as plain values; ``alerts`` and ``baselines``
    are kept current by the check as it creates and updates alerts (an alert it made or
    confirmed leaves ``baselines``, to be read again)."""

    points: Mapping[SeriesKey, Sequence[detector.Point]]  # in run-id order, as stored
    settings: dict[SeriesKey, detector.Settings]  # the pooled prior put in, for a short series
    pinned: dict[SeriesKey, int]  # series -> its pinned baseline run
    declared: dict[int, int]  # the upload's run -> the baseline run its bundle names
    alerts: dict[SeriesKey, list[Alert]] = field(default_factory=dict)
    # alert -> its baseline runs, in Run's order (newest first), as ``baseline_runs.all()``
    baselines: dict[int, list[int]] = field(default_factory=dict)
    # series -> its usable points in kernel order (``detector.ordered``), when known
    ordered: dict[SeriesKey, detector.Ordered] = field(default_factory=dict)
    # series -> the columns of those points and their single trials (``long_series.analyse_of``),
    # when the check read them so
    columns: dict[SeriesKey, tuple[detector.Columns, detector.Floats]] = field(default_factory=dict)
    # series -> the upload's runs in it: the runs the check asks about
    candidates: dict[SeriesKey, set[int]] = field(default_factory=dict)
    # series -> its newest run: what an alert placed by this check has seen
    newest: dict[SeriesKey, int | None] = field(default_factory=dict)


def among(points: Sequence[detector.Point], run_ids: Iterable[int]) -> set[int]:
    """Which of these runs the series has: a binary search for each (the points are in
    run-id order), not a pass over every point of a long series."""
    found = set()
    for run_id in run_ids:
        at = bisect_left(points, run_id, key=_RUN_ID)
        if at < len(points) and points[at].run_id == run_id:
            found.add(run_id)
    return found


def _series_filter(series: Collection[SeriesKey]) -> Q:
    """``(setup = s AND metric IN (...)) OR ...``: exactly these series, one index range scan
    (and one partition) per setup."""
    by_setup: dict[int, set[int]] = defaultdict(set)
    for setup_id, metric_id in series:
        by_setup[setup_id].add(metric_id)
    condition = Q(pk__in=[])  # no series: nothing
    for setup_id, metric_ids in sorted(by_setup.items()):
        condition |= Q(setup_id=setup_id, metric_id__in=sorted(metric_ids))
    return condition


# One packed row of a series: its run id, trial and value as PostgreSQL's binary forms
# (``int8send``, ``int2send``, ``float8send``: big-endian, every bit as stored).
PACKED_ROW = np.dtype([("run", ">i8"), ("trial", ">i2"), ("value", ">f8")])


class _Packed(Aggregate):
    """A series' rows as one bytea: ``string_agg`` of each row's run id, trial and value,
    18 bytes a row (``PACKED_ROW``). numpy reads it in one call; the same values as arrays,
    which psycopg parses one number at a time, were a third of what the check read for 60
    series of 1,000 runs. Each row is whole in the stream, so nothing depends on the order
    PostgreSQL aggregates in: no ``ORDER BY`` inside the aggregate, which had PostgreSQL
    sort every series again (~30 ms of the ~50 ms it took for those 60 series);
    ``in_run_order`` orders the rows."""

    function = "STRING_AGG"
    output_field = BinaryField()

    def __init__(self) -> None:
        row = Func(
            Func(F("run_id"), function="int8send"),
            Func(F("trial"), function="int2send"),
            Func(F("value"), function="float8send"),
            template="(%(expressions)s)",
            arg_joiner=" || ",
            output_field=BinaryField(),
        )
        super().__init__(row, Value(b""))


# Memory the points query may take to group its rows in a hash table (for the rest of the
# check's transaction): at PostgreSQL's default 4 MB it sorted 60,000 rows on disk instead
# (60 series of 1,000 runs: 36 -> 22 ms). The table holds one packed row per series
# (~2 MB for those 60).
POINTS_WORK_MEM = "64MB"


def _room_to_hash() -> None:
    """``work_mem`` for the points query, until the transaction ends (nothing outside one)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('work_mem', %s, true)", [POINTS_WORK_MEM])


def in_run_order(packed: bytes) -> tuple[np.ndarray, np.ndarray]:
    """A series' run-id and value columns, ordered by run then trial (a run's trials are
    unique: the order is whole), from its rows as ``_Packed`` made them."""
    rows = np.frombuffer(packed, dtype=PACKED_ROW)
    order = np.lexsort((rows["trial"], rows["run"]))
    return rows["run"][order], rows["value"][order]


def load_points(
    series: Collection[SeriesKey],
    columns: dict[SeriesKey, tuple[detector.Columns, detector.Floats]] | None = None,
) -> tuple[dict[SeriesKey, Sequence[detector.Point]], dict[SeriesKey, detector.Ordered]]:
    """The series' points, and ``detector.ordered`` of each series without a NaN or an
    infinite trial. Two queries for all series: each series' rows packed into one value by
    the database (put in run and trial order here), so a 1,000-run series is one row, not
    1,000; and each run's kernel and patch set once (a run is in many series), ranked once
    in the detector's order, so a series is put in kernel order without a key per point.
    The points are made in bulk (``points.points_from``), not one call each. ``columns``:
    filled with each ordered series' columns and levels (``_columns``), where it has them."""
    if not series:
        return {}, {}
    rows = (
        Result.objects.filter(_series_filter(series), discarded=False)
        .values_list("setup_id", "metric_id")
        .annotate(rows=_Packed())
        .order_by()
    )
    kernels, patches, rank = _runs_ranked({setup_id for setup_id, _ in series})
    _room_to_hash()
    shared: dict[bytes, _Runs] = {}  # a setup's series share their runs: read once
    shared_columns: dict[bytes, tuple[tuple[int, ...], tuple[str, ...], Any]] = {}
    points: dict[SeriesKey, Sequence[detector.Point]] = {key: [] for key in series}
    ordered: dict[SeriesKey, detector.Ordered] = {}
    for setup_id, metric_id, packed in rows:
        run_ids, values = in_run_order(packed)
        key = run_ids.tobytes()
        if key not in shared:
            shared[key] = _runs_of(run_ids, kernels, patches, rank)
        runs = shared[key]
        finite = bool(np.isfinite(values).all())
        singles = detector.Floats(values) if finite and runs.bounds is None else None
        trials = _trials(values, runs.bounds) if singles is None else list(zip(singles))
        if singles is not None and runs.order is None and columns is not None:
            columns[(setup_id, metric_id)] = (_columns(runs, shared_columns, key, trials), singles)
        # a plain tuple: ``detector.ordered`` takes an Ordered as it is
        found = tuple(detector.points_from(runs.ids, runs.kernels, runs.patches, trials))
        points[(setup_id, metric_id)] = found
        if finite:  # each point usable as it is
            # in run-id order, the runs are most often in kernel order already
            ordered[(setup_id, metric_id)] = detector.Ordered(
                found if runs.order is None else map(found.__getitem__, runs.order)
            )
    return points, ordered


def _columns(
    runs: _Runs,
    shared: dict[bytes, tuple[tuple[int, ...], tuple[str, ...], Any]],
    key: bytes,
    trials: list[tuple[float, ...]],
) -> detector.Columns:
    """``points.columns`` of a series' points in run-id order (made of these columns): the
    runs' columns shared by the series over the same runs."""
    if key not in shared:
        shared[key] = (tuple(runs.ids), tuple(runs.kernels), tuple(runs.patches))
    return (*shared[key], tuple(trials))


class _Runs(NamedTuple):
    """A series' runs, as every series over the same runs shares them."""

    ids: list[int]  # in run-id order
    kernels: list[str]
    patches: list[tuple[str, ...]]
    bounds: list[int] | None  # where each run's trials start (and the end); None: one each
    order: list[int] | None  # their positions in kernel order; None: already in it


def _runs_of(
    run_ids: np.ndarray,
    kernels: dict[int, str],
    patches: dict[int, tuple[str, ...]],
    rank: dict[int, int],
) -> _Runs:
    """The runs of a packed run-id column (one id per trial, ordered by run then trial)."""
    starts = np.flatnonzero(np.diff(run_ids)) + 1  # where a run's trials begin, but the first
    bounds = None
    if len(starts) + 1 < len(run_ids):  # some run has several trials
        bounds = [0, *starts.tolist(), len(run_ids)]
        run_ids = run_ids[bounds[:-1]]
    ids: list[int] = run_ids.tolist()
    return _Runs(
        ids,
        list(map(kernels.__getitem__, ids)),
        list(map(patches.__getitem__, ids)),
        bounds,
        _kernel_order(ids, rank),
    )


def _trials(values: np.ndarray, bounds: list[int] | None) -> list[tuple[float, ...]]:
    """Each run's trials (Python floats, every bit as stored), from the packed values."""
    floats: list[float] = values.tolist()
    if bounds is None:  # one trial per run, the usual long series
        return list(zip(floats))
    return [tuple(floats[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


def _kernel_order(runs: list[int], rank: dict[int, int]) -> list[int] | None:
    """The positions of ``runs`` in ``detector.ordered``'s order; None if that is theirs."""
    ranks = list(map(rank.__getitem__, runs))
    if all(map(int.__lt__, ranks, ranks[1:])):
        return None
    return sorted(range(len(ranks)), key=ranks.__getitem__)


def _runs_ranked(
    setup_ids: set[int],
) -> tuple[dict[int, str], dict[int, tuple[str, ...]], dict[int, int]]:
    """Each run's kernel, its patch set, and its place in ``detector.ordered``'s order (a
    run's place depends on the run alone), for every run of these setups."""
    kernels, patches = {}, {}
    for run_id, kernel, names in Run.objects.filter(setup_id__in=setup_ids).values_list(
        "pk", "kernel__version", "patch_set__name"
    ):
        kernels[run_id], patches[run_id] = kernel, tuple(p for p in names.split("+") if p)
    named = detector_names(set(kernels.values()))
    if any(named[k] != k for k in named):  # commits: their stored order goes with them
        kernels = {run_id: named[kernel] for run_id, kernel in kernels.items()}
    runs = detector.points_from(
        kernels, kernels.values(), patches.values(), [(0.0,)] * len(kernels)
    )
    return kernels, patches, {p.run_id: at for at, p in enumerate(detector.ordered(list(runs)))}


def load_settings(
    series: Collection[SeriesKey], metrics: Mapping[int, Metric]
) -> dict[SeriesKey, detector.Settings]:
    """Each series' detector settings: its workload's Threshold row for the metric, if any."""
    workloads = dict(
        Setup.objects.filter(pk__in={s for s, _ in series}).values_list("pk", "workload_id")
    )
    rows = Threshold.objects.filter(
        workload_id__in=set(workloads.values()), metric_id__in={m for _, m in series}
    ).values_list("workload_id", "metric_id", "threshold_pct", "typical_noise_pct")
    thresholds = {(w, m): (pct, noise) for w, m, pct, noise in rows}
    return {
        (setup_id, metric_id): detector_settings(
            metrics[metric_id], *thresholds.get((workloads[setup_id], metric_id), (None, None))
        )
        for setup_id, metric_id in series
    }


def load_alerts(
    series: Collection[SeriesKey],
) -> tuple[dict[SeriesKey, list[Alert]], dict[int, list[int]]]:
    """The series' alerts, locked for this transaction in id order (two checks lock the same
    rows in the same order), and every alert's baseline runs."""
    if not series:
        return {}, {}
    alerts: dict[SeriesKey, list[Alert]] = defaultdict(list)
    for alert in Alert.objects.select_for_update().filter(_series_filter(series)).order_by("pk"):
        alerts[(alert.setup_id, alert.metric_id)].append(alert)
    baselines: dict[int, list[int]] = defaultdict(list)
    through = Alert.baseline_runs.through.objects.filter(
        alert_id__in=[a.pk for found in alerts.values() for a in found]
    ).order_by("-run__created_at", "-run_id")
    for alert_id, run_id in through.values_list("alert_id", "run_id"):
        baselines[alert_id].append(run_id)
    return dict(alerts), dict(baselines)


def load(
    series: Collection[SeriesKey], metrics: Mapping[int, Metric], upload_runs: Collection[int]
) -> CheckData:
    """All a check over ``series`` reads (call it inside the check's transaction: the alerts
    are locked until it ends): a short series' settings carry its pooled prior
    (``noise_prior.with_prior``)."""
    pins = PinnedBaseline.objects.filter(_series_filter(series))
    pinned = {
        (s, m): run_id for s, m, run_id in pins.values_list("setup_id", "metric_id", "run_id")
    }
    declared = dict(
        Run.objects.filter(pk__in=list(upload_runs), baseline__isnull=False).values_list(
            "pk", "baseline_id"
        )
    )
    alerts, baselines = load_alerts(series)
    columns: dict[SeriesKey, tuple[detector.Columns, detector.Floats]] = {}
    points, ordered = load_points(series, columns)
    candidates = {key: among(found, sorted(upload_runs)) for key, found in points.items()}
    newest = {key: found[-1].run_id if found else None for key, found in points.items()}
    settings = load_settings(series, metrics)
    return CheckData(
        points=points,
        ordered=ordered,
        columns=columns,
        settings={key: noise_prior.with_prior(settings[key], points[key], key) for key in settings},
        pinned=pinned,
        declared=declared,
        alerts=alerts,
        baselines=baselines,
        candidates=candidates,
        newest=newest,
    )

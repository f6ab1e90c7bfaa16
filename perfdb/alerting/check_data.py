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

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import Q

from perfdb import detection, policy
from perfdb.models import Alert, Metric, PinnedBaseline, Result, Run, Setup, Threshold

SeriesKey = tuple[int, int]  # (setup id, metric id)


def detector_settings(
    metric: Metric, threshold_pct: float | None, typical_noise_pct: float | None
) -> policy.Settings:
    """The detector's settings for a series: the staff's Threshold row (a fixed threshold
    and/or the workload/metric's typical noise, ignored when invalid) and the metric's
    resolution from its parser. The compare page judges with the same."""
    resolution = metric.resolution
    return policy.Settings(
        threshold_pct=policy.usable_threshold_pct(threshold_pct),
        prior_noise_pct=policy.usable_threshold_pct(typical_noise_pct),
        resolution=resolution if resolution is not None and resolution > 0 else None,
    )


@dataclass
class CheckData:
    """Everything one check reads, by series; ``alerts`` and ``baselines`` are kept current
    by the check as it creates and updates alerts."""

    points: dict[SeriesKey, list[detection.Point]]  # in run-id order, as stored
    settings: dict[SeriesKey, policy.Settings]
    pinned: dict[SeriesKey, int]  # series -> its pinned baseline run
    declared: dict[int, int]  # the upload's run -> the baseline run its bundle names
    alerts: dict[SeriesKey, list[Alert]] = field(default_factory=dict)
    # alert -> its baseline runs, in Run's order (newest first), as ``baseline_runs.all()``
    baselines: dict[int, list[int]] = field(default_factory=dict)
    # series -> its usable points in kernel order (``detection.ordered``), when known
    ordered: dict[SeriesKey, detection.Ordered] = field(default_factory=dict)

    def usable(self, key: SeriesKey) -> detection.Ordered:
        return self.ordered[key] if key in self.ordered else detection.ordered(self.points[key])

    def add_alert(self, key: SeriesKey, alert: Alert) -> None:
        """An alert this check created (or found made by a concurrent one)."""
        self.alerts.setdefault(key, []).append(alert)
        self.baselines.pop(alert.pk, None)

    def baseline_runs(self, alert: Alert) -> list[int]:
        """The alert's baseline runs; read again (one query) for an alert this check
        created or confirmed, which ``baselines_changed`` forgot."""
        if alert.pk not in self.baselines:
            self.baselines[alert.pk] = list(alert.baseline_runs.values_list("pk", flat=True))
        return self.baselines[alert.pk]

    def baselines_changed(self, alert: Alert) -> None:
        self.baselines.pop(alert.pk, None)


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


def load_points(series: Collection[SeriesKey]) -> dict[SeriesKey, list[detection.Point]]:
    """Each series as detector points, in run-id order: per run, its kept trial values in
    trial order (warm-ups left out)."""
    return _load_points(series)[0]


def _load_points(
    series: Collection[SeriesKey],
) -> tuple[dict[SeriesKey, list[detection.Point]], dict[SeriesKey, detection.Ordered]]:
    """The series' points, and ``detection.ordered`` of each series without a NaN or an
    infinite trial. Two queries for all series: each series as two arrays (run ids and
    values, by run and trial) built by the database, so a 1,000-run series is one row, not
    1,000; and each run's kernel and patch set once (a run is in many series), ranked once in
    the detector's order, so a series is put in kernel order without a key per point."""
    if not series:
        return {}, {}
    rows = (
        Result.objects.filter(_series_filter(series), discarded=False)
        .values_list("setup_id", "metric_id")
        .annotate(
            run_ids=ArrayAgg("run_id", order_by=("run_id", "trial")),
            values=ArrayAgg("value", order_by=("run_id", "trial")),
        )
        .order_by()
    )
    runs = {
        run_id: (kernel, tuple(p for p in patches.split("+") if p))
        for run_id, kernel, patches in Run.objects.filter(
            setup_id__in={setup_id for setup_id, _ in series}
        ).values_list("pk", "kernel__version", "patch_set__name")
    }
    # every run once, in ``detection.ordered``'s order (a run's place depends on it alone)
    ranked = detection.ordered([detection.Point(r, *run, (0.0,)) for r, run in runs.items()])
    rank = {p.run_id: at for at, p in enumerate(ranked)}
    points: dict[SeriesKey, list[detection.Point]] = {key: [] for key in series}
    ordered: dict[SeriesKey, detection.Ordered] = {}
    point = detection.Point
    for setup_id, metric_id, run_ids, values in rows:
        found = [point(r, *runs[r], trials) for r, trials in _by_run(run_ids, values)]
        points[(setup_id, metric_id)] = found
        if all(map(math.isfinite, values)):  # floats (float8), each point usable as it is
            ranks = [rank[p.run_id] for p in found]
            in_order = sorted(range(len(found)), key=ranks.__getitem__)
            ordered[(setup_id, metric_id)] = detection.Ordered([found[i] for i in in_order])
    return points, ordered


def _by_run(run_ids: list[int], values: list[float]) -> Iterable[tuple[int, tuple[float, ...]]]:
    """(run, its trials) from the two arrays, ordered by run then trial."""
    if len(set(run_ids)) == len(run_ids):  # one trial per run, the usual long series
        return zip(run_ids, [(v,) for v in values], strict=True)
    grouped, start = [], 0
    for end in range(1, len(run_ids) + 1):
        if end == len(run_ids) or run_ids[end] != run_ids[start]:
            grouped.append((run_ids[start], tuple(values[start:end])))
            start = end
    return grouped


def load_settings(
    series: Collection[SeriesKey], metrics: Mapping[int, Metric]
) -> dict[SeriesKey, policy.Settings]:
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
    are locked until it ends)."""
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
    points, ordered = _load_points(series)
    return CheckData(
        points=points,
        ordered=ordered,
        settings=load_settings(series, metrics),
        pinned=pinned,
        declared=declared,
        alerts=alerts,
        baselines=baselines,
    )

"""What the detector knows about the runs a compare page shows (reads; dashboards.pure.compare
judges with it): per metric, the series' noise and resolution when every compared run is of
one setup, the settings a Threshold row gives, and the alerts on the candidate runs."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from dashboards.pure.compare import AlertInfo, SeriesContext
from perfdb.alerting import noise_prior
from perfdb.alerting.check_data import detector_settings
from perfdb.alerting.kernel_order import detector_names
from perfdb.detector import detection
from perfdb.models import Alert, Metric, Result, Run, Threshold


def compare_contexts(
    *, base_ids: Sequence[int], new_ids: Sequence[int]
) -> dict[tuple[str, str], SeriesContext]:
    """SeriesContext per (metric name, unit) of the candidate runs. Four queries, plus one for
    the series' results when the runs are of one setup (served by result_series_idx)."""
    setups = set(
        Run.objects.filter(pk__in=[*base_ids, *new_ids]).values_list("setup_id", flat=True)
    )
    metrics = list(Metric.objects.filter(results__run_id__in=new_ids).distinct())
    if not metrics:
        return {}
    alerts: dict[int, list[AlertInfo]] = defaultdict(list)
    rows = Alert.objects.filter(candidate_run_id__in=new_ids, metric__in=metrics).prefetch_related(
        "baseline_runs"
    )
    for a in rows.order_by("pk"):
        alerts[a.metric_id].append(
            AlertInfo(
                pk=a.pk,
                status=a.status,
                direction=a.direction,
                change_pct=a.change_pct,
                method=a.method,
                baseline_run_ids=tuple(sorted(r.pk for r in a.baseline_runs.all())),
            )
        )
    setup_id = next(iter(setups)) if len(setups) == 1 else None
    thresholds: dict[int, tuple[float | None, float | None]] = {}
    points: dict[int, list[detection.Point]] = {}
    if setup_id is not None:
        thresholds = {
            metric_id: (threshold, typical)
            for metric_id, threshold, typical in Threshold.objects.filter(
                workload__setup__id=setup_id, metric__in=metrics
            ).values_list("metric_id", "threshold_pct", "typical_noise_pct")
        }
        points = _series_points(setup_id, [m.pk for m in metrics])
    contexts = {}
    for metric in metrics:
        settings = detector_settings(metric, *thresholds.get(metric.pk, (None, None)))
        pair = None
        if setup_id is not None:
            # the prior the alert check pools from the workload's other setups, as it does
            series = points.get(metric.pk, [])
            settings = noise_prior.with_prior(settings, series, (setup_id, metric.pk))
            pair = detection.pair_context(
                series, set(new_ids), settings=settings, better=metric.better
            )
        contexts[(metric.name, metric.unit)] = SeriesContext(
            settings=settings,
            pair=pair,
            alerts=tuple(alerts[metric.pk]),
            base_run_ids=tuple(base_ids),
            new_run_ids=tuple(new_ids),
        )
    return contexts


def _series_points(setup_id: int, metric_ids: list[int]) -> dict[int, list[detection.Point]]:
    """Each metric's series of the setup as detector points (kept trials per run)."""
    rows = (
        Result.objects.filter(setup_id=setup_id, metric_id__in=metric_ids, discarded=False)
        .order_by("metric_id", "run_id", "trial")
        .values_list("metric_id", "run_id", "run__kernel__version", "run__patch_set__name", "value")
    )
    runs: dict[int, dict[int, tuple[str, str, list[float]]]] = defaultdict(dict)
    for metric_id, run_id, kernel, patches, value in rows:
        runs[metric_id].setdefault(run_id, (kernel, patches, []))[2].append(value)
    named = detector_names({k for by_run in runs.values() for k, _, _ in by_run.values()})
    return {
        metric_id: [
            detection.Point(
                run_id=run_id,
                kernel=named[kernel],
                patches=tuple(p for p in patches.split("+") if p),
                values=tuple(values),
            )
            for run_id, (kernel, patches, values) in by_run.items()
        ]
        for metric_id, by_run in runs.items()
    }

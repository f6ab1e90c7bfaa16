"""The detector's prior for a series: its workload/metric's typical noise, pooled from the
workload's other setups.

A short series learns its noise from few kernel-to-kernel moves, so the step test's critical
value is large and a 3-sigma step in a series of 10-17 kernels is often missed
(docs/detector.md). A lab runs one workload on many setups, and their series of one metric
have similar noise; ``policy.pooled_level_noise_pct`` (the median setup's robust level noise)
says how noisy such a series typically is, and the detector shrinks a short series' estimate
toward it (``Settings.prior_noise_pct``). Staff can still set it by hand
(``Threshold.typical_noise_pct``), which wins.

Only series shorter than ``Settings.budget_kernels`` stock kernels ask (a longer one knows its
own noise); the other setups' levels are cached per setup (an upload reads again only the
setups it wrote to) and each setup's vote per data version (``perfdb.cache.cached``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import replace
from functools import partial
from itertools import compress
from operator import attrgetter, itemgetter, not_

from django.db.models import Avg

from perfdb import detector
from perfdb.alerting.kernel_order import detector_names
from perfdb.cache import CATALOG, cache_key, cached, cached_in_scope, cached_per_setup
from perfdb.models import Result, Setup

SeriesKey = tuple[int, int]  # (setup id, metric id)
_KERNEL, _PATCHES = attrgetter("kernel"), attrgetter("patches")


def _levels_by_setup(workload_id: int, metric_id: int) -> dict[int, list[float]]:
    """Every setup's stock series of this workload/metric that has one: each setup's levels
    cached per setup version (``perfdb.cache.setups``), so after an upload only the setups
    it wrote to are read again (every setup of a workload at 10M results: 0.6-0.8 s)."""
    setup_ids = cached_in_scope(
        cache_key("workload-setups", workload=workload_id),
        CATALOG,
        lambda: list(Setup.objects.filter(workload_id=workload_id).values_list("id", flat=True)),
    )
    levels = cached_per_setup(
        cache_key("noise-levels", metric=metric_id),
        setup_ids,
        partial(levels_of, metric_id=metric_id),
    )
    return {setup_id: series for setup_id, series in levels.items() if series}


def levels_of(setup_ids: list[int], metric_id: int) -> dict[int, list[float]]:
    """These setups' stock series of the metric: one level per kernel, in kernel order (the
    mean of its runs' kept trials, one query grouped by run); empty for a setup with none."""
    rows = (
        Result.objects.filter(
            setup_id__in=setup_ids,
            metric_id=metric_id,
            discarded=False,
            run__patch_set__name="",
        )
        .values_list("setup_id", "run__kernel__version", "run_id")
        .annotate(level=Avg("value"))
        .order_by()
    )
    runs: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for setup_id, kernel, _, level in rows:
        runs[setup_id][kernel].append(level)
    named = detector_names({k for by_kernel in runs.values() for k in by_kernel})
    return {
        setup_id: [
            sum(runs[setup_id][k]) / len(runs[setup_id][k])
            for k in sorted(runs[setup_id], key=lambda k: detector.kernel_order(named[k]))
        ]
        for setup_id in setup_ids
    }


def _workload_of(setup_id: int) -> int | None:
    return Setup.objects.filter(pk=setup_id).values_list("workload_id", flat=True).first()


def typical_noise(series: Collection[SeriesKey]) -> dict[SeriesKey, float]:
    """The pooled prior (%) of each (setup, metric) that has one (another setup of its
    workload with >= 6 stock kernels of that metric): the median vote of the workload's
    other setups (``policy.pooled_level_noise_pct`` of their series). Cached: a check asks
    no query for a workload/metric asked before (a setup's workload never changes), and
    the votes are counted once per data version, not once per series asking (every setup
    of a workload, ~8,000 at 100M results, for each compare page)."""
    found: dict[SeriesKey, float] = {}
    for setup_id, metric_id in series:
        workload_id = cached(
            cache_key("setup-workload", setup=setup_id), partial(_workload_of, setup_id)
        )
        if workload_id is None:
            continue
        votes = cached(
            cache_key("noise-votes", workload=workload_id, metric=metric_id),
            partial(_votes_by_setup, workload_id, metric_id),
        )
        # a setup's own series never votes for its own prior
        ordered = [vote for other, vote in votes if other != setup_id]
        value = detector.median_noise(ordered)
        if value is not None and value > 0:
            found[(setup_id, metric_id)] = value
    return found


def _votes_by_setup(workload_id: int, metric_id: int) -> list[tuple[int, float]]:
    """Each setup's vote (its series' robust level noise, as ``pooled_level_noise_pct``
    counts it: none below 6 stock kernels), in the votes' order."""
    votes = []
    for setup_id, levels in _levels_by_setup(workload_id, metric_id).items():
        vote = detector.pooled_level_noise_pct([levels])[0]
        if vote is not None:
            votes.append((setup_id, vote))
    return sorted(votes, key=itemgetter(1))


def stock_kernels_reach(points: Sequence[detector.Point], count: int) -> bool:
    """Have the points ``count`` stock kernels? Counted until they do: a long series (which
    every check asks about) answers after a few dozen points, not after all of them."""
    seen: set[str] = set()
    for kernel in compress(map(_KERNEL, points), map(not_, map(_PATCHES, points))):
        seen.add(kernel)
        if len(seen) >= count:
            return True
    return len(seen) >= count


def with_prior(
    settings: detector.Settings, points: Sequence[detector.Point], key: SeriesKey
) -> detector.Settings:
    """``settings`` with the pooled prior, for a short series without a staff prior."""
    if settings.prior_noise_pct is not None:
        return settings
    if stock_kernels_reach(points, settings.budget_kernels):
        return settings
    prior = typical_noise([key]).get(key)
    return settings if prior is None else replace(settings, prior_noise_pct=prior)

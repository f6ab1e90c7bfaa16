"""The regression detector: a series of runs in, changes out.

One setup's runs of one metric (``Point``: kernel, patch set, trials; a kernel whose name
carries no order, a commit, named ``with_order``) go in; the changes
worth an alert come out (``Change``: the candidate run, its baseline runs, the change, the
test's p-value, confirmed or pending). Pure Python, no Django (an import-linter contract in
pyproject.toml): the service in ``perfdb.alerting`` loads the series and stores the alerts,
the compare page asks ``pair_context`` and ``judge`` for the same verdicts.

- ``detection``: ``detect`` (what a check runs per upload), A/B tests, short series read
  kernel by kernel (``short_scan``), ``pair_context`` for the compare page;
- ``policy``: ``Settings``, the one test (``judge``), the noise model of long series;
- ``series`` and ``stats``: points in kernel order and the step scan of long series;
- ``placement``: how sure a step is of its first kernel;
- ``scan_filter``, ``order_stats``, ``trial_spread``, ``resolution``: the same answers,
  computed fast on long series.

How it works and how well: docs/detector.md.
"""

from perfdb.detector.detection import (
    PairContext,
    baseline_runs,
    change_points,
    check,
    detect,
    ordered,
    pair_context,
    trial_noise,
)
from perfdb.detector.policy import BETTER_CHOICES, Noise, Settings, Verdict, judge
from perfdb.detector.series import Change, Point, kernel_name, kernel_order, points_from, with_order

__all__ = [
    "BETTER_CHOICES",
    "Change",
    "Noise",
    "PairContext",
    "Point",
    "Settings",
    "Verdict",
    "baseline_runs",
    "change_points",
    "check",
    "detect",
    "judge",
    "kernel_name",
    "kernel_order",
    "ordered",
    "pair_context",
    "points_from",
    "trial_noise",
    "with_order",
]

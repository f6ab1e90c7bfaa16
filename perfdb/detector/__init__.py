"""The regression detector: a series of runs in, changes out.

One setup's runs of one metric (``Point``: kernel, patch set, trials; a kernel whose name
carries no order, a commit, named ``with_order``) go in; the changes worth an alert come out
(``Change``: the candidate run, its baseline runs, the change, the test's p-value, confirmed
or pending). ``check`` is the question a regression check asks of a series for an upload's
runs. Pure Python, no Django (an import-linter contract in pyproject.toml): the service in
``perfdb.alerting`` loads the series, asks ``check`` and stores the alerts through the names
here; the compare page asks ``pair_context`` and ``judge`` for the same verdicts.

The stages, from the top (each imports only the ones below it):

- ``detection``: ``check`` (what the service asks: the series read once, first, each test
  handed what it needs), ``detect``, ``change_points``, ``pair_context``: the order the
  stages run in;
- ``drift``: a series a little worse kernel after kernel (``drift_changes``, method
  ``DRIFT_METHOD``), the slope of its trailing window;
- ``short_scan``: a short series read kernel by kernel, each kernel against its level;
- ``ab_compare``: a patched build or a pinned baseline judged when it arrives, and the
  ``Change`` a test's verdict makes;
- ``long_series``: a long series analysed once (its noise model, read from its moves), the
  changes its step scan shows;
- ``noise``: the trials' noise an A/B test, a short series and a drift's window are judged
  with (trials, repeated builds, the prior);
- ``points``: ``Point`` and ``Change``, the trials that are numbers, points in kernel order,
  stock runs by kernel;
- ``policy``: ``Settings``, the workload's pooled prior, the one test (``judge``), the
  metric's quantum;
- ``step_scan``: the step scan of a long series' levels and their variances, its quiet
  stretches skipped with numpy; ``placement``: how sure a step is of its first kernel;
- ``stats``: statistics of plain sequences of floats, a long series' sorted with numpy.

How it works and how well: docs/detector.md.
"""

from perfdb.detector.ab_compare import baseline_runs
from perfdb.detector.detection import (
    PairContext,
    change_points,
    check,
    detect,
    pair_context,
)
from perfdb.detector.drift import METHOD as DRIFT_METHOD
from perfdb.detector.noise import trial_noise
from perfdb.detector.points import (
    Change,
    Columns,
    Ordered,
    Point,
    kernel_key,
    kernel_name,
    kernel_order,
    ordered,
    points_from,
    with_order,
)
from perfdb.detector.policy import (
    BETTER_CHOICES,
    Noise,
    Settings,
    Verdict,
    judge,
    median_noise,
    pooled_level_noise_pct,
    usable_threshold_pct,
)
from perfdb.detector.stats import Floats

__all__ = [
    "BETTER_CHOICES",
    "Change",
    "DRIFT_METHOD",
    "Columns",
    "Floats",
    "Noise",
    "Ordered",
    "PairContext",
    "Point",
    "Settings",
    "Verdict",
    "baseline_runs",
    "change_points",
    "check",
    "detect",
    "judge",
    "kernel_key",
    "kernel_name",
    "kernel_order",
    "median_noise",
    "ordered",
    "pair_context",
    "points_from",
    "pooled_level_noise_pct",
    "trial_noise",
    "usable_threshold_pct",
    "with_order",
]

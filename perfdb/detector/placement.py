"""How sure the detector is of the kernel a step starts at.

The step scan names one first kernel. When the step is small next to the noise, the data
often cannot tell that kernel from its neighbour: the kernel just before it may read like the
new level, or the first one like the old. No rule places such steps much better (in the
accuracy bench a placement that knows the true levels is exact on 94.6-95.4 % of the caught
steps, the detector on 93.3-94.5 %: docs/detector.md, "Long series"), so an alert
says instead how likely its kernel is, and which neighbour is the next likeliest: an
engineer reruns or bisects those two before blaming one.

``shares``: the posterior of the step's first kernel among the kernels within ``REACH`` of
the scan's, from the same two-level model the scan tests (each kernel's level with its
variance from the series' noise model, its distance from its level weighed as Student's t),
a uniform prior on where the step starts and flat priors on the two levels (integrated out:
the log-precision term below). Pure, O(kernels of the step's two segments).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

REACH = 2  # kernels either side of the scan's first kernel that are weighed against it

Found = tuple[float | None, tuple[int, float] | None]  # (share, (run, share) of the runner-up)


class Placement:
    """Where a step starts, as likely as the data say, worked out the first time it is read
    (``find``): a check returns every step of a series at each upload but stores only the
    few that are new, confirmed or moved."""

    __slots__ = ("_find", "_found")

    def __init__(self, find: Callable[[], Found]) -> None:
        self._find = find
        self._found: Found | None = None

    def found(self) -> Found:
        if self._found is None:
            self._found = self._find()
        return self._found


def shares(
    levels: Sequence[float],
    variances: Sequence[float],
    kept: Sequence[int],
    first: int,
    dof: float,
) -> list[tuple[int, float]]:
    """(kernel index, posterior share) of each possible first kernel near ``first``,
    likeliest first; the shares sum to 1.

    ``kept``: the kernels of the step's two segments in order (its baseline and the kernels
    from ``first`` on, outliers left out), ``first`` among them. A first kernel needs one
    kept kernel before it and is one of the kept ones. ``dof``: how well the noise is known
    (``policy.Noise.dof``); each kernel's distance from its level is weighed as Student's t
    with that many degrees of freedom, not as a normal: with an estimated noise a kernel far
    from both levels (one between them, as in a change that took two kernels) must not make
    one placement look certain.
    """
    at = kept.index(first)
    weights = [1.0 / variances[i] for i in kept]
    values = [levels[i] for i in kept]
    splits = range(max(1, at - REACH), min(len(kept) - 1, at + REACH) + 1)
    logs = {kept[s]: _log_posterior(values, weights, s, dof) for s in splits}
    top = max(logs.values())
    odds = {k: math.exp(v - top) for k, v in logs.items()}
    total = math.fsum(odds.values())
    return sorted(((k, o / total) for k, o in odds.items()), key=lambda kv: (-kv[1], kv[0]))


def _log_posterior(values: list[float], weights: list[float], split: int, dof: float) -> float:
    """log P(the new level starts at ``split``), up to a constant shared by the splits: each
    level at its weighted mean, the kernels' t log-likelihood about it, less half the log of
    the two means' precisions (the flat priors on the levels integrated out)."""
    before = _fit(values[:split], weights[:split], dof)
    after = _fit(values[split:], weights[split:], dof)
    return before[0] + after[0] - 0.5 * math.log(before[1] * after[1])


def _fit(values: list[float], weights: list[float], dof: float) -> tuple[float, float]:
    """(t log-likelihood of the values about their weighted mean, total weight)."""
    total = math.fsum(weights)
    mean = math.fsum(v * w for v, w in zip(values, weights, strict=True)) / total
    loglik = math.fsum(
        -(dof + 1) / 2 * math.log1p(w * (v - mean) ** 2 / dof)
        for v, w in zip(values, weights, strict=True)
    )
    return loglik, total

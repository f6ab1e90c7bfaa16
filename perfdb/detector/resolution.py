"""A metric's quantum as its values show it (``policy.resolution_of``), fast on long series.

The exact test is per value in pure Python (``round(value, d)``, a correctly rounded decimal
conversion): ~1 ms for the 1,000 values of a long series, and a check reads 60 such series.
numpy's ``round`` multiplies by 10**d instead, so its error can differ from Python's by a
few units in the last place of the value, never more (both pick the nearest multiple of
10**-d, or at a half-way point the two neighbours, whose errors are equal up to those
units). The tolerance is 1e-9 of the value, ~10 million such units: a value whose numpy
error is within half the tolerance passes the exact test for certain. Only the others (the
first value that needs more decimals, a value on the edge of the tolerance, a value numpy
cannot scale) go through the exact test, in the order the loop meets them, so the answer
is the loop's, bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from perfdb.detector.order_stats import Floats

VECTOR_FROM = 64  # values: below this the plain loop is as fast


def resolution_of(values: Iterable[float], *, max_decimals: int = 6) -> float | None:
    """The metric's quantum as the values show it: 0.03 and 0.04 s -> 0.01; None if finer.

    The number of decimals every value is written with (``time`` prints 10 ms steps, a
    profile whole ticks). Values needing more than ``max_decimals`` decimals are continuous.
    """
    floats = isinstance(values, Floats)  # floats with their array
    found = values if isinstance(values, Floats) else list(values)
    if len(found) >= VECTOR_FROM and (floats or set(map(type, found)) == {float}):
        decimals = _decimals_vector(found, max_decimals)
    else:
        decimals = decimals_loop(found, 0, max_decimals)
    return None if decimals is None else 10.0**-decimals


def _fits(value: float, decimals: int, max_decimals: int) -> int | None:
    """The fewest decimals >= ``decimals`` that write ``value`` (None: more than the max)."""
    for d in range(decimals, max_decimals + 1):
        if abs(round(value, d) - value) <= 1e-9 * max(1.0, abs(value)):
            return d
    return None


def decimals_loop(values: Iterable[float], decimals: int, max_decimals: int) -> int | None:
    for value in values:
        found = _fits(value, decimals, max_decimals)
        if found is None:
            return None
        decimals = found
    return decimals


def _decimals_vector(values: Sequence[float], max_decimals: int) -> int | None:
    """``decimals_loop`` over floats: the values that surely fit the current decimals are
    skipped a block at a time; the first one that may not is tested exactly."""
    array = values.array if isinstance(values, Floats) else np.asarray(values, dtype=float)
    sure = 0.5e-9 * np.maximum(1.0, np.abs(array))  # half the exact test's tolerance
    # the first value is where the loop starts: tested exactly at once (a pass at 0 decimals
    # would only find it, unless every value is whole)
    first = _fits(values[0], 0, max_decimals)
    if first is None:
        return None
    decimals, at = first, 1
    while at < len(values):
        rest = array[at:]
        with np.errstate(all="ignore"):  # overflow or NaN: not sure, tested exactly
            error = np.abs(np.round(rest, decimals) - rest)
        unsure = np.flatnonzero(~(error <= sure[at:]))
        if not unsure.size:
            break
        at += int(unsure[0])
        found = _fits(values[at], decimals, max_decimals)
        if found is None:
            return None
        decimals, at = found, at + 1
    return decimals

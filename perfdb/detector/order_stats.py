"""Order statistics of a long series' levels with numpy: the floats the sorts give.

The detector reads a series' typical size (its middle |level|) twice per check, and its
kernel-to-kernel moves sorted; a check over 60 series of 1,000 kernels sorted 1,000 Python
floats three times per series for them. numpy sorts (or partitions) the same IEEE values:
every float comes back as it went in, and among floats without a NaN a sorted order is
unique up to equal values, and two equal sizes are the same float (an absolute value is
never -0.0). So the answer is the sort's, bit for bit. A NaN has no place in an order
(Python's sort and numpy's put it in different places): with a NaN or an infinite value
(whose moves are NaN) the plain sort decides.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

VECTOR_FROM = 64  # values: below this the plain sort is as fast


class Floats(list[float]):
    """Python floats that carry their numpy array too (``array``, read-only), for a series'
    levels that several statistics read: converted once, not once per statistic. Made from
    the array (``tolist``: every element a Python float, the array's own); never changed
    after (the array would no longer be the list)."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = np.array(array, dtype=float)  # a native copy no one else holds
        self.array.flags.writeable = False
        super().__init__(self.array.tolist())


def _floats(values: Sequence[float], *, floats: bool = False) -> np.ndarray | None:
    """The values as a float array, for a long sequence of finite floats (an infinite
    level makes a NaN move). ``floats``: the caller knows they are all floats."""
    if type(values) is Floats and len(values) >= VECTOR_FROM:
        array: np.ndarray = values.array
        return array if np.isfinite(array).all() else None
    if len(values) < VECTOR_FROM or not (floats or set(map(type, values)) == {float}):
        return None
    array = np.asarray(values, dtype=float)
    return array if np.isfinite(array).all() else None


def middle_size(values: Sequence[float], *, floats: bool = False) -> float:
    """``sorted(map(abs, values))[len(values) // 2]``: a partition, not a sort, when long.
    ``floats``: the caller knows every value is a float."""
    middle = len(values) // 2
    array = _floats(values, floats=floats)
    if array is None:
        return sorted(map(abs, values))[middle]
    return float(np.partition(np.abs(array), middle)[middle])


def sorted_moves(levels: Sequence[float]) -> list[float]:
    """``sorted(abs_moves(levels))``: for a long sequence of finite floats numpy's
    ``abs(diff)``, as ``abs_moves`` reads such a sequence, sorted in numpy; for others the
    plain sort."""
    array = _floats(levels)
    if array is None:
        return sorted(abs_moves(levels))
    moves: list[float] = np.sort(np.abs(np.diff(array))).tolist()
    return moves


def abs_moves(levels: Sequence[float]) -> list[float]:
    """|x[i+1] - x[i]| for each neighbour pair; numpy for a long series of floats (the same
    IEEE subtraction, the same floats back), plain Python otherwise (ints stay exact)."""
    if len(levels) >= 64 and set(map(type, levels)) == {float}:
        moves: list[float] = np.abs(np.diff(np.asarray(levels, dtype=float))).tolist()
        return moves
    return [abs(b - a) for a, b in zip(levels, levels[1:], strict=False)]

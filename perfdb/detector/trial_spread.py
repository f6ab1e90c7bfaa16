"""Each run's trial spread across a whole series at once: the floats one run at a time gives.

The noise model reads every run's coefficient of variation (``policy.within_run_pct``); one
``numpy.std`` per run was ~40 % of a regression check (9,000 calls for an upload's 43
series of ~200 runs). Runs with the same number of trials go through one ``numpy.std`` over
the rows of a 2-D array: numpy reduces each contiguous row with the loop it uses for one
run alone, so every sd is the same float (tests/perfdb/test_trial_spread.py compares them
bit for bit). The mean is ``stats.mean``'s, per run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfdb.detector import stats


def cv_pcts(groups: Sequence[Sequence[float]]) -> list[float | None]:
    """``stats.coefficient_of_variation_pct`` of each group, in the groups' order."""
    out: list[float | None] = [None] * len(groups)
    by_size: dict[int, list[int]] = {}
    for i, group in enumerate(groups):
        if len(group) >= 2:
            by_size.setdefault(len(group), []).append(i)
    for indexes in by_size.values():
        rows = [groups[i] for i in indexes]
        sds = np.std(np.array(rows, dtype=float), axis=1, ddof=1).tolist()
        for i, row, sd in zip(indexes, rows, sds, strict=True):
            centre = stats.mean(row)
            if centre != 0:
                out[i] = sd / abs(centre) * 100.0
    return out

"""The residual test's critical value for the strongest of the window's starts (opt-in).

``Settings.step_noise = "glr_max"``: the residual likelihood-ratio test of ``scan_glr``,
pooled with the prior as the whole series reads (``"glr_whole"``), with its critical value
raised by ``factor(starts, dof)``. Why: each start's test reads its noise from the residuals
its own split leaves, so under "no step" the start the scan picks (the largest |t|) is the
one whose split took the most out of the residuals: its noise is read smallest exactly
there. Student's t at the residuals' dof is the right critical value for a start fixed in
advance, not for the strongest of ten (docs/detector.md, "fourth pass"). The factor makes
the adaptive maximum exceed the critical value as often as the maximum over the same starts
would with a noise that does not adapt to the start (an independent estimate with the same
dof: the series-wide test's situation), under equal level variances; so it takes back the
false alerts the adaptation adds, no more. Computed once, exactly given the direction of the
levels in the starts' span and by sampling that direction (a fixed seed):
``bench/glr_max_table.py``, whose output ``FACTORS`` is. Pure lookup, no randomness here.

Between tabulated dof: linear; beyond the last: the last excess shrunk as 1 / dof (the
adaptation's share of the residuals); more starts than tabulated: the last row. Tabulated at
the one-tailed level of a series of up to 40 kernels (0.01 / 40 / 2); a longer series' lower
level changes the factor by less than 0.003 (checked at 10x lower, 20 dof).

``Settings.step_noise = "glr_matched"``: the same test with the factor ``matched`` instead, set
by simulating clean series so that the residual test passes as often as the series-wide
test (the default) does under "no step" (``bench/glr_null_table.py``): the default's
conservative estimator included, so larger (1.11 at 6-10 kernels, 1.03-1.04 at 30-40).
Measured, both: docs/detector.md, "Issue 16, fifth pass".
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache

DOF: tuple[float, ...] = (
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 18, 20, 24, 28, 32, 40, 50, 64, 80, 100, 150,
    200, 400,
)  # fmt: skip
# FACTORS[starts][i]: at DOF[i]; bench/glr_max_table.py's output, below the row's first
# dof the model allows (nu >= starts - 1) its first value
FACTORS: dict[int, tuple[float, ...]] = {
    1: (
        1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000,
        1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000,
        1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000,
    ),
    2: (
        1.4343, 1.1697, 1.0883, 1.0552, 1.0390, 1.0297, 1.0238, 1.0198, 1.0170,
        1.0149, 1.0118, 1.0097, 1.0082, 1.0070, 1.0062, 1.0049, 1.0041, 1.0035,
        1.0027, 1.0021, 1.0016, 1.0012, 1.0010, 1.0006, 1.0005, 1.0002,
    ),
    3: (
        1.2798, 1.2798, 1.1469, 1.0941, 1.0668, 1.0518, 1.0421, 1.0354, 1.0304,
        1.0265, 1.0209, 1.0171, 1.0144, 1.0123, 1.0108, 1.0086, 1.0071, 1.0061,
        1.0047, 1.0036, 1.0028, 1.0022, 1.0017, 1.0011, 1.0008, 1.0004,
    ),
    4: (
        1.2862, 1.2862, 1.2862, 1.1290, 1.0915, 1.0701, 1.0566, 1.0472, 1.0404,
        1.0351, 1.0276, 1.0225, 1.0189, 1.0162, 1.0142, 1.0113, 1.0094, 1.0080,
        1.0061, 1.0048, 1.0036, 1.0028, 1.0022, 1.0015, 1.0011, 1.0005,
    ),
    5: (
        1.1961, 1.1961, 1.1961, 1.1961, 1.1235, 1.0948, 1.0752, 1.0617, 1.0521,
        1.0448, 1.0347, 1.0280, 1.0234, 1.0201, 1.0175, 1.0139, 1.0115, 1.0098,
        1.0075, 1.0058, 1.0044, 1.0035, 1.0027, 1.0018, 1.0013, 1.0006,
    ),
    6: (
        1.1466, 1.1466, 1.1466, 1.1466, 1.1466, 1.1025, 1.0872, 1.0734, 1.0625,
        1.0539, 1.0419, 1.0339, 1.0283, 1.0242, 1.0211, 1.0168, 1.0138, 1.0118,
        1.0090, 1.0070, 1.0053, 1.0042, 1.0033, 1.0021, 1.0016, 1.0008,
    ),
    7: (
        1.1145, 1.1145, 1.1145, 1.1145, 1.1145, 1.1145, 1.0923, 1.0779, 1.0670,
        1.0581, 1.0452, 1.0365, 1.0304, 1.0260, 1.0226, 1.0179, 1.0148, 1.0126,
        1.0097, 1.0075, 1.0057, 1.0044, 1.0035, 1.0023, 1.0017, 1.0008,
    ),
    8: (
        1.1008, 1.1008, 1.1008, 1.1008, 1.1008, 1.1008, 1.1008, 1.0883, 1.0726,
        1.0619, 1.0475, 1.0385, 1.0322, 1.0276, 1.0241, 1.0191, 1.0158, 1.0135,
        1.0103, 1.0080, 1.0061, 1.0048, 1.0037, 1.0024, 1.0018, 1.0009,
    ),
    9: (
        1.1078, 1.1078, 1.1078, 1.1078, 1.1078, 1.1078, 1.1078, 1.1078, 1.0903,
        1.0749, 1.0556, 1.0440, 1.0364, 1.0310, 1.0269, 1.0212, 1.0175, 1.0149,
        1.0114, 1.0088, 1.0067, 1.0052, 1.0041, 1.0027, 1.0020, 1.0010,
    ),
    10: (
        1.0949, 1.0949, 1.0949, 1.0949, 1.0949, 1.0949, 1.0949, 1.0949, 1.0949,
        1.0756, 1.0588, 1.0473, 1.0393, 1.0335, 1.0291, 1.0230, 1.0190, 1.0161,
        1.0124, 1.0096, 1.0072, 1.0057, 1.0045, 1.0029, 1.0021, 1.0011,
    ),
    11: (
        1.0831, 1.0831, 1.0831, 1.0831, 1.0831, 1.0831, 1.0831, 1.0831, 1.0831,
        1.0831, 1.0585, 1.0470, 1.0394, 1.0336, 1.0293, 1.0232, 1.0191, 1.0162,
        1.0124, 1.0096, 1.0073, 1.0057, 1.0045, 1.0029, 1.0022, 1.0011,
    ),
    12: (
        1.0676, 1.0676, 1.0676, 1.0676, 1.0676, 1.0676, 1.0676, 1.0676, 1.0676,
        1.0676, 1.0676, 1.0532, 1.0440, 1.0374, 1.0324, 1.0255, 1.0210, 1.0178,
        1.0136, 1.0105, 1.0080, 1.0062, 1.0049, 1.0032, 1.0024, 1.0012,
    ),
}  # fmt: skip


@lru_cache(maxsize=4096)
def factor(starts: int, dof: float) -> float:
    """The critical value's multiplier for the strongest of ``starts`` tested starts whose
    residuals have ``dof`` degrees of freedom (1.0 for one start: Student's t is exact)."""
    if starts <= 1:
        return 1.0
    row = FACTORS[min(starts, max(FACTORS))]
    if dof <= DOF[0]:
        return row[0]
    if dof >= DOF[-1]:
        return 1.0 + (row[-1] - 1.0) * DOF[-1] / dof
    at = bisect_right(DOF, dof)
    low, high = DOF[at - 1], DOF[at]
    share = (dof - low) / (high - low)
    return row[at - 1] + share * (row[at] - row[at - 1])


# ``step_noise="glr_matched"``: the factor by the kernels behind the residuals (own dof + 2),
# set so that under "no step" the residual test passes at the newest kernel as often as the
# series-wide test (the default) does there; bench/glr_null_table.py's output. Between
# tabulated kernels: linear; beyond the last: the last factor.
MATCHED_KERNELS: tuple[int, ...] = (
    6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
    29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 44, 48, 56, 64, 80,
)  # fmt: skip
MATCHED: tuple[float, ...] = (
    1.1157, 1.1227, 1.1121, 1.1115, 1.1139, 1.0775, 1.0818, 1.0782, 1.0777, 1.0735,
    1.0567, 1.0549, 1.0509, 1.0505, 1.0541, 1.0467, 1.0511, 1.0538, 1.0492, 1.0459,
    1.0406, 1.0466, 1.0391, 1.0412, 1.0325, 1.0444, 1.0436, 1.0406, 1.0373, 1.0349,
    1.0342, 1.0372, 1.0306, 1.0397, 1.0389, 1.0301, 1.0383, 1.0258, 1.0251, 1.0239,
)  # fmt: skip


def matched(prior_dof: float, starts: int, dof: float) -> float:
    """The critical value's multiplier matched to the series-wide test's false passes, for
    residuals of ``dof`` degrees of freedom of which ``prior_dof`` are the prior's (0 when
    the series is not pooled with it); ``starts`` is not used (the table is by kernels,
    with the starts a clean series of that length has tested)."""
    return _matched(dof - prior_dof + 2)


@lru_cache(maxsize=4096)
def _matched(kernels: float) -> float:
    if kernels <= MATCHED_KERNELS[0]:
        return MATCHED[0]
    if kernels >= MATCHED_KERNELS[-1]:
        return MATCHED[-1]
    at = bisect_right(MATCHED_KERNELS, kernels)
    low, high = MATCHED_KERNELS[at - 1], MATCHED_KERNELS[at]
    share = (kernels - low) / (high - low)
    return MATCHED[at - 1] + share * (MATCHED[at] - MATCHED[at - 1])

"""Compute ``perfdb/scan_max.py``'s table: how much higher the residual test's critical value
must be for the strongest of the window's starts than for one start fixed in advance.

    python bench/glr_max_table.py > /tmp/table.txt   # ~7 min of CPU; paste into scan_max.py

Under "no step", with equal level variances, the m starts' z statistics are projections of the
levels onto m unit contrasts u_j (baseline kernels -1/b, kernels after +1/a) spanning a space U
of dimension d. Write the levels' component in U as r * theta (r^2 ~ chi2(d), theta uniform on
its sphere, independent) and h(theta) = max_j (u_j . theta)^2. The strongest start's
residual test (``step_noise="glr"``) reads its noise from everything its split leaves:
    t_max^2 = nu * r^2 h / (r^2 (1 - h) + chi2(k)),  k = nu + 1 - d,
so the noise is smallest at the start the scan picks; a noise that does not adapt (an
independent estimate with the same nu dof, as the series-wide one) gives
    z_max^2 / s^2 = nu * r^2 h / chi2(nu).
Given theta both tails are exact (a beta and an F tail), so only theta is sampled (a fixed
seed: the table is computed once, here). For each (starts m, dof nu) the factor is the
critical value c at which the adaptive maximum exceeds c as often as the non-adaptive maximum
exceeds Student's t critical value at ``TAIL`` (the scan's per-kernel level for a series of
up to 40 kernels): the false alerts the residual test adds by adapting its noise to the
start, taken back; what the maximum over starts costs the series-wide test (its budget per
kernel, spent on the strongest of ten starts) is left as the default spends it.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from scipy import optimize
from scipy import stats as scipy_stats

TAIL = 0.01 / 40 / 2  # one-tailed: Settings.series_alpha / budget_kernels, two-sided
BASELINE = 8  # kernels before the earliest start (the factor moves < 0.01 from 4 to 30)
STARTS = range(1, 13)
DOF = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 18, 20, 24, 28, 32, 40, 50, 64, 80, 100,
       150, 200, 400)  # fmt: skip
SAMPLES = 200_000


def contrasts(starts: int, baseline: int = BASELINE) -> np.ndarray:
    """Unit contrasts of the starts j = t - m + 1 .. t against everything before j."""
    n = baseline + starts
    rows = []
    for j in range(baseline, n):
        w = np.zeros(n)
        w[:j] = -1 / j
        w[j:] = 1 / (n - j)
        rows.append(w / np.linalg.norm(w))
    return np.array(rows)


def largest_share(starts: int, seed: int = 16) -> tuple[np.ndarray, int]:
    """h(theta) for SAMPLES directions theta uniform in the contrasts' span, and its dim."""
    u = contrasts(starts)
    basis, _ = np.linalg.qr(u.T)
    dim = int(np.linalg.matrix_rank(u))
    theta = np.random.default_rng(seed).standard_normal((SAMPLES, dim))
    theta /= np.linalg.norm(theta, axis=1, keepdims=True)
    projections = (u @ basis[:, :dim]) @ theta.T
    return (projections**2).max(axis=0), dim


def adaptive_tail(c: float, h: np.ndarray, dim: int, nu: float) -> float:
    """P(t_max > c): r^2 / (r^2 + chi2(k)) ~ Beta(d/2, k/2) must exceed c^2 / (h (nu + c^2))."""
    need = c * c / (nu + c * c)
    k = nu + 1 - dim
    if k <= 0:
        return float((h > need).mean())
    x = np.minimum(need / h, 1.0)
    return float(np.where(h > need, scipy_stats.beta.sf(x, dim / 2, k / 2), 0.0).mean())


def fixed_tail(c: float, h: np.ndarray, dim: int, nu: float) -> float:
    """P(z_max^2 / s^2 > c^2) with s^2 ~ chi2(nu) / nu independent: an F(d, nu) tail."""
    return float(scipy_stats.f.sf(c * c / (h * dim), dim, nu).mean())


def factor(h: np.ndarray, dim: int, nu: float) -> float:
    t_crit = float(scipy_stats.t.isf(TAIL, nu))
    target = math.log(fixed_tail(t_crit, h, dim, nu))
    gap = lambda c: math.log(max(adaptive_tail(c, h, dim, nu), 1e-300)) - target  # noqa: E731
    if gap(t_crit) <= 0:
        return 1.0
    high = t_crit * 1.05
    while gap(high) > 0:
        high *= 1.2
    return float(optimize.brentq(gap, t_crit, high, xtol=1e-6)) / t_crit


def main() -> None:
    print(f"DOF = {DOF}")
    print("FACTORS = {")
    for starts in STARTS:
        h, dim = largest_share(starts)
        row = [1.0 if starts == 1 else factor(h, dim, nu) for nu in DOF]
        print(f"    {starts}: ({', '.join(f'{f:.4f}' for f in row)}),")
        sys.stdout.flush()
    print("}")


if __name__ == "__main__":
    main()

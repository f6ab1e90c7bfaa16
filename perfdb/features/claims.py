"""Is a stated change borne out by the stored runs? Pure: values in, a verdict out.

A claim says "candidate is +4.7 % against baseline". With at least two values a side the
data give a confidence interval of the change (Welch, at the policy's level, 1 - alpha): a
stated figure inside it (widened by the figure's own rounding) is *supported* when
``perfdb.detector.policy.judge`` finds the change significant (or the claim is "no change"), else
*not testable* (consistent, but these runs cannot show it); outside it, *contradicted*.
With one value on a side there is no interval: the stored values give the change exactly,
so a stated figure further from it than its rounding is *contradicted* (002's text says
+4.7 % where its Table 8 gives +4.3 %), and one that agrees is *not testable with n = 1*.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from statistics import fmean

from scipy import stats as scipy_stats

from perfdb.detector import policy, stats
from perfdb.detector.points import finite

SUPPORTED, CONTRADICTED, NOT_TESTABLE, NO_DATA = (
    "supported",
    "contradicted",
    "not testable",
    "no data",
)


@dataclass(frozen=True)
class ClaimCheck:
    verdict: str
    computed_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    tolerance_pct: float
    reason: str


def rounding_of(stated: float) -> float:
    """Half a unit in the last printed digit: 4.7 -> 0.05, 10 -> 0.5, 24.0 (read as 24) -> 0.5."""
    exponent = Decimal(repr(stated)).normalize().as_tuple().exponent
    decimals = max(0, -int(exponent)) if isinstance(exponent, int) else 0
    return 0.5 * 10.0**-decimals


def _interval(base: Sequence[float], new: Sequence[float], level: float) -> tuple[float, float]:
    """Welch interval of mean(new) - mean(base), as % of |mean(base)|."""
    m1, m2 = fmean(base), fmean(new)
    v1 = sum((x - m1) ** 2 for x in base) / (len(base) - 1) / len(base)
    v2 = sum((x - m2) ** 2 for x in new) / (len(new) - 1) / len(new)
    se = math.sqrt(v1 + v2)
    diff = m2 - m1
    if se == 0:
        low = high = diff
    else:
        dof = (v1 + v2) ** 2 / (
            (v1**2 / (len(base) - 1) if v1 else 0) + (v2**2 / (len(new) - 1) if v2 else 0)
        )
        t = float(scipy_stats.t.ppf(0.5 + level / 2, dof))
        low, high = diff - t * se, diff + t * se
    scale = 100 / abs(m1)
    return low * scale, high * scale


def check_claim(
    base_values: Sequence[float],
    new_values: Sequence[float],
    stated_pct: float,
    better: str,
    tolerance_pct: float | None = None,
    settings: policy.Settings | None = None,
) -> ClaimCheck:
    settings = settings or policy.Settings()
    base, new = finite(base_values), finite(new_values)
    tolerance = rounding_of(stated_pct) if tolerance_pct is None else tolerance_pct
    if not base or not new:
        return ClaimCheck(NO_DATA, None, None, None, tolerance, "no stored values on a side")
    if fmean(base) == 0:
        return ClaimCheck(NO_DATA, None, None, None, tolerance, "the baseline mean is 0")
    computed = stats.relative_change_pct(base, new)
    said = f"the claim says {stated_pct:+g} %, the stored runs give {computed:+.2f} %"
    if len(base) < 2 or len(new) < 2:
        if abs(computed - stated_pct) > tolerance * (1 + 1e-9) + 1e-9:
            why = f"{said} (n = {len(base)} and {len(new)}; ±{tolerance:g} for its rounding)"
            return ClaimCheck(CONTRADICTED, computed, None, None, tolerance, why)
        why = f"{said}: they agree, but one value on a side cannot tell a change from noise"
        return ClaimCheck(NOT_TESTABLE, computed, None, None, tolerance, why)
    level = 1 - settings.alpha
    low, high = _interval(base, new, level)
    inside = low - tolerance <= stated_pct <= high + tolerance
    where = f"{level:.0%} interval {low:+.2f} … {high:+.2f} %"
    if not inside:
        return ClaimCheck(CONTRADICTED, computed, low, high, tolerance, f"{said}; {where}")
    verdict = policy.judge(base, new, better if better != "none" else "higher", settings=settings)
    if stated_pct == 0 or verdict.significant:
        why = f"{said}; {where}; {verdict.reason}"
        return ClaimCheck(SUPPORTED, computed, low, high, tolerance, why)
    why = f"{said}; {where}, but the change is not significant ({verdict.reason})"
    return ClaimCheck(NOT_TESTABLE, computed, low, high, tolerance, why)

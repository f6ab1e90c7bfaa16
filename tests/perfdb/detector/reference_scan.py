"""The straightforward step scan ``step_scan.step_scan`` replaced, kept as the reference the fast
scan and its filter are held against, with the random rules and series they are tried on
(a helper, not a test module)."""

import math
import random

from scipy import stats as scipy_stats

from perfdb.detector import step_scan


def _reference_candidate(levels, variances, outlier, prefix, j, t, start, rule):
    lo = max(start, j - rule.baseline_window)
    b_sum, b_var, b_n = prefix.range(lo, j)
    after = [i for i in range(j, t + 1) if not outlier[i]]
    if b_n < 2 or not after:
        return None
    before_mean = b_sum / b_n
    after_mean = math.fsum(levels[i] for i in after) / len(after)
    diff = after_mean - before_mean
    if abs(diff) < rule.min_fraction * abs(before_mean) or abs(diff) <= rule.min_absolute:
        return None
    se = math.sqrt(b_var / b_n**2 + math.fsum(variances[i] for i in after) / len(after) ** 2)
    z = diff / se if se > 0 else math.copysign(math.inf, diff)
    if abs(z) < rule.critical:
        return None
    if len(after) >= 2:
        spread = math.fsum((levels[i] - after_mean) ** 2 / variances[i] for i in after)
        if spread > rule.homogeneity[min(len(after) - 1, len(rule.homogeneity) - 1)]:
            return None
    before = tuple(i for i in range(lo, j) if not outlier[i])
    if 2 <= len(before) <= step_scan.SHORT_BASELINE:
        # a short baseline that disagrees with itself: the step must also pass without the
        # baseline kernel farthest from the new level
        centre = math.fsum(levels[i] for i in before) / len(before)
        spread = math.fsum((levels[i] - centre) ** 2 / variances[i] for i in before)
        if spread > rule.homogeneity[min(len(before), len(rule.homogeneity)) - 1]:
            far = max(before, key=lambda i: abs(levels[i] - after_mean))
            rest = [i for i in before if i != far]
            trimmed = after_mean - math.fsum(levels[i] for i in rest) / len(rest)
            var = (
                math.fsum(variances[i] for i in rest) / len(rest) ** 2
                + math.fsum(variances[i] for i in after) / len(after) ** 2
            )
            if (
                trimmed * diff <= 0
                or abs(trimmed) <= rule.min_absolute
                or abs(trimmed) < rule.min_fraction * abs(after_mean - trimmed)
                or (var > 0 and abs(trimmed) / math.sqrt(var) < rule.critical)
            ):
                return None
    step = step_scan.Step(j, t, z, before, before_mean, after_mean, len(after) >= 2)
    return step, abs(z)


def _reference_back(levels, variances, outlier, steps, best, t, rule):
    """Is ``best`` a return, within ``rule.excursion`` kernels, to the level before the last
    step: nearer it than the level between, and no step from it would pass?"""
    if best is None or not best.confirmed or not steps:
        return False
    away = steps[-1]
    if best.index - away.index > rule.excursion:
        return False
    old = away.before_mean
    after = [i for i in range(best.index, t + 1) if not outlier[i]]
    new = math.fsum(levels[i] for i in after) / len(after)
    if abs(new - old) >= abs(new - best.before_mean):
        return False
    var = math.fsum(variances[i] for i in away.before) / len(away.before) ** 2
    var += math.fsum(variances[i] for i in after) / len(after) ** 2
    diff = abs(new - old)
    small = diff < rule.min_fraction * abs(old) or diff <= rule.min_absolute
    return small or diff < rule.critical * math.sqrt(var)


def reference_scan(levels, variances, rule):
    n = len(levels)
    outlier = [False] * n
    prefix = step_scan.Prefix()
    start, steps, pending = 0, [], None
    for t in range(n):
        if pending is not None and step_scan.cleared(levels[t], pending):
            outlier[t - 1] = True
            prefix.drop_last()
        best, strongest = None, 0.0
        window = range(max(start + 1, t - rule.window + 1), t + 1)
        for j in window:
            if outlier[j]:
                continue
            found = _reference_candidate(levels, variances, outlier, prefix, j, t, start, rule)
            if found is not None and (best is None or found[1] > strongest):
                best, strongest = found
        pending = None
        if _reference_back(levels, variances, outlier, steps, best, t, rule):
            # an excursion: the last step's kernels are outliers, its segment goes on
            away = steps.pop()
            for i in range(away.index, best.index):
                outlier[i] = True
            prefix = step_scan.Prefix()
            for i in range(t):
                prefix.push(levels[i], variances[i], not outlier[i])
            start = steps[-1].index if steps else 0
        elif best is not None and best.confirmed:
            steps.append(best)
            start = best.index
        elif best is not None:
            pending = best
        prefix.push(levels[t], variances[t], True)
    return step_scan.Scan(tuple(steps), pending, frozenset(i for i in range(n) if outlier[i]))


def _rule(rng: random.Random) -> step_scan.ScanRule:
    """A random rule."""
    window = rng.choice([1, 2, 4, 10, 12])
    return step_scan.ScanRule(
        critical=rng.choice([2.0, 3.0, 4.5]),
        homogeneity=(math.inf, *(scipy_stats.chi2.isf(0.01, d) for d in range(1, window + 1))),
        min_fraction=rng.choice([0.0, 0.01, 0.02]),
        min_absolute=rng.choice([0.0, 0.5]),
        window=window,
        baseline_window=rng.choice([5, 30]),
        excursion=rng.choice([0, 0, 3, 5]),
    )


def _series(rng: random.Random) -> tuple[list[float], list[float]]:
    """Steps, spikes and bimodal runs; some series on a coarse grid, so |z| ties happen."""
    n = rng.randint(0, 120)
    sd = rng.uniform(0.5, 3.0)
    level, levels = 100.0, []
    for _ in range(n):
        if rng.random() < 0.05:
            level += rng.choice([-1, 1]) * rng.uniform(2, 8) * sd
        value = level + rng.gauss(0, sd)
        if rng.random() < 0.05:
            value += rng.choice([-1, 1]) * rng.uniform(4, 10) * sd  # spike
        levels.append(value)
    if rng.random() < 0.3:
        levels = [float(round(v)) for v in levels]
    variances = [sd * sd / rng.choice([1, 1, 2, 3]) for _ in levels]
    return levels, variances

"""Peer change-point detectors, run on the same series as perfdb's detector, and the peer suite.

Not project dependencies: install them into a throwaway venv and run the bench with it (the
detector itself is pure Python and needs only numpy and scipy)::

    python -m venv /tmp/peers && /tmp/peers/bin/pip install ruptures apache-otava
    /tmp/peers/bin/python bench/detector_accuracy.py --peers
    /tmp/peers/bin/python bench/detector_accuracy.py --lab --peers-matched --workers 1

- ``pelt``: ruptures 1.1 ``KernelCPD(kernel="linear")``, its C implementation of PELT with the
  l2 (mean-shift) cost, on the kernels' levels scaled by a robust sd (MAD of neighbour
  differences / sqrt 2), penalty ``PELT_PENALTY`` x log n, segments of >= 2 kernels;
- ``kernelcpd``: ruptures ``KernelCPD(kernel="rbf")``, same scaling, penalty ``RBF_PENALTY``;
- ``otava``: Apache Otava 0.8 ``analysis.compute_change_points`` (E-divisive split + t-test
  merge) on the levels, its defaults (window 50, max p-value ``OTAVA_PVALUE`` 0.001);
- ``perfherder``: Mozilla Perfherder's test, written here: at each kernel a t statistic of the
  next 12 trials against the previous 12-24 (linearly weighted), a change where t >
  ``PERFHERDER_T`` (7) and is a local maximum, reported once 12 trials after it exist.

The penalties were chosen on seed 1 (not a reported seed) as the smallest giving about one
false alert per 100 clean series on the whole series, the budget our detector is held to.
A peer finds change points; an alert is a change point's kernel and the direction of the
move between the segments around it, counted once per (kernel, direction). Online, the peer
runs on every prefix of the series (as uploads arrive) and each new (kernel, direction) is an
alert.

Those thresholds are the peers' own, tuned on whole series: online, where a peer sees every
prefix, they raise 2-29 false alerts per 100 clean series, so their recall is not comparable
with ours. ``MATCHED`` holds each peer's threshold (the same parameter) for the online replay
at our detector's budget, about one false alert per 100 clean series: ``calibrate`` bisects
it on a log scale over seed 1's clean series (not a reported seed), and ``--peers-matched``
compares recall per cell (step size x trials) with perfdb's at those thresholds
(``matched_cells``); ``--peers-matched --calibrate`` redoes the calibration first.
``EQUAL`` holds them to the false alerts perfdb actually spends on those series, a third of
the budget (``--budget perfdb``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from types import ModuleType

from detector_suite import Series, peer_score, peer_series, score, whole_series_alerts

from perfdb.detector.detection import Point, Settings, change_points

PELT_PENALTY = 8.0  # x log(n), on levels scaled to unit noise (seed 1: 0.9 false / 100 clean)
RBF_PENALTY = 3.0  # seed 1: 1.1 false alerts per 100 clean series
OTAVA_PVALUE = 0.001  # Otava's default
PERFHERDER_T = 7.0
PERFHERDER_WINDOW = 12  # trials before (at least) and after a change

OWN = {
    "pelt": PELT_PENALTY,
    "kernelcpd": RBF_PENALTY,
    "otava": OTAVA_PVALUE,
    "perfherder": PERFHERDER_T,
}
# fewer alerts as the threshold grows (a penalty, a t: 1) or as it shrinks (a p-value: -1)
STRICTER = {"pelt": 1, "kernelcpd": 1, "otava": -1, "perfherder": 1}

BUDGET = 1.0  # false alerts per 100 clean series online: our detector's (issue goal)
CALIBRATION_SEED = 1  # the seed the penalties above were chosen on; not a reported seed
# Online thresholds at BUDGET, by ``calibrate`` on seed 1's 1,000 clean series (200 per trial
# count, detector_accuracy.jobs(1, 1.0)): the most sensitive threshold with at most 1.0 false
# alert per 100 of them pooled over 1-5 trials, bisected on a log scale to within 5 %, kept to
# 4 figures on the strict side. ``detector_accuracy.py --peers-matched --calibrate`` redoes it.
# Seed 1 at these: pelt 1.0 1.5 0.0 1.5 1.0 per trial count, pooled 1.0 (its own 8: 16.9);
# kernelcpd 1.0 1.0 2.0 0.5 0.5, 1.0 (own 3: 3.4); otava 0.5 1.5 2.0 1.0 0.0, 1.0 (own 0.001:
# 13.6); perfherder 0.0 0.5 0.0 1.5 2.0, 0.8 (own 7: 0.1; 5.80 gives 1.1). PELT's penalty
# is 8x its own: at 66.99 its last false alerts are all on prefixes of 4-7 kernels (where
# ``_scaled``'s robust sd rests on 3-6 differences); at 8, 99 of its 169 were.
MATCHED = {"pelt": 66.99, "kernelcpd": 3.853, "otava": 3.316e-05, "perfherder": 5.988}
# Online thresholds at the false alerts perfdb itself spends (``--budget perfdb``): calibrated
# the same way on seed 1's 5,000 clean series (``--calibration-scale 5``), where perfdb with
# the pooled prior (``--lab``) raised 0.36 per 100 (0.9 0.3 0.4 0.1 0.1 by trial count).
# At these: pelt 0.34, kernelcpd 0.32, otava 0.34, perfherder 0.32 per 100, pooled. The fair
# comparison: both sides spend the same false alerts, so recall decides.
EQUAL = {"pelt": 117.6, "kernelcpd": 4.101, "otava": 1.668e-05, "perfherder": 6.576}

Alerts = list[tuple[int, str]]
Rows = list[tuple[Series, dict[str, tuple[Alerts, Alerts]]]]  # detector -> (online, whole)


def _module(name: str) -> ModuleType | None:
    if importlib.util.find_spec(name.split(".")[0]) is None:
        return None
    return importlib.import_module(name)


def available() -> list[str]:
    """The peers that can run here (perfherder always can)."""
    names = []
    if _module("ruptures") is not None:
        names += ["pelt", "kernelcpd"]
    if _module("otava") is not None:
        names.append("otava")
    return [*names, "perfherder"]


def _scaled(levels: Sequence[float]) -> list[list[float]]:
    """Levels centred and divided by a robust sd (median |difference| x 1.4826 / sqrt 2)."""
    moves = [abs(b - a) for a, b in zip(levels, levels[1:], strict=False)]
    sigma = 1.4826 * statistics.median(moves) / math.sqrt(2) if moves else 0.0
    if sigma <= 0:
        sigma = statistics.pstdev(levels) or 1.0
    centre = statistics.median(levels)
    return [[(v - centre) / sigma] for v in levels]


def _ruptures(levels: Sequence[float], kernel: str, penalty: float) -> list[int]:
    if len(levels) < 4:
        return []
    rpt = _module("ruptures")
    assert rpt is not None
    np = importlib.import_module("numpy")
    algo = rpt.KernelCPD(kernel=kernel, min_size=2).fit(np.asarray(_scaled(levels)))
    return [int(b) for b in algo.predict(pen=penalty)[:-1]]


def pelt(
    levels: Sequence[float], values: Sequence[Sequence[float]], penalty: float = PELT_PENALTY
) -> list[int]:
    return _ruptures(levels, "linear", penalty * math.log(len(levels)))


def kernelcpd(
    levels: Sequence[float], values: Sequence[Sequence[float]], penalty: float = RBF_PENALTY
) -> list[int]:
    return _ruptures(levels, "rbf", penalty)


def otava(
    levels: Sequence[float], values: Sequence[Sequence[float]], pvalue: float = OTAVA_PVALUE
) -> list[int]:
    if len(levels) < 3:
        return []
    analysis = _module("otava.analysis")
    assert analysis is not None
    found, _ = analysis.compute_change_points(list(levels), window_len=50, max_pvalue=pvalue)
    return [int(cp.index) for cp in found]


def _weighted(groups: Sequence[Sequence[float]], weighted: bool) -> tuple[float, float, int]:
    """Perfherder's ``analyze``: weighted mean (linear weights, nearest first), variance of
    every value around it, number of values."""
    weights = [1 - i / len(groups) if weighted else 1.0 for i in range(len(groups))]
    total = sum(w * v for w, g in zip(weights, groups, strict=True) for v in g)
    mean = total / sum(w * len(g) for w, g in zip(weights, groups, strict=True))
    flat = [v for g in groups for v in g]
    variance = sum((v - mean) ** 2 for v in flat) / (len(flat) - 1) if len(flat) > 1 else 0.0
    return mean, variance, len(flat)


def _perfherder_t(values: Sequence[Sequence[float]], i: int, back: int) -> tuple[float, int, int]:
    """|t| of kernel i's change, and how many values lie before and after it."""
    before: list[Sequence[float]] = []
    j = i - 1
    while j >= 0 and sum(map(len, before)) < 2 * PERFHERDER_WINDOW and i - j <= back:
        before.append(values[j])
        j -= 1
    after: list[Sequence[float]] = []
    k = i
    while k < len(values) and sum(map(len, after)) < PERFHERDER_WINDOW:
        after.append(values[k])
        k += 1
    if not before or not after:
        return 0.0, 0, 0
    m1, v1, n1 = _weighted(before, True)
    m2, v2, n2 = _weighted(after, False)
    if m1 == m2:
        return 0.0, n1, n2
    t = abs(m2 - m1) / math.sqrt(v1 / n1 + v2 / n2) if v1 + v2 > 0 else math.inf
    return t, n1, n2


def perfherder(
    levels: Sequence[float], values: Sequence[Sequence[float]], threshold: float = PERFHERDER_T
) -> list[int]:
    """treeherder's ``detect_changes`` (min back window 12, max 24, fore window 12, t > 7)."""
    scores, since = [0.0], 0
    enough = [False]
    for i in range(1, len(values)):
        back = min(max(since, PERFHERDER_WINDOW), 2 * PERFHERDER_WINDOW)
        t, n1, n2 = _perfherder_t(values, i, back)
        scores.append(t)
        enough.append(n1 >= PERFHERDER_WINDOW and n2 >= PERFHERDER_WINDOW)
        since = 0 if t > threshold else since + 1
    found = []
    for i in range(1, len(values)):
        if not enough[i] or scores[i] <= threshold or scores[i - 1] > scores[i]:
            continue
        if i + 1 < len(values) and scores[i + 1] > scores[i]:
            continue
        found.append(i)
    return found


# (levels, each kernel's trials, threshold) -> the change points' kernels
PEERS: dict[str, Callable[[Sequence[float], Sequence[Sequence[float]], float], list[int]]] = {
    "pelt": pelt,
    "kernelcpd": kernelcpd,
    "otava": otava,
    "perfherder": perfherder,
}


def _alerts(
    name: str,
    levels: Sequence[float],
    values: Sequence[Sequence[float]],
    better: str,
    threshold: float | None = None,
) -> Alerts:
    """The peer's change points as (kernel, direction): the move between the segments; at
    its own threshold (``OWN``) unless one is given."""
    found = sorted(set(PEERS[name](levels, values, OWN[name] if threshold is None else threshold)))
    edges = [0, *found, len(levels)]
    out = []
    for k, at in enumerate(found):
        before = levels[edges[k] : at]
        after = levels[at : edges[k + 2]]
        up = statistics.fmean(after) > statistics.fmean(before)
        out.append((at, "improvement" if up == (better == "higher") else "regression"))
    return out


def replay(name: str, series: Series, threshold: float | None = None) -> tuple[Alerts, Alerts]:
    """(online alerts, whole-series alerts) of one peer on one series."""
    values = [p.values for p in series.points]
    levels = [statistics.fmean(v) for v in values]
    whole = _alerts(name, levels, values, series.better, threshold)
    return online(name, series, threshold), whole


def online(name: str, series: Series, threshold: float | None = None) -> Alerts:
    """The peer's alerts as uploads arrive: it runs on every prefix, each new (kernel,
    direction) is an alert."""
    values = [p.values for p in series.points]
    levels = [statistics.fmean(v) for v in values]
    out: Alerts = []
    seen: set[tuple[int, str]] = set()
    for t in range(2, len(levels) + 1):
        for alert in _alerts(name, levels[:t], values[:t], series.better, threshold):
            if alert not in seen:
                seen.add(alert)
                out.append(alert)
    return out


def _online_false(job: tuple[str, float, Series]) -> tuple[int, int]:
    """(trials, online alerts) of one peer on one clean series: every alert is false."""
    name, threshold, series = job
    return series.trials, len(online(name, series, threshold))


def false_rates(
    name: str, threshold: float, clean: Sequence[Series], pool: ProcessPoolExecutor
) -> dict[int, float]:
    """Online false alerts per 100 clean series by trials per run, and pooled (key 0)."""
    counts: dict[int, list[int]] = {0: [0, 0]}
    jobs = [(name, threshold, s) for s in clean]
    for trials, false in pool.map(_online_false, jobs, chunksize=16):
        for key in (0, trials):
            cell = counts.setdefault(key, [0, 0])
            cell[0], cell[1] = cell[0] + false, cell[1] + 1
    return {k: 100 * c[0] / c[1] for k, c in sorted(counts.items())}


def calibrate(
    name: str, clean: Sequence[Series], pool: ProcessPoolExecutor, budget: float = BUDGET
) -> tuple[float, dict[float, dict[int, float]]]:
    """The most sensitive threshold whose online false alerts per 100 ``clean`` series
    (pooled) are at most ``budget``, and the probes that found it (threshold -> its
    ``false_rates``; the peer's own threshold is the first).

    Bisection in s, the threshold being ``OWN[name] x e^(STRICTER x s)``: the rate falls as s
    grows (not strictly: a peer's answers on a prefix are not nested in its threshold, but
    near enough for a bisection), from a bracket found by doubling s away from 0 (the peer's
    own threshold), down to a width of 0.05 (5 % of the threshold)."""
    probes: dict[float, dict[int, float]] = {}

    def threshold(s: float) -> float:
        return OWN[name] * math.exp(STRICTER[name] * s)

    def over(s: float) -> bool:
        probes[threshold(s)] = false_rates(name, threshold(s), clean, pool)
        return probes[threshold(s)][0] > budget

    lo, hi = (0.0, 1.0) if over(0.0) else (-1.0, 0.0)  # over budget at lo, within it at hi
    while hi > 0 and over(hi):
        lo, hi = hi, 2 * hi
    while lo < 0 and not over(lo):
        lo, hi = 2 * lo, lo
    while hi - lo > 0.05:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if over(mid) else (lo, mid)
    return threshold(hi), probes


def calibrate_all(
    names: Sequence[str], clean: Sequence[Series], workers: int, budget: float = BUDGET
) -> dict[str, float]:
    """``calibrate`` each peer on ``clean`` to ``budget``, printing the probes and each one's
    false alerts per 100 clean series by trial count at its own and at the calibrated
    threshold."""
    started = time.perf_counter()
    print(f"\n### calibration: online false alerts per 100 of {len(clean)} clean series\n")
    print(
        "| peer | threshold | false / 100 clean, 1-5 trials | pooled | probes (threshold: pooled) |"
    )
    print("|---|---|---|---|---|")
    out: dict[str, float] = {}
    with ProcessPoolExecutor(workers) as pool:
        for name in names:
            out[name], probes = calibrate(name, clean, pool, budget)
            trail = ", ".join(f"{t:.4g}: {r[0]:.1f}" for t, r in probes.items())
            for label, value in (("own", OWN[name]), ("matched", out[name])):
                rates = probes[value]
                cells = " ".join(f"{rates.get(t, math.nan):.1f}" for t in range(1, 6))
                row = f"| {name} ({label}) | {value:.4g} | {cells} | {rates[0]:.2f} |"
                print(f"{row} {trail if label == 'matched' else ''} |")
    print(f"\ncalibration wall {time.perf_counter() - started:.0f} s, {workers} worker(s)")
    return out


def _cells(rows: Rows, name: str, mode: int) -> dict[str, float]:
    """Recall by (sigma, trials), false alerts per 100 series by (kind, trials), precision,
    exact share, for one detector in one mode (0 online, 1 whole series)."""
    hits: dict[tuple[int, int], list[int]] = {}
    false: dict[tuple[str, int], list[int]] = {}
    true_total = exact_total = false_total = 0
    for series, outcomes in rows:
        caught, true, exact, wrong = score(series, outcomes[name][mode])
        if series.kind == "step":
            cell = hits.setdefault((series.sigma_steps, series.trials), [0, 0])
            cell[0], cell[1] = cell[0] + caught, cell[1] + 1
        fb = false.setdefault((series.kind, series.trials), [0, 0])
        fb[0], fb[1] = fb[0] + wrong, fb[1] + 1
        true_total, exact_total, false_total = (
            true_total + true,
            exact_total + exact,
            false_total + wrong,
        )
    out = {f"r{s}x{t}": 100 * c[0] / c[1] for (s, t), c in hits.items()}
    out |= {f"f{k}x{t}": 100 * c[0] / c[1] for (k, t), c in false.items()}
    out["precision"] = 100 * true_total / max(true_total + false_total, 1)
    out["exact"] = 100 * exact_total / max(true_total, 1)
    return out


def side_by_side(rows: Rows, names: Sequence[str]) -> None:
    """The lab suite's headline figures for perfdb and each peer, online and whole series."""
    for mode, title in ((0, "online (one kernel per upload)"), (1, "whole series")):
        print(f"\n### peers side by side, {title}\n")
        print(
            "| detector | 3σ recall, 1-5 trials | 4σ recall, 1-5 trials | 2σ recall, 1-5 "
            "trials | false / 100 clean, 1-5 trials | spike | bimodal | precision | exact |"
        )
        print("|---" * 9 + "|")
        for name in names:
            c = _cells(rows, name, mode)

            def line(key: str, c: dict[str, float] = c) -> str:
                return " ".join(f"{c.get(f'{key}x{t}', math.nan):.0f}" for t in range(1, 6))

            spike = max(c.get(f"fspikex{t}", 0.0) for t in range(1, 6))
            bimodal = max(c.get(f"fbimodalx{t}", 0.0) for t in range(1, 6))
            print(
                f"| {name} | {line('r3')} | {line('r4')} | {line('r2')} | {line('fclean')} | "
                f"{spike:.1f} | {bimodal:.1f} | {c['precision']:.1f} % | {c['exact']:.1f} % |"
            )
    print("\n(spike, bimodal: the worst trial count's false alerts per 100 series)")


def _caught(rows: Rows, name: str) -> dict[tuple[int, int], tuple[int, int]]:
    """(steps caught online, step series) by (sigma, trials), for one detector, and (false
    alerts online, clean series) by (0, trials)."""
    cells: dict[tuple[int, int], tuple[int, int]] = {}
    for series, outcomes in rows:
        caught, _, _, false = score(series, outcomes[name][0])
        if series.kind in ("step", "clean"):
            key = (series.sigma_steps, series.trials)
            hit, total = cells.get(key, (0, 0))
            cells[key] = (hit + (caught if series.kind == "step" else false), total + 1)
    return cells


def matched_cells(rows: Rows, names: Sequence[str]) -> None:
    """Online recall in every cell (step size x trials) for perfdb (``names[0]``) and each
    peer, as steps caught of the cell's series, the cells where a peer catches more, and the
    false alerts on the clean series by trial count: the issue's goal is perfdb >= the best
    peer at every cell, at the same false-alert budget (the peers' thresholds calibrated to
    it), so both are counted, not rounded to percents."""
    cells = {name: _caught(rows, name) for name in names}
    print("\n### online recall per cell, steps caught / step series\n")
    print("| step | trials | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 2) + "|")
    beaten = []
    for size in range(1, 6):
        for trials in range(1, 6):
            got = [cells[name].get((size, trials), (0, 0)) for name in names]
            print(f"| {size}σ | {trials} | " + " | ".join(f"{h}/{n}" for h, n in got) + " |")
            beaten += [
                f"{size}σ x {trials} trials: {name} {h}/{n} against {names[0]} {got[0][0]}/{n}"
                for name, (h, n) in zip(names[1:], got[1:], strict=True)
                if h > got[0][0]
            ]
    print("\ncells where a peer catches more steps than " + names[0] + ":")
    print("\n".join(f"- {line}" for line in beaten) if beaten else "- none")
    print("\n| online false alerts / clean series | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for label, counts in (
        *((f"{t} trial{'s' * (t > 1)}", [t]) for t in range(1, 6)),
        ("all", list(range(1, 6))),
    ):
        row = [_summed([cells[name].get((0, t), (0, 0)) for t in counts]) for name in names]
        print(f"| {label} | " + " | ".join(row) + " |")


def _summed(cells: Sequence[tuple[int, int]]) -> str:
    """False alerts / clean series, summed over some trial counts."""
    return f"{sum(c[0] for c in cells)}/{sum(c[1] for c in cells)}"


def _suite_job(job: tuple[int, bool, Settings, tuple[str, ...]]) -> dict[str, tuple[int, ...]]:
    seed, noisy, settings, names = job
    series = peer_series(random.Random(seed), noisy)
    ours = whole_series_alerts(series, settings)
    values = [p.values for p in series.points]
    levels = [statistics.fmean(v) for v in values]
    out: dict[str, tuple[int, ...]] = {"perfdb": (*peer_score(series, ours), len(series.steps))}
    for name in names:
        alerts = _alerts(name, levels, values, series.better)
        out[name] = (*peer_score(series, alerts), len(series.steps))
    return out


def peer_suite(seed: int, count: int, settings: Settings, workers: int) -> None:
    """F1 of every detector on the peer suite, whole series at once (``peer_series``)."""
    names = tuple(available())
    rng = random.Random(seed + 17)
    print(f"\n### peer suite: whole series, {count} series per suite, F1 (precision / recall)\n")
    print("| detector | clean steps F1 | P / R | spikes + bimodal F1 | P / R |")
    print("|---|---|---|---|---|")
    table: dict[str, list[str]] = {n: [] for n in ("perfdb", *names)}
    for noisy in (False, True):
        todo = [(rng.randrange(2**32), noisy, settings, names) for _ in range(count)]
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(_suite_job, todo, chunksize=8))
        for name in table:
            found, true, false, steps = (sum(r[name][i] for r in results) for i in range(4))
            precision = true / max(true + false, 1)
            recall = found / max(steps, 1)
            f1 = 2 * precision * recall / max(precision + recall, 1e-9)
            table[name] += [f"{f1:.3f}", f"{100 * precision:.1f} / {100 * recall:.1f} %"]
    for name, cells in table.items():
        print(f"| {name} | " + " | ".join(cells) + " |")


def scaling(sizes: Sequence[int]) -> None:
    """CPU seconds for one whole-series analysis of ``n`` single-trial kernels, perfdb's step
    scan (``detection.change_points``) next to the installed peers: a step every n/10
    ("steps"), and the same with a spike or a visit of 2-3 kernels every 40 kernels
    ("outliers": each one makes the scan's running sums be added again after it)."""
    print("\n### cost of one whole series (CPU seconds, time.process_time)\n")
    names = [n for n in available() if n != "perfherder"]
    print("| kernels | series | perfdb | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 3) + "|")
    for n in sizes:
        for kind in ("steps", "outliers"):
            levels = _scaling_levels(n, kind)
            points = [
                Point(
                    run_id=i + 1,
                    kernel=f"{2 + i // 10000}.{i // 100 % 100}.{i % 100}",
                    patches=(),
                    values=(v,),
                )
                for i, v in enumerate(levels)
            ]
            cells = [_cpu(functools.partial(change_points, points, better="higher"))]
            cells += [
                math.nan  # rbf's Gram matrix: n^2 floats (75 GB at 100,000)
                if name == "kernelcpd" and n > 20000
                else _cpu(functools.partial(PEERS[name], levels, [], OWN[name]))
                for name in names
            ]
            print(f"| {n:,} | {kind} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")


def _scaling_levels(n: int, kind: str) -> list[float]:
    rng = random.Random(n)
    levels = [100.0 + rng.gauss(0, 1) + 6 * (i * 10 // n % 2) for i in range(n)]
    if kind == "outliers":
        for at in range(20, n - 3, 40):
            for i in range(at, at + rng.choice([1, 2, 3])):
                levels[i] += 10.0
    return levels


def _cpu(work: Callable[[], object]) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started

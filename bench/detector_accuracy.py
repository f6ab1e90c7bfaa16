"""Accuracy of the regression detector on lab-like series, replayed one kernel per upload.

    python bench/detector_accuracy.py            # full suite, ~1-2 min on 2 cores
    python bench/detector_accuracy.py --quick    # a tenth of it, a few seconds
    python bench/detector_accuracy.py --seed 7 --set online_alpha=0.02

Series (seeded): 10-40 kernels in kernel order, 1-5 trials per run, 1-5 % within-run noise
(per trial) plus run-to-run noise (0.25-1 x the within-run noise, shared by a run's trials),
metrics where higher or lower is better. sigma = the sd of one trial, sqrt(within^2 +
between^2). Kinds:

- step: one step of 1-5 sigma, up or down (a regression or an improvement), at a random
  kernel with at least 2 kernels before it and 1 after it;
- clean: no step;
- spike: one run (all its trials) 4-8 sigma off, then back; no step;
- bimodal: every run is in a second mode 2-4 sigma away with probability 0.3; no step.

Replay: kernel 1 is uploaded, checked, then kernel 2, ... as the service does it
(``service_check`` mirrors perfdb.regressions._changes: ``detect`` for the new runs, plus
``change_points`` landing on them). An *alert* is a change that is not ``unconfirmed`` (it
would be emailed), counted once per (run, direction); an unconfirmed change is counted as
*pending*. An alert is true when it names the step's kernel, or a neighbour (off by one), in
the step's direction; "exact" is the share on the step's kernel itself.
Whole-series mode hands the detector the complete series once.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perfdb.detection import Change, Point, Settings, change_points, detect  # noqa: E402

KINDS = ("step", "clean", "spike", "bimodal")


@dataclass(frozen=True)
class Series:
    kind: str
    points: tuple[Point, ...]  # one stock run per kernel, in kernel order
    better: str
    trials: int
    sigma_steps: int  # step size in sigma (step series), else 0
    step_at: int  # index of the step's / spike's kernel, -1 if none
    step_up: bool
    level_noise_pct: float = 0.0  # true sd of one kernel's mean (%): what a lab's prior knows


def make_series(rng: random.Random, kind: str, trials: int, sigma_steps: int) -> Series:
    n = rng.randint(10, 40)
    within = rng.uniform(1.0, 5.0) / 100
    between = within * rng.uniform(0.25, 1.0)
    sigma = math.hypot(within, between)
    better = rng.choice(["higher", "lower"])
    base = rng.uniform(50.0, 5000.0)
    up = rng.random() < 0.5
    sign = 1.0 if up else -1.0
    at = rng.randint(2, n - 2) if kind in ("step", "spike") else -1
    mode_offset = sign * rng.uniform(2.0, 4.0) * sigma
    first = rng.randint(0, 200)
    points = []
    for i in range(n):
        level = 1.0
        if kind == "step" and i >= at:
            level += sign * sigma_steps * sigma
        if kind == "spike" and i == at:
            level += sign * rng.uniform(4.0, 8.0) * sigma
        if kind == "bimodal" and rng.random() < 0.3:
            level += mode_offset
        run_level = level + rng.gauss(0.0, between)
        values = tuple(base * (run_level + rng.gauss(0.0, within)) for _ in range(trials))
        points.append(Point(run_id=i + 1, kernel=f"2.6.{first + i}", patches=(), values=values))
    level = math.sqrt(between**2 + within**2 / trials) * 100
    return Series(kind, tuple(points), better, trials, sigma_steps, at, up, level)


def service_check(
    points: Sequence[Point], new: Collection[int], better: str, settings: Settings
) -> list[Change]:
    """What perfdb.alerting.regressions._changes does for one series (no pinned or declared
    baseline): ``detect`` for the new runs, plus every confirmed step of the series when a
    new run is a stock kernel (a step the new kernel confirms lands on an earlier run)."""
    changes = detect(points, better=better, settings=settings, candidates=new)
    stock_candidate = any(p.run_id in new and not p.patches for p in points)
    seen = {(c.candidate_run_id, c.method) for c in changes}
    steps = change_points(points, better=better, settings=settings)
    return changes + [
        s
        for s in steps
        if (s.candidate_run_id in new or stock_candidate)
        and (s.candidate_run_id, s.method) not in seen
    ]


def _status(change: Change) -> str:
    return getattr(change, "status", "confirmed")


@dataclass
class Outcome:
    alerts: list[tuple[int, str]] = field(default_factory=list)  # (kernel index, direction)
    pending: int = 0
    check_ms: list[float] = field(default_factory=list)
    whole: list[tuple[int, str]] = field(default_factory=list)


def _record(
    into: list[tuple[int, str]], seen: set[tuple[int, str]], changes: Iterable[Change]
) -> None:
    for c in changes:
        key = (c.candidate_run_id, c.direction)
        if _status(c) != "unconfirmed" and key not in seen:
            seen.add(key)
            into.append((c.candidate_run_id - 1, c.direction))


def replay(series: Series, settings: Settings) -> Outcome:
    out = Outcome()
    seen: set[tuple[int, str]] = set()
    pending: set[int] = set()
    for t in range(len(series.points)):
        started = time.perf_counter()
        changes = service_check(series.points[: t + 1], {t + 1}, series.better, settings)
        out.check_ms.append((time.perf_counter() - started) * 1000)
        pending |= {c.candidate_run_id for c in changes if _status(c) == "unconfirmed"}
        _record(out.alerts, seen, changes)
    out.pending = len(pending)
    every = {p.run_id for p in series.points}
    _record(out.whole, set(), service_check(series.points, every, series.better, settings))
    return out


def true_direction(series: Series) -> str:
    went_up = series.step_up
    return "improvement" if went_up == (series.better == "higher") else "regression"


def score(series: Series, alerts: list[tuple[int, str]]) -> tuple[bool, int, int, int]:
    """(step caught, true alerts, exact-kernel alerts, false alerts)."""
    if series.kind != "step":
        return False, 0, 0, len(alerts)
    want = true_direction(series)
    true = [(i, d) for i, d in alerts if d == want and abs(i - series.step_at) <= 1]
    exact = sum(1 for i, _ in true if i == series.step_at)
    return bool(true), len(true), exact, len(alerts) - len(true)


def _work(job: tuple[int, str, int, int, dict[str, str]]) -> tuple[Series, Outcome]:
    seed, kind, trials, size, overrides = job
    overrides = dict(overrides)
    prior_error = overrides.pop("prior_error", None)
    settings = _settings(overrides)
    series = make_series(random.Random(seed), kind, trials, size)
    if prior_error is not None:
        # the workload/metric's typical noise (Threshold.typical_noise_pct), known to within
        # a lognormal error of sd ``prior_error``
        error = math.exp(random.Random(seed + 1).gauss(0.0, float(prior_error)))
        settings = replace(settings, prior_noise_pct=series.level_noise_pct * error)
    return series, replay(series, settings)


def _settings(overrides: dict[str, str]) -> Settings:
    base = Settings()
    values: dict[str, Any] = {
        k: type(getattr(base, k))(v) if getattr(base, k) is not None else float(v)
        for k, v in overrides.items()
    }
    return replace(base, **values)


def jobs(
    seed: int, scale: float, overrides: dict[str, str]
) -> list[tuple[int, str, int, int, dict[str, str]]]:
    rng = random.Random(seed)
    plan: list[tuple[str, int, int, int]] = []  # kind, trials, size, count
    for trials in range(1, 6):
        plan += [("step", trials, size, round(40 * scale)) for size in range(1, 6)]
        plan.append(("clean", trials, 0, round(200 * scale)))
        plan.append(("spike", trials, 0, round(40 * scale)))
        plan.append(("bimodal", trials, 0, round(40 * scale)))
    return [
        (rng.randrange(2**32), kind, trials, size, overrides)
        for kind, trials, size, count in plan
        for _ in range(max(count, 1))
    ]


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:5.1f} %" if whole else "   -   "


def report(results: list[tuple[Series, Outcome]], mode: str) -> None:
    pick = (lambda o: o.alerts) if mode == "online" else (lambda o: o.whole)
    caught: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    totals = Counter[str]()
    false_by: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    for series, outcome in results:
        hit, true, exact, false = score(series, pick(outcome))
        if series.kind == "step":
            cell = caught[(series.sigma_steps, series.trials)]
            cell[0] += hit
            cell[1] += 1
        totals["true"] += true
        totals["exact"] += exact
        totals["false"] += false
        fb = false_by[(series.kind, series.trials)]
        fb[0] += false
        fb[1] += 1
    print(f"\n### {mode}: recall by step size (rows) x trials per run (columns)\n")
    print("| step | " + " | ".join(f"{n} trial{'s' * (n > 1)}" for n in range(1, 6)) + " |")
    print("|---" * 6 + "|")
    for size in range(1, 6):
        cells = [caught[(size, n)] for n in range(1, 6)]
        print(f"| {size} sigma | " + " | ".join(pct(c[0], c[1]) for c in cells) + " |")
    alerts = totals["true"] + totals["false"]
    print(
        f"\nprecision (all kinds) {pct(totals['true'], alerts)}, "
        f"exact kernel {pct(totals['exact'], totals['true'])} of true alerts\n"
    )
    print("| false alerts per 100 series | " + " | ".join(f"{n} tr." for n in range(1, 6)) + " |")
    print("|---" * 6 + "|")
    for kind in KINDS:
        cells = [false_by[(kind, n)] for n in range(1, 6)]
        row = " | ".join(f"{100 * c[0] / c[1]:5.1f}" if c[1] else "  -  " for c in cells)
        print(f"| {kind} | {row} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seed", type=int, default=2003)
    parser.add_argument("--quick", action="store_true", help="a tenth of the series")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument(
        "--prior-error",
        type=float,
        metavar="SD",
        help="give the detector each series' typical noise as a prior (prior_noise_pct, as "
        "staff set Threshold.typical_noise_pct), off by a lognormal error of this sd (0.3)",
    )
    args = parser.parse_args()
    overrides = dict(item.split("=", 1) for item in args.set)
    scale = args.scale * (0.1 if args.quick else 1.0)
    todo = jobs(args.seed, scale, overrides)
    if args.prior_error is not None:
        todo = [(*job[:4], {**job[4], "prior_error": str(args.prior_error)}) for job in todo]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(_work, todo, chunksize=8))
    wall = time.perf_counter() - started
    print(f"seed {args.seed}, {len(todo)} series, settings {_settings(overrides)}")
    if args.prior_error is not None:
        print(
            f"prior: each series' typical level noise, off by a lognormal error "
            f"(sd {args.prior_error})"
        )
    report(results, "online")
    pending = Counter[str]()
    for series, outcome in results:
        pending[series.kind] += outcome.pending
    counts = Counter(s.kind for s, _ in results)
    print(
        "\npending (unconfirmed) changes per 100 series: "
        + ", ".join(f"{k} {100 * pending[k] / counts[k]:.1f}" for k in KINDS)
    )
    report(results, "whole series")
    long_checks = [ms for s, o in results if len(s.points) >= 35 for ms in o.check_ms[34:]]
    every = [ms for _, o in results for ms in o.check_ms]
    print(
        f"\ncheck time: median {statistics.median(every):.2f} ms, 40-kernel series median "
        f"{statistics.median(long_checks):.2f} ms, p95 "
        f"{statistics.quantiles(long_checks, n=20)[-1]:.2f} ms; wall {wall:.1f} s"
    )
    print("peers: ruptures not installed" if not _has_ruptures() else "peers: see --peers")


def _has_ruptures() -> bool:
    return importlib.util.find_spec("ruptures") is not None


if __name__ == "__main__":
    main()

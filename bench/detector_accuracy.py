"""Accuracy of the regression detector on synthetic series shaped like the lab's.

    python bench/detector_accuracy.py [--series N] [--seed S]

Each series: 3-25 stock kernels in kernel order, sometimes a patched build of a kernel
that performs like its stock kernel, 1-5 trials per run, relative noise 0.5-5 % per trial,
a metric where higher or lower is better. Half of the series have one step: from a random
kernel on, performance is worse by 2-30 %. Points are handed to the detector in a shuffled
(upload) order. ``detect`` and ``change_points`` run at default Settings; a regression
alert is correct when its candidate is a stock run of the step's first kernel.
The seed is fixed, so the table is the same on every run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perfdb.detection import Point, Settings, change_points, detect  # noqa: E402

KERNELS = [f"2.4.{n}" for n in range(0, 21)] + ["2.4-distro"] + [f"2.5.{n}" for n in range(1, 76)]
PATCHES = [("D7",), ("O(1)",), ("trytowakeup1",), ("busiestqueue",)]
PATCHED_SHARE = 0.2  # chance that a kernel also has a (neutral) patched build


@dataclass(frozen=True)
class Series:
    points: tuple[Point, ...]
    better: str
    noise_pct: float
    trials: int
    step_pct: float | None  # size of the regression, None for a no-step series
    step_run_ids: frozenset[int]  # stock runs of the step's first kernel


def make_series(rng: random.Random, *, with_step: bool) -> Series:
    n_kernels = rng.randint(3, 25)
    first = rng.randrange(0, len(KERNELS) - n_kernels)
    kernels = KERNELS[first : first + n_kernels]
    trials = rng.randint(1, 5)
    noise = rng.uniform(0.5, 5.0)
    better = rng.choice(["higher", "higher", "lower"])
    base = rng.uniform(50, 5000)
    step = rng.uniform(2.0, 30.0) if with_step else None
    step_at = rng.randint(1, n_kernels - 1)
    sign = -1 if better == "higher" else 1  # a regression moves the metric the wrong way
    worse = 1 + sign * (step or 0.0) / 100

    builds = []
    for i, kernel in enumerate(kernels):
        level = base * (worse if step and i >= step_at else 1.0)
        builds.append((kernel, (), level))
        if rng.random() < PATCHED_SHARE:
            builds.append((kernel, rng.choice(PATCHES), level))
    rng.shuffle(builds)  # upload order is not kernel order
    points = []
    for run_id, (kernel, patches, level) in enumerate(builds, start=1):
        values = tuple(level * (1 + rng.gauss(0, noise / 100)) for _ in range(trials))
        points.append(Point(run_id=run_id, kernel=kernel, patches=patches, values=values))
    step_runs = frozenset(
        p.run_id for p in points if step and not p.patches and p.kernel == kernels[step_at]
    )
    return Series(tuple(points), better, noise, trials, step, step_runs)


@dataclass
class Tally:
    steps: int = 0
    caught: int = 0
    big_steps: int = 0
    big_caught: int = 0
    true_alerts: int = 0
    false_alerts: int = 0
    no_step_series: int = 0
    no_step_series_alerted: int = 0

    def add(self, series: Series, alerted: set[int]) -> None:
        true = alerted & series.step_run_ids
        self.true_alerts += len(true)
        self.false_alerts += len(alerted - true)
        if series.step_pct is None:
            self.no_step_series += 1
            self.no_step_series_alerted += bool(alerted)
            return
        self.steps += 1
        self.caught += bool(true)
        if series.step_pct > 3 * series.noise_pct:
            self.big_steps += 1
            self.big_caught += bool(true)


def run_detector(series: Series, settings: Settings) -> set[int]:
    changes = detect(series.points, better=series.better, settings=settings)
    changes += change_points(series.points, better=series.better, settings=settings)
    return {c.candidate_run_id for c in changes if c.direction == "regression"}


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f} %" if whole else "    -  "


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=600, help="series per kind (step/none)")
    parser.add_argument("--seed", type=int, default=2003)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a Settings default, e.g. --set noise_multiplier=3.5",
    )
    args = parser.parse_args()

    rng = random.Random(args.seed)
    overrides = dict(item.split("=", 1) for item in args.set)
    settings = replace(
        Settings(), **{k: type(getattr(Settings(), k))(v) for k, v in overrides.items()}
    )
    rows: dict[str, Tally] = {"all": Tally()}
    timings = []
    for i in range(2 * args.series):
        series = make_series(rng, with_step=i % 2 == 0)
        started = time.perf_counter()
        alerted = run_detector(series, settings)
        timings.append((time.perf_counter() - started) * 1000)
        label = "1 trial" if series.trials == 1 else f"{series.trials} trials"
        for key in ("all", label):
            rows.setdefault(key, Tally()).add(series, alerted)

    print(f"seed {args.seed}, {args.series} step + {args.series} no-step series, {settings}")
    print()
    header = (
        "| series | precision | recall | recall, step > 3x noise | "
        "no-step series with a false alert | false alerts |"
    )
    print(header)
    print("|---|---|---|---|---|---|")
    for key in ["all", "1 trial", *(f"{n} trials" for n in range(2, 6))]:
        t = rows.get(key)
        if t is None:
            continue
        alerts = t.true_alerts + t.false_alerts
        print(
            f"| {key} | {pct(t.true_alerts, alerts)} | {pct(t.caught, t.steps)} "
            f"({t.caught}/{t.steps}) | {pct(t.big_caught, t.big_steps)} "
            f"({t.big_caught}/{t.big_steps}) | {t.no_step_series_alerted}/{t.no_step_series} "
            f"| {t.false_alerts} |"
        )
    print()
    print(
        f"time per series: median {statistics.median(timings):.1f} ms, "
        f"max {max(timings):.1f} ms, total {sum(timings) / 1000:.1f} s"
    )


if __name__ == "__main__":
    main()

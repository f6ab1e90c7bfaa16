"""Alerts when kernels arrive out of order: a move's distance counted in the kernels the
alert's placement saw (the service's rule, ``perfdb.alerting.moves_rule.KernelOrder``) against
counted in every kernel (the rule before it).

    python bench/arrival_moves.py                       # backfill and bisect, seed 2003, ~4 min
    python bench/arrival_moves.py --arrival in-order --seed 7
    python bench/arrival_moves.py --arrival rerun   # step and clean series only

The accuracy bench's lab-like suite (``detector_accuracy.jobs``, pooled prior as ``--lab``)
replayed as the bench replays it (``product_replay.in_bench``: the detector's calls, the
alerts kept by the service's rules), with the kernels arriving as ``--arrival`` brings them
(``product_replay.arrival``: ``backfill`` = every 4th kernel first, then the kernels between
two of them together; ``bisect`` = the same releases, then each gap's kernels one per upload,
middle first); ``rerun``: in kernel order, then the lab does what an unsure alert's email
asks ("rerun both to tell"): one more run of each confirmed alert's kernel and of the
runner-up it names, below a 95 % share, in one upload (step and clean series only: their
true levels are known, so a fresh run can be drawn). "Every kernel" replays the same
series with alerts that keep no record of the runs they saw (``AlertBook(every_kernel=True)``),
which is how the rule counted before.
Prints, per rule, the step series' scores (caught, true and exact alerts, false alerts,
steps alerted more than once, moves) and the false alerts of the clean, spike and bimodal
series. docs/detector.md, "Long series".
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import product_replay  # noqa: E402
from detector_accuracy import jobs  # noqa: E402
from detector_suite import (  # noqa: E402
    Series,
    lab_prior,
    make_series,
    score,
    service_check,
    status,
)

from perfdb.detector.detection import Change, Point, Settings  # noqa: E402

UNSURE = 0.95  # perfdb.alerting.placement.SURE: below it the email names a runner-up


def _work(job: tuple[int, str, int, int, str, bool]) -> Counter[str]:
    seed, kind, trials, size, plan, every = job
    series = make_series(random.Random(seed), kind, trials, size)
    if plan == "rerun":
        if kind not in ("step", "clean"):
            return Counter()
        rng = random.Random(seed + 5)
        replayed = rerun_named(series, lab_prior(seed, series), rng, every)
    else:
        replayed = product_replay.in_bench(series, lab_prior(seed, series), plan, every)
    confirmed = [(i, d) for i, d, c in replayed.held if c]
    caught, true, exact, false = score(series, confirmed)
    counts = Counter({f"{kind} series": 1, f"{kind} false": false})
    if kind == "step":
        counts.update(caught=caught, true=true, exact=exact, moved=replayed.moved)
        counts["alerted twice or more"] += true > 1
    return counts


def rerun_named(
    series: Series, prior: float | None, rng: random.Random, every_kernel: bool
) -> product_replay.BenchReplay:
    """One kernel per upload, then one upload with a fresh run of each confirmed alert's
    kernel and of the runner-up its email names (share below ``UNSURE``)."""
    settings = Settings(prior_noise_pct=prior)
    named: dict[int, int] = {}  # alert's run -> the runner-up its email named

    def note_runner_ups(changes: list[Change]) -> None:
        for c in changes:
            share, other = c.location_share, c.runner_up
            if status(c) != "unconfirmed" and share is not None and other and share < UNSURE:
                named.setdefault(c.candidate_run_id, other[0])

    points = list(series.points)
    batches = [[p] for p in points]
    book = product_replay.book_replay(
        batches, series.better, settings, every_kernel, note_runner_ups
    )
    kernels = sorted({i for a in book.book if a.confirmed for i in _both(a.run_id, named)})
    fresh = [_fresh_run(series, i, len(points) + n + 1, rng) for n, i in enumerate(kernels)]
    if fresh:
        points += fresh
        new = {p.run_id for p in fresh}
        book.record(points, service_check(points, new, series.better, settings))
    index = {p.run_id: i for i, p in enumerate(series.points)}
    index.update({p.run_id: kernels[n] for n, p in enumerate(fresh)})
    held = sorted((index[a.run_id], a.direction, a.confirmed) for a in book.book)
    return product_replay.BenchReplay(held, book.moved)


def _both(run_id: int, named: dict[int, int]) -> list[int]:
    """Kernel indices to rerun for an alert on ``run_id``: its own, and the runner-up's."""
    return [run_id - 1] + ([named[run_id] - 1] if run_id in named else [])


def _fresh_run(series: Series, i: int, run_id: int, rng: random.Random) -> Point:
    """Another run of kernel ``i`` at its true level (the generator's noise model)."""
    sigma = math.hypot(series.within, series.between)
    sign = 1.0 if series.step_up else -1.0
    stepped = series.kind == "step" and i >= series.step_at
    level = 1.0 + (sign * series.sigma_steps * sigma if stepped else 0.0)
    run_level = level + rng.gauss(0.0, series.between)
    values = tuple(
        series.base * (run_level + rng.gauss(0.0, series.within)) for _ in range(series.trials)
    )
    return Point(run_id=run_id, kernel=series.points[i].kernel, patches=(), values=values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=2003)
    parser.add_argument("--arrival", nargs="+", default=["backfill", "bisect"])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    suite = [(seed, kind, trials, size) for seed, kind, trials, size, _ in jobs(args.seed, 1, {})]
    print(
        "| arrival | distance counted in | step series: caught / true / exact / false | "
        "alerted twice | moves | false alerts: clean / spike / bimodal |"
    )
    print("|---|---|---|---|---|---|")
    for plan in args.arrival:
        for every in (True, False):
            todo = [(*job, plan, every) for job in suite]
            with ProcessPoolExecutor(args.workers) as pool:
                counts = sum(pool.map(_work, todo, chunksize=16), Counter())
            rule = "every kernel (before)" if every else "the kernels the alert saw (now)"
            print(
                f"| {plan} | {rule} | {counts['caught']} / {counts['true']} / {counts['exact']}"
                f" / {counts['step false']} of {counts['step series']} | "
                f"{counts['alerted twice or more']} | {counts['moved']} | "
                f"{counts['clean false']} / {counts['spike false']} / {counts['bimodal false']}"
                f" of {counts['clean series']} / {counts['spike series']} / "
                f"{counts['bimodal series']} |"
            )


if __name__ == "__main__":
    main()

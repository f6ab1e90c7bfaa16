"""Alerts when kernels arrive out of order: a move's distance counted in the kernels the
alert's placement saw (the service's rule, ``perfdb.alert_moves.KernelOrder``) against
counted in every kernel (the rule before it).

    python bench/arrival_moves.py                       # backfill and bisect, seed 2003, ~4 min
    python bench/arrival_moves.py --arrival in-order --seed 7

The accuracy bench's lab-like suite (``detector_accuracy.jobs``, pooled prior as ``--lab``)
replayed as the bench replays it (``product_replay.in_bench``: the detector's calls, the
alerts kept by the service's rules), with the kernels arriving as ``--arrival`` brings them
(``product_replay.arrival``: ``backfill`` = every 4th kernel first, then the kernels between
two of them together; ``bisect`` = the same releases, then each gap's kernels one per upload,
middle first). "Every kernel" replays the same series with each alert's ``seen_through``
dropped, which is how the rule counted before. Prints, per rule, the step series' scores
(caught, true and exact alerts, false alerts, steps alerted more than once, moves) and the
false alerts of the clean, spike and bimodal series. docs/detector.md, "Session 15".
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import product_replay  # noqa: E402
from detector_accuracy import jobs  # noqa: E402
from detector_suite import lab_prior, make_series, score  # noqa: E402

from perfdb import alert_moves  # noqa: E402

SEEN = alert_moves.KernelOrder.distance


def _every_kernel(
    order: alert_moves.KernelOrder, alert: alert_moves.Held, run_id: int
) -> float | None:
    """The rule before: every kernel of the series counts, whenever it came."""
    return SEEN(order, replace(alert, seen_through=None), run_id)


def _work(job: tuple[int, str, int, int, str, bool]) -> Counter[str]:
    seed, kind, trials, size, plan, every = job
    alert_moves.KernelOrder.distance = _every_kernel if every else SEEN  # type: ignore[method-assign,assignment]
    series = make_series(random.Random(seed), kind, trials, size)
    replayed = product_replay.in_bench(series, lab_prior(seed, series), plan)
    confirmed = [(i, d) for i, d, c in replayed.held if c]
    caught, true, exact, false = score(series, confirmed)
    counts = Counter({f"{kind} series": 1, f"{kind} false": false})
    if kind == "step":
        counts.update(caught=caught, true=true, exact=exact, moved=replayed.moved)
        counts["alerted twice or more"] += true > 1
    return counts


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

"""Does the product raise the alerts the accuracy bench scores? A held-out replay.

    python bench/detector_agreement.py                    # seed 31, 2 series per cell, ~2 min
    python bench/detector_agreement.py --seed 37 --per-cell 4 --no-lab
    python bench/detector_agreement.py --arrival backfill --peer-suite 0

Series of the accuracy bench's suite (``detector_accuracy.jobs`` for the seed: every kind,
trial count and step size) are replayed twice: through the detector's calls with the alerts
kept in memory, as bench/detector_accuracy.py scores them (``product_replay.in_bench``), and
through the product, one bundle per kernel, ingested and checked, the alerts read back from
PostgreSQL (``product_replay.replay``). With the pooled prior (default; ``--no-lab`` without)
each series' four sibling setups are uploaded first. ``--arrival backfill`` uploads every
4th kernel first and then the kernels between each two of them together, as a lab testing
releases and then the release candidates between them does (``product_replay.arrival``).
Then series of the peer suite (``detector_peers.peer_suite``), each uploaded whole. Prints
how many series end with the same alerts (every alert: kernel, direction, confirmed or
not; for the peer suite the confirmed ones), each one that does not, and both sides' scores.

The database: ``DATABASE_URL`` (default ``perfdb_agreement`` on 127.0.0.1, created and
migrated when missing, emptied first: its name must contain "agreement").
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

import product_replay  # noqa: E402
from _common import agreement_database  # noqa: E402
from detector_accuracy import jobs, noise_of, noise_overrides  # noqa: E402
from detector_suite import (  # noqa: E402
    BETWEEN,
    lab_prior,
    make_series,
    peer_score,
    peer_series,
    score,
    sibling_series,
    whole_series_alerts,
)

from perfdb.detector.detection import Settings  # noqa: E402

FIGURES = ("caught", "true", "exact", "false")  # detector_suite.score's, in its order
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/perfdb_agreement"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=31, help="the suite's seed (held out: 31)")
    parser.add_argument("--per-cell", type=int, default=2, help="series per (kind, trials, size)")
    parser.add_argument("--no-lab", action="store_true", help="no sibling setups, no prior")
    parser.add_argument(
        "--arrival",
        choices=product_replay.PLANS,
        default="in-order",
        help="how the lab-like suite's kernels arrive (product_replay.arrival)",
    )
    parser.add_argument(
        "--between",
        metavar="LO,HI",
        help="run-to-run noise as a multiple of the within-run noise (detector_accuracy's "
        "--between; '0,0': independent trials)",
    )
    parser.add_argument(
        "--mixed-trials",
        action="store_true",
        help="each kernel 1 to N trials, drawn (detector_accuracy's --mixed-trials)",
    )
    parser.add_argument(
        "--compare-page",
        action="store_true",
        help="also read each series' alerts and kernel pairs on the compare page",
    )
    parser.add_argument(
        "--peer-suite", type=int, default=20, help="peer-suite series of each kind, uploaded whole"
    )
    args = parser.parse_args()
    agreement_database(DEFAULT_DB, "bench-detector-agreement-only")
    from perfdb.alerting import queue as alerting_queue

    mock.patch.object(alerting_queue, "regressions_check").start()  # run here instead
    mock.patch.object(alerting_queue, "notify_upload").start()  # no email worker here
    noise = noise_of(noise_overrides(args))
    lab_suite(args.seed, args.per_cell, not args.no_lab, args.arrival, args.compare_page, noise)
    if args.peer_suite:
        peer_suite(args.seed, args.peer_suite)


def lab_suite(
    seed: int,
    per_cell: int,
    lab: bool,
    plan: str,
    page: bool,
    noise: tuple[tuple[float, float], bool] = (BETWEEN, False),
) -> None:
    """The lab-like suite, uploaded as ``plan`` brings it: every alert compared, and scored;
    with ``page``, the compare page's readings of each series (``compare_page_readings``);
    ``noise``: the run-to-run noise's range and whether trial counts are mixed
    (``detector_suite.make_series``)."""
    picked: Counter[tuple[str, int, int]] = Counter()
    todo = []
    for job_seed, kind, trials, size, _ in jobs(seed, 1.0, {}):
        if picked[(kind, trials, size)] < per_cell:
            picked[(kind, trials, size)] += 1
            todo.append((job_seed, kind, trials, size))
    same = 0
    tally = Counter[str]()
    readings = Counter[str]()
    started = time.perf_counter()
    for number, (job_seed, kind, trials, size) in enumerate(todo):
        series = make_series(random.Random(job_seed), kind, trials, size, *noise)
        prior = lab_prior(job_seed, series) if lab else None
        siblings = sibling_series(job_seed, series) if lab else []
        bench = product_replay.in_bench(series, prior, plan).held
        tag = f"{seed}_{number}"
        product = product_replay.replay(series, tag, siblings, plan=plan)
        same += _same(f"series {number} ({kind}, {trials} trials, {size} sigma)", bench, product)
        if page:
            readings += product_replay.compare_page_readings(product_replay.Names.of(tag))
        for name, alerts in (("bench", bench), ("product", product)):
            confirmed = [(i, d) for i, d, c in alerts if c]
            for figure, value in zip(FIGURES, score(series, confirmed), strict=True):
                tally[f"{name} {figure}"] += value
    print(
        f"lab-like suite, seed {seed}, {len(todo)} series, arriving {plan} "
        f"({'pooled prior' if lab else 'no prior'}): {same} end with the same alerts in the "
        f"product as in the bench, {len(todo) - same} do not; {time.perf_counter() - started:.0f} s"
    )
    for name in ("bench", "product"):
        print(
            f"  {name:8} steps caught {tally[name + ' caught']}, true alerts "
            f"{tally[name + ' true']} ({tally[name + ' exact']} on the exact kernel), "
            f"false alerts {tally[name + ' false']}"
        )
    if page:
        print(
            "  compare page, each confirmed alert's runs and each kernel against the one "
            "before: " + ", ".join(f"{n} {readings[n]}" for n in product_replay.READINGS)
        )


def peer_suite(seed: int, count: int) -> None:
    """The peer suite (``detector_peers.peer_suite``'s series for the seed), each series
    uploaded whole: its confirmed alerts compared with the bench's reading, and scored."""
    rng = random.Random(seed + 17)
    same = 0
    tally = Counter[str]()
    started = time.perf_counter()
    for noisy in (False, True):
        for number in range(count):
            series = peer_series(random.Random(rng.randrange(2**32)), noisy)
            bench = whole_series_alerts(series, Settings())
            held = product_replay.replay(series, f"{seed}_peer{int(noisy)}_{number}", plan="whole")
            product = sorted({(i, d) for i, d, confirmed in held if confirmed})
            label = f"peer series {number} ({series.kind}, {len(series.points)} kernels)"
            same += _same(label, bench, product)
            for name, alerts in (("bench", bench), ("product", product)):
                found, true, false = peer_score(series, alerts)
                tally[f"{name} found"] += found
                tally[f"{name} true"] += true
                tally[f"{name} false"] += false
            tally["steps"] += len(series.steps)
    print(
        f"peer suite, seed {seed}, {2 * count} series, each uploaded whole: {same} end with the "
        f"same confirmed alerts in the product as in the bench, {2 * count - same} do not; "
        f"{time.perf_counter() - started:.0f} s"
    )
    for name in ("bench", "product"):
        print(
            f"  {name:8} steps found {tally[name + ' found']} of {tally['steps']}, true alerts "
            f"{tally[name + ' true']}, false alerts {tally[name + ' false']}"
        )


def _same(
    label: str, bench: Sequence[product_replay.AlertKey], product: Sequence[product_replay.AlertKey]
) -> bool:
    """Do the two lists hold the same alerts? Prints the difference when not."""
    only_bench, only_product = product_replay.differences(bench, product)
    if only_bench or only_product:
        print(f"{label}: only in the bench {only_bench}, only in the product {only_product}")
    return not only_bench and not only_product


if __name__ == "__main__":
    main()

"""Accuracy of the regression detector on lab-like series, replayed one kernel per upload.

    python bench/detector_accuracy.py            # full suite, ~1-2 min on 2 cores
    python bench/detector_accuracy.py --quick    # a tenth of it, a few seconds
    python bench/detector_accuracy.py --seed 7 --set confirm_window=8
    python bench/detector_accuracy.py --lab        # the prior the service pools from other setups
    /tmp/peers/bin/python bench/detector_accuracy.py --peers   # peers: bench/detector_peers.py
    /tmp/peers/bin/python bench/detector_accuracy.py --lab --peers-matched --workers 1
    /tmp/peers/bin/python bench/detector_accuracy.py --lab --peers-matched --calibrate
    /tmp/peers/bin/python bench/detector_accuracy.py --lab --peers-matched --budget perfdb --scale 5

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
(``service_check`` asks the detector's ``check``, as the service does: ``detect`` for the
new runs, plus ``change_points`` landing on them). The alerts are kept as the service keeps them
(``detector_suite.AlertBook``: one per run and direction, pending until confirmed, and moved to
a neighbouring kernel when a later check places its step there, ``perfdb.alerting.moves_rule``), and
scored as they stand at the end of the replay: an *alert* is a confirmed one (it was
emailed), on the kernel it names now; an unconfirmed change is counted as *pending*. An alert
is true when it names the step's kernel, or a neighbour (off by one), in the step's
direction; "exact" is the share on the step's kernel itself. Beside it, the ceiling: the share
of the same caught steps that a placement knowing the true levels puts on the step's kernel
(``detector_suite.placed_exactly_by_oracle``); no rule that places the same alerts does
better in expectation, so only a change in which steps are caught moves the ceiling.
Whole-series mode hands the detector the complete series once.

``--peers`` runs the peers at their own thresholds (tuned on whole series; online they raise
many more false alerts than ours). ``--peers-matched`` runs them online at the thresholds
that hold them to our detector's budget, about one false alert per 100 clean series
(``detector_peers.MATCHED``, calibrated on seed 1's clean series), and prints the recall of
every cell (step size x trials, steps caught of the cell's series) for perfdb and each peer,
and the cells where a peer catches more; ``--calibrate`` redoes the calibration first.
``--budget perfdb`` holds the peers to the false alerts perfdb itself spends instead
(``detector_peers.EQUAL``; with ``--calibrate`` perfdb's rate is measured on the calibration
series and the peers calibrated to it, ``--calibration-scale`` x 1,000 of them): equal false
alerts, so recall compares like with like.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import detector_peers  # noqa: E402
from detector_peers import Alerts  # noqa: E402
from detector_suite import (  # noqa: E402
    BETWEEN,
    KINDS,
    AlertBook,
    Series,
    lab_prior,
    make_series,
    placed_exactly_by_oracle,
    score,
    service_check,
    sibling_levels,
    status,
    true_direction,
)

from perfdb.detector import Change, Settings, policy  # noqa: E402


@dataclass
class Outcome:
    alerts: list[tuple[int, str]] = field(default_factory=list)  # (kernel index, direction)
    pending: int = 0
    moved: int = 0  # alerts re-attributed to a neighbouring kernel by a later check
    check_ms: list[float] = field(default_factory=list)
    whole: list[tuple[int, str]] = field(default_factory=list)
    # each step alert as its email states it: (location share, kernel index, direction,
    # the runner-up's kernel index or -1)
    stated: list[tuple[float, int, str, int]] = field(default_factory=list)
    peers: dict[str, tuple[Alerts, Alerts]] = field(default_factory=dict)  # (online, whole)


def _record(
    into: list[tuple[int, str]], seen: set[tuple[int, str]], changes: Iterable[Change]
) -> None:
    for c in changes:
        key = (c.candidate_run_id, c.direction)
        if status(c) != "unconfirmed" and key not in seen:
            seen.add(key)
            into.append((c.candidate_run_id - 1, c.direction))


def replay(series: Series, settings: Settings) -> Outcome:
    """One kernel per upload; the alerts as they stand at the end (moved ones where they
    were moved to: ``AlertBook``, the service's rule)."""
    out = Outcome()
    book = AlertBook()
    pending: set[int] = set()
    stated_keys: set[tuple[int, str]] = set()
    for t in range(len(series.points)):
        started = time.process_time()
        changes = service_check(series.points[: t + 1], {t + 1}, series.better, settings)
        out.check_ms.append((time.process_time() - started) * 1000)
        pending |= {c.candidate_run_id for c in changes if status(c) == "unconfirmed"}
        _state(out.stated, stated_keys, changes)
        book.record(series.points[: t + 1], changes)
    out.alerts, out.moved, out.pending = book.alerts(), book.moved, len(pending)
    every = {p.run_id for p in series.points}
    _record(out.whole, set(), service_check(series.points, every, series.better, settings))
    return out


def _state(
    into: list[tuple[float, int, str, int]], seen: set[tuple[int, str]], changes: list[Change]
) -> None:
    """The share each step alert states when it is first confirmed (what its email says)."""
    for c in changes:
        key = (c.candidate_run_id, c.direction)
        if status(c) != "unconfirmed" and c.location_share is not None and key not in seen:
            seen.add(key)
            other = c.runner_up[0] - 1 if c.runner_up is not None else -1
            into.append((c.location_share, c.candidate_run_id - 1, c.direction, other))


def _work(job: tuple[int, str, int, int, dict[str, str]]) -> tuple[Series, Outcome]:
    seed, kind, trials, size, overrides = job
    overrides = dict(overrides)
    prior_error = overrides.pop("prior_error", None)
    lab = overrides.pop("lab", None)
    peers = overrides.pop("peers", None)
    between, mixed = noise_of(overrides)
    for key in NOISE_KEYS:
        overrides.pop(key, None)
    thresholds = _thresholds(overrides.pop("thresholds", ""))
    settings = _settings(overrides)
    series = make_series(random.Random(seed), kind, trials, size, between, mixed)
    if lab in ("spread", "alike"):  # the prior and its weight from the votes' spread
        levels = sibling_levels(seed, series)
        prior, weight = policy.pooled_prior(levels, settings, alike=lab == "alike")
        settings = replace(settings, prior_noise_pct=prior, prior_weight=weight)
    elif lab is not None:
        settings = replace(settings, prior_noise_pct=lab_prior(seed, series))
    if prior_error is not None:
        # the workload/metric's typical noise (Threshold.typical_noise_pct), known to within
        # a lognormal error of sd ``prior_error``
        error = math.exp(random.Random(seed + 1).gauss(0.0, float(prior_error)))
        settings = replace(settings, prior_noise_pct=series.level_noise_pct * error)
    outcome = replay(series, settings)
    if peers is not None:
        outcome.peers = {
            name: detector_peers.replay(name, series, thresholds.get(name))
            for name in peers.split(",")
        }
    return series, outcome


NOISE_KEYS = ("between", "mixed")  # the job overrides that shape the series, not the detector


def noise_overrides(args: argparse.Namespace) -> dict[str, str]:
    """``--between`` and ``--mixed-trials`` as job overrides (``noise_of`` reads them back)."""
    options = {}
    if args.between:
        options["between"] = args.between
    if args.mixed_trials:
        options["mixed"] = "1"
    return options


def noise_of(overrides: dict[str, str]) -> tuple[tuple[float, float], bool]:
    """``make_series``' noise arguments from the overrides: the run-to-run noise's range
    (``--between LO,HI``, a multiple of the within-run noise) and mixed trial counts."""
    between = BETWEEN
    if "between" in overrides:
        low, high = (float(v) for v in overrides["between"].split(","))
        between = (low, high)
    return between, "mixed" in overrides


def _thresholds(text: str) -> dict[str, float]:
    """The peers' thresholds as passed to a worker ("pelt=12.5,otava=1e-05")."""
    pairs = (item.split("=", 1) for item in text.split(",") if item)
    return {name: float(value) for name, value in pairs}


def _settings(overrides: dict[str, str]) -> Settings:
    base = Settings()
    values: dict[str, Any] = {
        k: type(getattr(base, k))(v) if getattr(base, k) is not None else float(v)
        for k, v in overrides.items()
    }
    return replace(base, **values)


def jobs(
    seed: int, scale: float, overrides: dict[str, str], only: Iterable[int] = ()
) -> list[tuple[int, str, int, int, dict[str, str]]]:
    """The suite's series (seed, kind, trials, size, overrides); ``only`` keeps these trial
    counts (the others' seeds are still drawn, so a cell's series are the same either way)."""
    rng = random.Random(seed)
    plan: list[tuple[str, int, int, int]] = []  # kind, trials, size, count
    for trials in range(1, 6):
        plan += [("step", trials, size, round(40 * scale)) for size in range(1, 6)]
        plan.append(("clean", trials, 0, round(200 * scale)))
        plan.append(("spike", trials, 0, round(40 * scale)))
        plan.append(("bimodal", trials, 0, round(40 * scale)))
    drawn = [
        (rng.randrange(2**32), kind, trials, size, overrides)
        for kind, trials, size, count in plan
        for _ in range(max(count, 1))
    ]
    keep = set(only)
    return [job for job in drawn if not keep or job[2] in keep]


def clean_jobs(
    seed: int, scale: float, overrides: dict[str, str]
) -> list[tuple[int, str, int, int, dict[str, str]]]:
    """The clean series' jobs of ``jobs(seed, scale)``, 200 x scale per trial count: what a
    peer is calibrated on."""
    return [job for job in jobs(seed, scale, overrides) if job[1] == "clean"]


def perfdb_false_rate(
    todo: list[tuple[int, str, int, int, dict[str, str]]], workers: int
) -> dict[int, float]:
    """perfdb's own online false alerts per 100 of these clean series, by trials per run and
    pooled (key 0): the budget ``--budget perfdb`` holds the peers to."""
    counts: dict[int, list[int]] = {0: [0, 0]}
    with ProcessPoolExecutor(workers) as pool:
        for series, outcome in pool.map(_work, todo, chunksize=16):
            for key in (0, series.trials):
                cell = counts.setdefault(key, [0, 0])
                cell[0], cell[1] = cell[0] + len(outcome.alerts), cell[1] + 1
    return {k: 100 * c[0] / c[1] for k, c in sorted(counts.items())}


def calibrated(args: argparse.Namespace, names: list[str], lab: str | None) -> dict[str, float]:
    """Each peer's online threshold at the budget (``--budget``): the issue's 1 false alert
    per 100 clean series, or ``perfdb``, the rate perfdb itself spends on the same series
    (with the lab prior when ``--lab``), so that both sides spend the same false alerts."""
    overrides = {"lab": lab} if lab else {}
    overrides |= noise_overrides(args)  # the same noise as the measured series
    noise = noise_of(overrides)
    todo = clean_jobs(detector_peers.CALIBRATION_SEED, args.calibration_scale, overrides)
    clean = [
        make_series(random.Random(s), kind, trials, size, *noise)
        for s, kind, trials, size, _ in todo
    ]
    budget = detector_peers.BUDGET
    if args.budget == "perfdb":
        rates = perfdb_false_rate(todo, args.workers)
        budget = rates[0]
        cells = " ".join(f"{rates.get(t, math.nan):.2f}" for t in range(1, 6))
        print(f"\nperfdb on the {len(todo)} calibration series: {cells} per 100 (1-5 trials)")
    elif args.budget is not None:
        budget = float(args.budget)
    print(f"calibration budget: {budget:.3f} false alerts per 100 clean series, pooled")
    return detector_peers.calibrate_all(names, clean, args.workers, budget)


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
            totals["caught"] += hit
            totals["oracle"] += hit and placed_exactly_by_oracle(series)
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
        f"exact kernel {pct(totals['exact'], totals['true'])} of true alerts "
        f"(ceiling on the caught steps, a placement knowing the true levels: "
        f"{pct(totals['oracle'], totals['caught'])})\n"
    )
    print("| false alerts per 100 series | " + " | ".join(f"{n} tr." for n in range(1, 6)) + " |")
    print("|---" * 6 + "|")
    for kind in KINDS:
        cells = [false_by[(kind, n)] for n in range(1, 6)]
        row = " | ".join(f"{100 * c[0] / c[1]:5.1f}" if c[1] else "  -  " for c in cells)
        print(f"| {kind} | {row} |")


def _arguments() -> argparse.Namespace:
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
    parser.add_argument(
        "--lab",
        nargs="?",
        const="1",
        help="the service's pooled prior: each series' workload/metric has 4 other setups "
        "with similar noise, pooled with policy.pooled_level_noise_pct as prior_noise_pct; "
        "'--lab spread': its weight from the votes' spread too (policy.pooled_prior); "
        "'--lab alike': the same, the setups assumed to share one noise",
    )
    parser.add_argument(
        "--trials",
        type=int,
        action="append",
        default=[],
        help="only the series with this many trials per run (repeatable; default 1-5)",
    )
    parser.add_argument(
        "--mixed-trials",
        action="store_true",
        help="each kernel has 1 to N trials (drawn), N the trials column: reruns as a lab has them",
    )
    parser.add_argument(
        "--between",
        metavar="LO,HI",
        help="run-to-run noise as a multiple of the within-run noise, drawn from [LO, HI] "
        "(default 0.25,1); '0,0': independent trials, no run-to-run noise",
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help="also run the installed peers (bench/detector_peers.py) on the same series, "
        "online and whole, and the peer suite",
    )
    parser.add_argument(
        "--peers-matched",
        action="store_true",
        help="run the installed peers online at the thresholds matching our detector's "
        "false-alert budget (detector_peers.MATCHED) and compare recall per cell",
    )
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="with --peers-matched: calibrate those thresholds again first (seed 1's clean "
        "series, detector_peers.calibrate)",
    )
    parser.add_argument(
        "--budget",
        help="with --peers-matched: false alerts per 100 clean series (pooled) the peers are "
        "held to (a number: calibrated now), or 'perfdb': the rate perfdb spends on the same "
        "series (detector_peers.EQUAL; with --calibrate measured and calibrated now); "
        "default: the issue's 1 (detector_peers.MATCHED)",
    )
    parser.add_argument(
        "--calibration-scale",
        type=float,
        default=1.0,
        help="when calibrating: 1,000 x this many clean series of the calibration seed (1)",
    )
    parser.add_argument(
        "--peer",
        action="append",
        default=[],
        help="run only this installed peer (repeatable; default: every installed one)",
    )
    parser.add_argument(
        "--scaling",
        type=int,
        nargs="*",
        metavar="N",
        help="only time one whole series of N kernels: perfdb and the peers (e.g. 1000 100000)",
    )
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    if args.scaling:
        detector_peers.scaling(args.scaling)
        return
    overrides = dict(item.split("=", 1) for item in args.set)
    if args.lab:
        overrides["lab"] = args.lab
    overrides |= noise_overrides(args)
    names = [n for n in detector_peers.available() if not args.peer or n in args.peer]
    if args.peers or args.peers_matched or args.calibrate:
        overrides["peers"] = ",".join(names)
    if args.peers_matched or args.calibrate:
        stored = detector_peers.EQUAL if args.budget == "perfdb" else detector_peers.MATCHED
        thresholds = {name: stored[name] for name in names}
        if args.calibrate or args.budget not in (None, "perfdb"):
            thresholds = calibrated(args, names, args.lab)
        overrides["thresholds"] = ",".join(f"{name}={v!r}" for name, v in thresholds.items())
    scale = args.scale * (0.1 if args.quick else 1.0)
    todo = jobs(args.seed, scale, overrides, args.trials)
    if args.prior_error is not None:
        todo = [(*job[:4], {**job[4], "prior_error": str(args.prior_error)}) for job in todo]
    started, cpu = time.perf_counter(), os.times()
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(_work, todo, chunksize=8))
    wall, after = time.perf_counter() - started, os.times()
    cpu_s = after.children_user + after.children_system - cpu.children_user - cpu.children_system
    bench_only = ("lab", "peers", "thresholds", *NOISE_KEYS)
    settings = _settings({k: v for k, v in overrides.items() if k not in bench_only})
    print(f"seed {args.seed}, {len(todo)} series, settings {settings}")
    if args.lab:
        print("prior: pooled from 4 sibling setups of the same workload/metric (--lab)")
    if args.between:
        print(f"run-to-run noise: {args.between} x the within-run noise (--between)")
    if args.mixed_trials:
        print("trials: each kernel 1 to the column's count, drawn (--mixed-trials)")
    if args.prior_error is not None:
        print(
            f"prior: each series' typical level noise, off by a lognormal error "
            f"(sd {args.prior_error})"
        )
    _figures(results, f"wall {wall:.1f} s, workers' CPU {cpu_s:.1f} s")
    if "peers" not in overrides:
        print(f"peers: not run (--peers; installed here: {', '.join(names)})")
        return
    rows = [(s, {"perfdb": (o.alerts, o.whole), **o.peers}) for s, o in results]
    if "thresholds" in overrides:
        print(f"\n## peers at our false-alert budget online: thresholds {overrides['thresholds']}")
        detector_peers.side_by_side(rows, ["perfdb", *names])
        detector_peers.matched_cells(rows, ["perfdb", *names])
        return
    detector_peers.side_by_side(rows, ["perfdb", *names])
    detector_peers.peer_suite(args.seed, max(round(200 * scale), 10), settings, args.workers)


SHARE_BINS = (0.0, 0.5, 0.8, 0.95, 0.99)


def calibration(results: list[tuple[Series, Outcome]]) -> None:
    """Is the location share an alert states right? For the step series' true alerts at
    first confirmation: the share stated against how often the kernel named was the step's."""
    bins: dict[float, list[float]] = defaultdict(list)
    exact: Counter[float] = Counter()
    either: Counter[float] = Counter()  # the step's kernel is the one named or the runner-up
    for series, outcome in results:
        if series.kind != "step":
            continue
        want = true_direction(series)
        for share, kernel, direction, other in outcome.stated:
            if direction == want and abs(kernel - series.step_at) <= 1:
                low = max(b for b in SHARE_BINS if b <= share)
                bins[low].append(share)
                exact[low] += kernel == series.step_at
                either[low] += series.step_at in (kernel, other)
    print(
        "\n| location share stated (online, at confirmation) | alerts | mean stated | exact "
        "| named or runner-up |"
    )
    print("|---|---|---|---|---|")
    for low in sorted(bins):
        shares = bins[low]
        high = SHARE_BINS[SHARE_BINS.index(low) + 1] if low != SHARE_BINS[-1] else 1.0
        print(
            f"| {low:.2f}-{high:.2f} | {len(shares)} | {statistics.fmean(shares):.3f} | "
            f"{pct(exact[low], len(shares))} | {pct(either[low], len(shares))} |"
        )


def _figures(results: list[tuple[Series, Outcome]], cost: str) -> None:
    report(results, "online")
    calibration(results)
    pending = Counter[str]()
    for series, outcome in results:
        pending[series.kind] += outcome.pending
    counts = Counter(s.kind for s, _ in results)
    print(
        "\npending (unconfirmed) changes per 100 series: "
        + ", ".join(f"{k} {100 * pending[k] / counts[k]:.1f}" for k in KINDS)
    )
    moved = sum(o.moved for _, o in results)
    print(f"alerts re-attributed to a neighbouring kernel by a later check: {moved}")
    report(results, "whole series")
    long_checks = [ms for s, o in results if len(s.points) >= 35 for ms in o.check_ms[34:]]
    every = [ms for _, o in results for ms in o.check_ms]
    print(
        f"\ncheck CPU time: median {statistics.median(every):.2f} ms, 40-kernel series median "
        f"{statistics.median(long_checks):.2f} ms, p95 "
        f"{statistics.quantiles(long_checks, n=20)[-1]:.2f} ms; {cost}; "
        f"load average {Path('/proc/loadavg').read_text().split()[0]}"
    )


if __name__ == "__main__":
    main()

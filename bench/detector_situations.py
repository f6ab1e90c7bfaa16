"""The lab situations in which the product's regression alert must fire, perfdb beside peers.

    .venv/bin/python bench/detector_situations.py                  # ~300 series a cell
    .venv/bin/python bench/detector_situations.py --seed 7 --scale 0.3
    .venv/bin/python bench/detector_situations.py --smoke          # 20 series a cell: it runs
    .venv/bin/python bench/detector_situations.py --only ab-10 --only clean-ab --set alpha=0.05
    /tmp/detector-peers/bin/python bench/detector_situations.py --peers   # + welch, pelt, otava

What it measures: on seeded synthetic series, replayed as the service sees them (one kernel
per upload, in kernel order: ``detector_suite.service_check`` for the new kernel's run, the
alerts kept by ``detector_suite.AlertBook``), the share of regressions that end with a
*confirmed* alert (the emailed kind; a pending "unconfirmed" one never reaches anybody) within
one kernel of the regressing kernel, and the confirmed regression alerts raised on series
where nothing regressed (improvement alerts are recorded, not emailed, and not counted). One
table, one row a situation ("cell"), with the goal beside it and a closing "goals met: N of
M". About 40-70 s at --scale 1 on 2 cores, 1.5-2 min with the peers. With fewer than 100 series a
cell (--scale 0.3 gives 90) one false alert already misses the "<= 1 per 100" goal.

Series: one stock run per kernel (``f"2.6.{i}"``, kernel order = upload order), every trial
independent and normal around the kernel's true level with sd = CV x the base level (the
base drawn from 100-1000); CV 1, 3 and 8 % pooled, 3 and 5 trials a run pooled (one-trial
rows: 1), metrics where higher and where lower is better pooled: each cell's series cycle
through these 12 (6) combinations. A step of X % moves the level by X % of the level before
it in the worse direction. Series i of a cell is seeded by (seed, cell, i), so a cell's
series are the same at every scale and whatever else runs.

Why each situation: each is a way a kernel lab uses the dashboard (A/B tests, short series,
staircases, one trial a run), besides the long monitored history.

- ab-X / clean-ab: an A/B test, a stock kernel against the next one and nothing else: the
  commonest question asked of the lab; the alert must fire on the second kernel. Recall: a
  confirmed regression alert on kernel 1 (X = 10, 20, 45 %).
- short-X / clean-short: a short series of 3-6 kernels (a bisection, a release's rcs), one
  step anywhere from the second kernel to the last.
- stair-2x10, stair-2x25 (4-8 kernels), stair-3x10 (6-10 kernels) / clean-stair-length
  (6-10 kernels, clean: the false alerts at the stairs' own length): a regression that lands
  in slices across releases, each slice of X %, >= 2 kernels apart. Each step needs its own
  alert within one kernel (one alert never counts for two steps); the row is the share of
  steps caught.
- recovery-20: a 20 % regression half fixed 1-2 kernels later (4-7 kernels): the alert must
  fire and still stand at the end (the remaining 10 % is still a regression).
- long-X / clean-long: a long history (30-60 kernels), one step of 5, 10 or 20 % in the
  middle 20-80 %: the monitoring case, where small steps must be found.
- drift-2 / drift-1: a regression that creeps in, no kernel a step: 10-16 kernels whose
  last 6-10 are each 2 % worse than the one before (-11 to -18 % in all), and 12-16 kernels
  whose last 10 are each 1 % worse (-10 %). Recall: a confirmed regression alert, of any
  method, on a kernel of the drift (its first worse kernel to the newest).
- spike: 10-20 kernels, one kernel 20 % worse and the next ones back: a flaky run, which
  must not be emailed as a regression.
- heavy-t, bimodal, outlier: clean short series (3-6 kernels) with awkward trials: Student t
  (3 dof, scaled to the CV's sd), a second mode 10 % away taking each trial with
  probability 0.1, one trial of the series 5 CV away.
- one1-*: one trial a run (no within-run noise to learn from): one1-short-20 has 5-8 kernels
  (not 3-6: with one trial the noise can only come from the kernels' own moves, so the
  series must be long enough to hold some), one1-stair-3x10 9-15 kernels with steps >= 3
  kernels apart, and their clean twins (3-6 and 9-15 kernels). The same four with "+prior":
  the lab runs the workload on four other setups (clean series of 10-20 kernels, the same
  CV and trials), and the series' run-to-run noise has the prior the product pools from
  them (``sibling_prior``, as ``perfdb/alerting/noise_prior.py``); the rows without it are
  a workload run on one setup only.
- rerun-20 / clean-rerun: a short series (3-6 kernels) in a lab with run-to-run noise (each
  run's level off by up to 1 x the trials' CV, drawn per series) where one kernel before the
  step (any but the newest, in the clean twin) was run again: the rerun is all the series
  knows of that noise.
- upload-30: 30 clean metrics uploaded together (one group: 30 independent clean short
  series of the same 3-6 kernels and trials, each metric its own CV and direction): the
  false alerts a lab sees per upload (one upload = one kernel of all 30 metrics), total
  confirmed false alerts / uploads. 30 groups at --scale 1 (900 series).

Steps fall anywhere from kernel 1 to the last kernel, so a step on the newest kernel of a
series (every A/B test) is one the detector has only that upload to confirm; the breakdown
table under the main one gives perfdb's recall by CV and trials, on steps that ended the
series, and the share of steps left with a pending (never emailed) alert only.

Peers (``--peers``, each skipped when it cannot be imported here):

- welch: at each new kernel, Welch's t-test (scipy ``ttest_ind(equal_var=False)``) of its
  trials against the previous kernel's, alpha 0.01 two-sided and |change| >= 2 %, confirmed
  at once (needs 2 trials a side: never alerts with one trial);
- pelt, otava: ``bench/detector_peers.py``'s ``pelt`` and ``otava`` on the kernels' levels
  (mean of the trials), run on every prefix as uploads arrive; a change point found at any
  upload is an alert in the direction of the segment after against the one before
  (``detector_peers.online``). At their own thresholds (tuned on whole series; online they
  spend many more false alerts than perfdb), or ``--peer-thresholds matched``: those
  calibrated to perfdb's budget on the accuracy suite (``detector_peers.MATCHED``). Read
  each peer's recall beside its false alerts in the clean rows.

They need ruptures and apache-otava, not project dependencies::

    python3 -m venv /tmp/detector-peers
    /tmp/detector-peers/bin/pip install ruptures apache-otava numpy scipy
    /tmp/detector-peers/bin/pip install -r requirements.txt

(apache-otava 0.8 pins numpy 2.2 and scipy < 1.17; the project's requirements then bring
numpy 2.4 and scipy 1.17 over them, with a warning from pip: otava runs with them.)
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import detector_peers  # noqa: E402
from detector_peers import Alerts  # noqa: E402
from detector_suite import AlertBook, Series, service_check  # noqa: E402

from perfdb.detector import policy  # noqa: E402
from perfdb.detector.detection import Point, Settings  # noqa: E402

CVS = (0.01, 0.03, 0.08)  # per-trial sd / base level
TRIALS = (3, 5)  # main rows; the one-trial rows have 1
BETTER = ("higher", "lower")
PEERS = ("welch", "pelt", "otava")
WELCH_ALPHA = 0.01
WELCH_MIN_CHANGE = 0.02
SERIES_PER_CELL = 300  # at --scale 1
UPLOAD_METRICS = 30
UPLOAD_GROUPS = 30  # groups of 30 metrics at --scale 1
SMOKE = 20  # series a cell with --smoke (2 upload groups)


@dataclass(frozen=True)
class Cell:
    """One situation: how its series are drawn and what counts."""

    name: str
    what: str
    kernels: tuple[int, int]  # drawn uniformly, both included
    steps: int = 0  # successive steps of ``size``
    size: float = 0.0  # % per step (or the spike's %)
    gap: int = 1  # kernels between successive steps, at least
    middle: bool = False  # the step in the middle 20-80 % of the series
    recovery: bool = False  # half of the step recovered 1-2 kernels after it
    spike: bool = False  # one kernel ``size`` % worse, the next ones back
    trials: tuple[int, ...] = TRIALS
    noise: str = "normal"  # or "t3", "bimodal", "outlier"
    goal: float | None = None  # recall % at least, or false alerts per 100 at most
    upload: bool = False  # groups of UPLOAD_METRICS clean metrics uploaded together
    siblings: int = 0  # the workload's other setups the product's prior is pooled from
    drift: tuple[int, int] = (0, 0)  # the last kernels drawn from this range each ``size`` % worse
    rerun: bool = False  # one kernel of the level before the step (any but the last) run twice
    between: float = 0.0  # run-to-run noise of each run, drawn up to this x the trials' CV

    @property
    def clean(self) -> bool:
        return self.steps == 0 and not self.drifts

    @property
    def drifts(self) -> bool:
        return self.drift[1] > 0


def _cells() -> tuple[Cell, ...]:
    short, one1 = (3, 6), (1,)
    cells = [
        *(
            Cell(f"ab-{x}", f"2 kernels, 2nd {x} % worse", (2, 2), 1, x, goal=g)
            for x, g in ((10, 60.0), (20, 80.0), (45, 97.0))
        ),
        Cell("clean-ab", "2 kernels, no change", (2, 2), goal=1.0),
        *(
            Cell(f"short-{x}", f"3-6 kernels, one {x} % step", short, 1, x, goal=g)
            for x, g in ((10, 60.0), (20, 80.0), (45, 95.0))
        ),
        Cell("clean-short", "3-6 kernels, no change", short, goal=1.0),
        Cell("stair-2x10", "4-8 kernels, 2 steps of 10 %", (4, 8), 2, 10, 2, goal=75.0),
        Cell("stair-2x25", "4-8 kernels, 2 steps of 25 %", (4, 8), 2, 25, 2, goal=92.0),
        Cell("stair-3x10", "6-10 kernels, 3 steps of 10 %", (6, 10), 3, 10, 2, goal=90.0),
        Cell("clean-stair-length", "6-10 kernels, no change", (6, 10), goal=1.0),
        Cell(
            "recovery-20",
            "4-7 kernels, 20 % step, half back 1-2 later",
            (4, 7),
            1,
            20,
            recovery=True,
            goal=90.0,
        ),
        *(
            Cell(f"long-{x}", f"30-60 kernels, one {x} % step", (30, 60), 1, x, middle=True, goal=g)
            for x, g in ((5, 80.0), (10, 97.0), (20, 100.0))
        ),
        Cell("clean-long", "30-60 kernels, no change", (30, 60), goal=1.0),
        Cell(
            "drift-2",
            "10-16 kernels, the last 6-10 each 2 % worse",
            (10, 16),
            size=2,
            drift=(6, 10),
            goal=75.0,
        ),
        Cell(
            "drift-1",
            "12-16 kernels, the last 10 each 1 % worse",
            (12, 16),
            size=1,
            drift=(10, 10),
            goal=50.0,
        ),
        Cell(
            "spike", "10-20 kernels, one kernel 20 % worse", (10, 20), 0, 20, spike=True, goal=1.0
        ),
        Cell("heavy-t", "3-6 kernels, Student t (3 dof) trials", short, noise="t3", goal=1.0),
        Cell("bimodal", "3-6 kernels, 10 % of trials 10 % away", short, noise="bimodal", goal=1.0),
        Cell("outlier", "3-6 kernels, one trial 5 CV away", short, noise="outlier", goal=1.0),
    ]
    one1_cells = [
        Cell(
            "one1-short-20",
            "1 trial, 5-8 kernels, one 20 % step",
            (5, 8),
            1,
            20,
            trials=one1,
            goal=55.0,
        ),
        Cell(
            "one1-stair-3x10",
            "1 trial, 9-15 kernels, 3 steps of 10 %",
            (9, 15),
            3,
            10,
            3,
            trials=one1,
            goal=85.0,
        ),
        Cell("one1-clean-short", "1 trial, 3-6 kernels, no change", short, trials=one1, goal=1.0),
        Cell(
            "one1-clean-stair-length",
            "1 trial, 9-15 kernels, no change",
            (9, 15),
            trials=one1,
            goal=1.0,
        ),
    ]
    cells += [
        *one1_cells,
        *[
            replace(c, name=f"{c.name}+prior", what=f"{c.what}, 4 other setups", siblings=4)
            for c in one1_cells
        ],
        Cell("upload-30", "30 clean 3-6 kernel metrics an upload", short, goal=0.3, upload=True),
        Cell(
            "rerun-20",
            "3-6 kernels, one run again, run-to-run noise, 20 % step",
            short,
            1,
            20,
            rerun=True,
            between=1.0,
            goal=80.0,
        ),
        Cell(
            "clean-rerun",
            "3-6 kernels, one run again, run-to-run noise",
            short,
            rerun=True,
            between=1.0,
            goal=1.0,
        ),
    ]
    return tuple(cells)


CELLS = _cells()
BY_NAME = {c.name: c for c in CELLS}


@dataclass(frozen=True)
class Case:
    """One drawn series of a cell: ``series.steps`` holds (kernel index, went up) of each
    step, all in the worse direction; ``series.within`` is the CV."""

    cell: str
    cv: float
    series: Series


def _worse(better: str) -> float:
    """The sign of a worse level: down when higher is better."""
    return -1.0 if better == "higher" else 1.0


def _step_positions(rng: random.Random, n: int, count: int, gap: int) -> list[int]:
    """``count`` step kernels in 1..n-1, successive ones >= ``gap`` apart, uniform over the
    allowed placements (rejection)."""
    while True:
        at = sorted(rng.sample(range(1, n), count))
        if all(b - a >= gap for a, b in zip(at, at[1:], strict=False)):
            return at


def _levels(rng: random.Random, cell: Cell, n: int, sign: float) -> tuple[list[float], list[int]]:
    """Each kernel's true level (x the base level) and the steps' kernels."""
    factor = [1.0] * n
    steps: list[int] = []
    if cell.recovery:
        back = rng.randint(1, 2)
        steps = [rng.randint(1, n - 1 - back)]
        for k in range(steps[0], n):
            factor[k] = 1.0 + sign * cell.size / (100 if k < steps[0] + back else 200)
    elif cell.steps:
        if cell.middle:
            steps = [rng.randint(math.ceil(0.2 * n), math.floor(0.8 * n))]
        else:
            steps = _step_positions(rng, n, cell.steps, cell.gap)
        for k in range(n):
            for at in steps:
                if k >= at:
                    factor[k] *= 1.0 + sign * cell.size / 100
    elif cell.drifts:  # each of the last kernels worse than the one before
        start = n - min(rng.randint(*cell.drift), n - 1)
        steps = [start]
        for k in range(start, n):
            factor[k] = (1.0 + sign * cell.size / 100) ** (k - start + 1)
    elif cell.spike:  # a kernel off and the next ones back: at least one after it
        factor[rng.randint(1, n - 2)] = 1.0 + sign * cell.size / 100
    return factor, steps


def _trial(rng: random.Random, noise: str, level: float, sd: float, mode: float) -> float:
    """One trial around ``level``: normal, Student t with 3 dof (its sd scaled to ``sd``), or
    normal with probability 0.1 of the second mode ``mode`` x level away."""
    if noise == "t3":
        chi2 = rng.gammavariate(1.5, 2.0)  # 3 dof
        return level + sd / math.sqrt(3.0) * rng.gauss(0.0, 1.0) / math.sqrt(chi2 / 3.0)
    if noise == "bimodal" and rng.random() < 0.1:
        level *= 1.0 + mode
    return level + rng.gauss(0.0, sd)


def make_case(
    seed: int, cell: Cell, index: int, trials: int | None = None, kernels: int | None = None
) -> Case:
    """Series ``index`` of ``cell``: its trials, CV and direction from the cell's cycle of
    combinations; an upload group's metrics share ``trials`` and ``kernels`` and draw their
    CV and direction."""
    rng = random.Random(f"{seed}:{cell.name.removesuffix('+prior')}:{index}")
    combos = [(t, cv, b) for t in cell.trials for cv in CVS for b in BETTER]
    count, cv, better = combos[index % len(combos)]
    if trials is not None:
        count, cv, better = trials, rng.choice(CVS), rng.choice(BETTER)
    n = kernels if kernels is not None else rng.randint(*cell.kernels)
    base = rng.uniform(100.0, 1000.0)
    sign = _worse(better)
    factor, steps = _levels(rng, cell, n, sign)
    sd = cv * base
    mode = rng.choice((1.0, -1.0)) * 0.10
    # the runs in upload order, by kernel: one kernel before the first step run twice
    runs = list(range(n))
    if cell.rerun:
        again = rng.randrange((steps[0] if steps else n - 1) or 1)
        runs.insert(again + 1, again)
    between = rng.uniform(0.0, cell.between) * cv if cell.between else 0.0
    values = []
    for k in runs:
        level = base * factor[k] * (1.0 + rng.gauss(0.0, between)) if between else base * factor[k]
        values.append([_trial(rng, cell.noise, level, sd, mode) for _ in range(count)])
    if cell.noise == "outlier":
        k, t = rng.randrange(n), rng.randrange(count)
        values[k][t] += rng.choice((1.0, -1.0)) * 5 * sd
    first = rng.randint(0, 200)
    points = tuple(
        Point(run_id=i + 1, kernel=f"2.6.{first + k}", patches=(), values=tuple(v))
        for i, (k, v) in enumerate(zip(runs, values, strict=True))
    )
    steps = [runs.index(at) for at in steps]  # as runs, which the alerts name
    up = sign > 0
    series = Series(
        kind=cell.name,
        points=points,
        better=better,
        trials=count,
        sigma_steps=0,
        step_at=steps[0] if steps else -1,
        step_up=up,
        within=cv,
        steps=tuple((at, up) for at in steps),
        base=base,
    )
    return Case(cell.name, cv, series)


# --- the detectors, online ---


def perfdb_replay(series: Series, settings: Settings) -> tuple[Alerts, Alerts]:
    """One kernel per upload, as the service checks it: (confirmed alerts at the end, every
    alert kept, pending ones too), as (kernel index, direction)."""
    book = AlertBook()
    for k in range(1, len(series.points) + 1):
        points = series.points[:k]
        book.record(points, service_check(points, {k}, series.better, settings))
    return book.alerts(), [(i, d) for i, d, _ in book.held()]


def _direction(change: float, better: str) -> str:
    return "improvement" if (change > 0) == (better == "higher") else "regression"


def welch(series: Series) -> Alerts:
    """Each kernel's trials against the previous kernel's: Welch's t-test, alpha 0.01
    two-sided, |change| >= 2 %, an alert at once."""
    from scipy import stats

    out: Alerts = []
    for k in range(1, len(series.points)):
        before, after = series.points[k - 1].values, series.points[k].values
        if min(len(before), len(after)) < 2:
            continue
        old = statistics.fmean(before)
        change = (statistics.fmean(after) - old) / old
        if abs(change) < WELCH_MIN_CHANGE:
            continue
        if stats.ttest_ind(after, before, equal_var=False).pvalue < WELCH_ALPHA:
            out.append((k, _direction(change, series.better)))
    return out


def available_peers() -> tuple[list[str], list[str]]:
    """(the peers that run here, a note for each that does not)."""
    found = set(detector_peers.available())
    if importlib.util.find_spec("scipy") is not None:
        found.add("welch")
    needs = {"welch": "scipy", "pelt": "ruptures", "otava": "apache-otava"}
    return [p for p in PEERS if p in found], [
        f"{p} (needs {needs[p]})" for p in PEERS if p not in found
    ]


# --- scoring ---


def _matched(steps: Sequence[int], alerts: Iterable[tuple[int, str]]) -> set[int]:
    """The steps caught: each matched to its own regression alert within one kernel (a
    maximum matching, so one alert never counts for two steps)."""
    kernels = sorted({i for i, d in alerts if d == "regression"})
    owner: dict[int, int] = {}

    def take(step: int, tried: set[int]) -> bool:
        for a in kernels:
            if abs(a - step) <= 1 and a not in tried:
                tried.add(a)
                if a not in owner or take(owner[a], tried):
                    owner[a] = step
                    return True
        return False

    for step in steps:
        take(step, set())
    return set(owner.values())


@dataclass
class Score:
    """One detector on one case (or one upload group): steps caught of steps, or confirmed
    regression alerts on a clean series; perfdb's steps on the series' last kernel (and
    caught of those) and steps left with a pending alert only."""

    hits: int = 0
    steps: int = 0
    false: int = 0
    last: int = 0
    last_hits: int = 0
    pending_only: int = 0


def score(series: Series, alerts: Alerts, held: Alerts | None = None) -> Score:
    steps = [at for at, _ in series.steps]
    if not steps:
        return Score(false=len({(i, d) for i, d in alerts if d == "regression"}))
    if BY_NAME[series.kind].drifts:  # caught: a regression alert on a kernel of the drift
        hit = int(any(i >= steps[0] and d == "regression" for i, d in alerts))
        seen = int(any(i >= steps[0] and d == "regression" for i, d in (held or alerts)))
        return Score(hits=hit, steps=1, pending_only=max(seen - hit, 0))
    caught = _matched(steps, alerts)
    last = [s for s in steps if s == len(series.points) - 1]
    seen = len(_matched(steps, held)) if held is not None else len(caught)
    return Score(
        hits=len(caught),
        steps=len(steps),
        last=len(last),
        last_hits=sum(1 for s in last if s in caught),
        pending_only=max(seen - len(caught), 0),
    )


@dataclass
class Result:
    """A job's outcome: a case, or an upload group (``series``: its metrics, ``uploads``:
    its kernels)."""

    cell: str
    cv: float
    trials: int
    series: int
    uploads: int
    scores: dict[str, Score] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)


Job = tuple[int, str, int, Settings, tuple[str, ...], str]


def _run(
    series: Series, settings: Settings, peers: Sequence[str], thresholds: str
) -> tuple[dict[str, Score], dict[str, float]]:
    scores, cpu = {}, {}
    started = time.process_time()
    confirmed, held = perfdb_replay(series, settings)
    cpu["perfdb"] = time.process_time() - started
    scores["perfdb"] = score(series, confirmed, held)
    for name in peers:
        started = time.process_time()
        if name == "welch":
            alerts = welch(series)
        else:
            threshold = detector_peers.MATCHED[name] if thresholds == "matched" else None
            alerts = detector_peers.online(name, series, threshold)
        cpu[name] = time.process_time() - started
        scores[name] = score(series, alerts)
    return scores, cpu


def _add(into: dict[str, Score], more: dict[str, Score]) -> None:
    for name, s in more.items():
        t = into.setdefault(name, Score())
        t.hits, t.steps, t.false = t.hits + s.hits, t.steps + s.steps, t.false + s.false
        t.last, t.last_hits = t.last + s.last, t.last_hits + s.last_hits
        t.pending_only += s.pending_only


def sibling_prior(seed: int, cell: Cell, index: int, case: Case) -> float | None:
    """The prior the product pools for a series from its workload's other setups
    (``perfdb/alerting/noise_prior.py``: ``policy.pooled_level_noise_pct`` of their stock
    levels): ``cell.siblings`` clean series of 10-20 kernels at the case's CV and trials."""
    rng = random.Random(f"{seed}:{cell.name}:{index}:siblings")
    trials = case.series.trials
    levels = [
        [
            statistics.fmean(rng.gauss(1.0, case.cv) for _ in range(trials))
            for _ in range(rng.randint(10, 20))
        ]
        for _ in range(cell.siblings)
    ]
    return policy.pooled_level_noise_pct(levels)[0]


def work(job: Job) -> Result:
    """One job: series ``index`` of a cell, or upload group ``index`` of an upload cell."""
    seed, name, index, settings, peers, thresholds = job
    cell = BY_NAME[name]
    if not cell.upload:
        case = make_case(seed, cell, index)
        if cell.siblings:
            prior = sibling_prior(seed, cell, index, case)
            settings = replace(settings, prior_noise_pct=prior)
        scores, cpu = _run(case.series, settings, peers, thresholds)
        return Result(name, case.cv, case.series.trials, 1, 1, scores, cpu)
    rng = random.Random(f"{seed}:{name}:group {index}")
    n, trials = rng.randint(*cell.kernels), TRIALS[index % len(TRIALS)]
    result = Result(name, math.nan, trials, UPLOAD_METRICS, n)
    for metric in range(UPLOAD_METRICS):
        case = make_case(seed, cell, index * UPLOAD_METRICS + metric, trials, n)
        scores, cpu = _run(case.series, settings, peers, thresholds)
        _add(result.scores, scores)
        for key, seconds in cpu.items():
            result.cpu[key] = result.cpu.get(key, 0.0) + seconds
    return result


def jobs(
    seed: int, count: int, groups: int, settings: Settings, peers: Sequence[str], thresholds: str
) -> list[Job]:
    """``count`` series of each case cell and ``groups`` groups of each upload cell; the
    long cells first, so that the pool's last jobs are short ones."""
    return [
        (seed, cell.name, i, settings, tuple(peers), thresholds)
        for cell in sorted(CELLS, key=lambda c: -c.kernels[1] * (UPLOAD_METRICS if c.upload else 1))
        for i in range(groups if cell.upload else count)
    ]


# --- the table ---


@dataclass
class Tally:
    series: int = 0
    uploads: int = 0
    scores: dict[str, Score] = field(default_factory=dict)


def tally(results: Iterable[Result], key: Callable[[Result], Any]) -> dict[Any, Tally]:
    out: dict[Any, Tally] = defaultdict(Tally)
    for r in results:
        t = out[key(r)]
        t.series, t.uploads = t.series + r.series, t.uploads + r.uploads
        _add(t.scores, r.scores)
    return out


def value(cell: Cell, t: Tally, name: str) -> float:
    """Recall %, false alerts per 100 series, or false alerts per upload."""
    s = t.scores[name]
    if cell.upload:
        return s.false / max(t.uploads, 1)
    if cell.clean:
        return 100 * s.false / max(t.series, 1)
    return 100 * s.hits / max(s.steps, 1)


def shown(cell: Cell, t: Tally, name: str) -> str:
    s, v = t.scores[name], value(cell, t, name)
    if cell.upload:
        return f"{v:.3f} ({s.false}/{t.uploads} uploads)"
    if cell.clean:
        return f"{v:.2f} ({s.false}/{t.series})"
    return f"{v:.1f} % ({s.hits}/{s.steps})"


def met(cell: Cell, v: float) -> bool:
    assert cell.goal is not None
    return v <= cell.goal if cell.clean else v >= cell.goal - 1e-9


def goal_text(cell: Cell) -> str:
    if cell.upload:
        return f"<= {cell.goal:g} / upload"
    if cell.clean:
        return f"<= {cell.goal:g} / 100"
    return f">= {cell.goal:g} %"


def table(cells: Sequence[Cell], tallies: dict[Any, Tally], names: Sequence[str]) -> None:
    print("\n| situation | what | goal | " + " | ".join(names) + " | perfdb met |")
    print("|---" * (len(names) + 4) + "|")
    for cell in cells:
        t = tallies[cell.name]
        ok = met(cell, value(cell, t, "perfdb"))
        row = " | ".join(shown(cell, t, n) for n in names)
        print(
            f"| {cell.name} | {cell.what} | {goal_text(cell)} | {row} | {'yes' if ok else 'NO'} |"
        )
    print(
        "\n(recall: steps with a confirmed regression alert within one kernel, steps caught / "
        "steps; clean rows: confirmed regression alerts per 100 series, alerts / series; "
        "upload-30: per upload of 30 metrics)"
    )


def breakdown(cells: Sequence[Cell], tallies: dict[Any, Tally], results: Sequence[Result]) -> None:
    """perfdb's figure by CV and trials, on steps on the series' last kernel, and the share
    of steps left with only a pending alert."""
    by_cv = tally(results, lambda r: (r.cell, r.cv))
    by_trials = tally(results, lambda r: (r.cell, r.trials))
    print("\n### perfdb by noise and trials\n")
    print(
        "| situation | CV 1 % | CV 3 % | CV 8 % | by trials | steps on the last kernel: caught "
        "| steps with a pending alert only |"
    )
    print("|---" * 7 + "|")
    for cell in cells:
        if cell.upload:
            continue
        cv = [
            f"{value(cell, by_cv[(cell.name, c)], 'perfdb'):.1f}"
            if (cell.name, c) in by_cv
            else "-"
            for c in CVS
        ]
        trials = ", ".join(
            f"{n}: {value(cell, by_trials[(cell.name, n)], 'perfdb'):.1f}"
            for n in cell.trials
            if (cell.name, n) in by_trials
        )
        s = tallies[cell.name].scores["perfdb"]
        last = pending = "-"
        if not cell.clean:
            last = f"{s.last_hits}/{s.last}"
            pending = f"{100 * s.pending_only / max(s.steps, 1):.1f} % ({s.pending_only})"
        print(f"| {cell.name} | " + " | ".join(cv) + f" | {trials} | {last} | {pending} |")


def goals(cells: Sequence[Cell], tallies: dict[Any, Tally], names: Sequence[str]) -> None:
    for name in names:
        missed = []
        for cell in cells:
            v = value(cell, tallies[cell.name], name)
            if not met(cell, v):
                missed.append(f"{cell.name} {v:.3g} (goal {goal_text(cell)})")
        label = "goals met" if name == "perfdb" else f"{name}: goals met"
        print(f"{label}: {len(cells) - len(missed)} of {len(cells)}", end="")
        print(f"; missed: {', '.join(missed)}" if missed else "")


# --- command line ---


def settings_from(pairs: Sequence[str]) -> Settings:
    """``Settings()`` with ``--set NAME=VALUE`` overrides (as bench/detector_accuracy.py)."""
    base = Settings()
    values: dict[str, Any] = {}
    for pair in pairs:
        k, v = pair.split("=", 1)
        current = getattr(base, k)
        values[k] = float(v) if current is None else type(current)(v)
    return replace(base, **values)


def _arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seed", type=int, default=2003)
    parser.add_argument("--scale", type=float, default=1.0, help="x 300 series a cell")
    parser.add_argument("--smoke", action="store_true", help=f"{SMOKE} series a cell: it runs")
    parser.add_argument("--peers", action="store_true", help="also welch, pelt and otava")
    parser.add_argument(
        "--peer-thresholds",
        choices=("own", "matched"),
        default="own",
        help="pelt's and otava's: their own, or detector_peers.MATCHED (perfdb's budget)",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--only", action="append", default=[], choices=list(BY_NAME), help="this cell only"
    )
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = _arguments(argv)
    settings = settings_from(args.set)
    names: list[str] = ["perfdb"]
    skipped: list[str] = []
    if args.peers:
        found, skipped = available_peers()
        names += found
    count = SMOKE if args.smoke else max(round(SERIES_PER_CELL * args.scale), 1)
    groups = 2 if args.smoke else max(round(UPLOAD_GROUPS * args.scale), 1)
    cells = [c for c in CELLS if not args.only or c.name in args.only]
    todo = [
        j
        for j in jobs(args.seed, count, groups, settings, names[1:], args.peer_thresholds)
        if j[1] in {c.name for c in cells}
    ]
    started = time.perf_counter()
    if args.workers > 1:
        with multiprocessing.Pool(args.workers) as pool:
            results = list(pool.imap_unordered(work, todo, chunksize=4))
    else:
        results = [work(job) for job in todo]
    wall = time.perf_counter() - started
    series = sum(r.series for r in results)
    print(
        f"# detector situations: seed {args.seed}, {count} series a cell ({groups} groups of "
        f"{UPLOAD_METRICS} for upload-30), {series} series, one kernel per upload"
    )
    print(f"settings {settings}")
    if args.peers:
        print(
            f"peers: {', '.join(names[1:]) or 'none'}"
            + (f"; skipped: {', '.join(skipped)}" if skipped else "")
            + f"; pelt/otava thresholds: {args.peer_thresholds}"
        )
    tallies = tally(results, lambda r: r.cell)
    table(cells, tallies, names)
    breakdown(cells, tallies, results)
    print()
    goals(cells, tallies, names)
    cpu = ", ".join(f"{n} {sum(r.cpu.get(n, 0.0) for r in results):.1f} s" for n in names)
    print(
        f"\nwall {wall:.1f} s, {args.workers} worker(s), CPU: {cpu}; load average "
        f"{os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()

"""Do the situations bench's alerts hold in the product? A held-out replay.

    .venv/bin/python bench/situations_agreement.py                  # seed 61, 3 a cell, ~80 s
    .venv/bin/python bench/situations_agreement.py --per-cell 12 --groups 3   # 390, ~4 min
    .venv/bin/python bench/situations_agreement.py --per-cell 1 --only ab-10 --only long-5
    .venv/bin/python bench/situations_agreement.py --groups 0       # without the upload-30 group

bench/detector_situations.py measures the detector on lab situations (A/B tests, short
series, staircases, recoveries, long series, one trial a kernel, clean series) by replaying
each series through the detector's calls, the alerts kept in memory
(``detector_suite.service_check`` and ``AlertBook``, one kernel per upload). Here series of a
held-out seed (61; the situations were tuned on 2003) are replayed twice: so
(``product_replay.in_bench``, no prior: checked against ``detector_situations.perfdb_replay``
too), and through the product, one bundle per kernel, ingested and checked, the alerts read
back from PostgreSQL (``product_replay.replay``). Both must end with the same alerts (every
alert: kernel, direction, confirmed or not). The compare page is then read on each confirmed
alert's runs and on each kernel against the one before
(``product_replay.compare_page_readings``): it must agree with the alerts or say why not,
never differ silently (each silent reading is printed).

``upload-30``'s group (30 clean metrics of one workload) is uploaded as a lab uploads it: one
bundle per kernel holding all 30 metrics, each checked in the same upload's check; in memory
each metric is replayed on its own, as the situations bench replays it.

Prints one table, a row per situation ("cell"): its series, how many end with the same
alerts, each one that does not with both sides' alerts, and the compare page's readings; then
"N of M series agree; compare page: ...".

The database: ``DATABASE_URL`` (default ``perfdb_situations_agreement`` on 127.0.0.1, created
and migrated when missing, emptied first: its name must contain "agreement").
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

import detector_situations as situations  # noqa: E402
import product_replay  # noqa: E402
from _common import agreement_database, table  # noqa: E402
from detector_suite import Series, Settings  # noqa: E402
from product_replay import AGREES, OWN_HARDWARE, SAYS_WHY, SILENT, Held, Names  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/perfdb_situations_agreement"
HELD_OUT_SEED = 61  # detector_situations' goals were tuned on 2003


# --- the replays ---


@dataclass
class Outcome:
    """One series replayed both ways."""

    label: str  # "#index" in its cell (an upload group's metric: "g0 m7")
    bench: list[Held]
    product: list[Held]
    readings: Counter[str]
    silent: list[str] = field(default_factory=list)  # each silent reading, described
    bench_model: bool = True  # in_bench gave what detector_situations.perfdb_replay gives

    @property
    def agrees(self) -> bool:
        return self.bench == self.product


def _bench(series: Series, short_kernels: int) -> tuple[list[Held], bool]:
    """The in-memory replay (no prior: nothing pools one for these series), and whether it
    is the situations bench's own (``perfdb_replay``, which scores them)."""
    held = product_replay.in_bench(series, None, short_kernels=short_kernels).held
    confirmed, kept = situations.perfdb_replay(series, Settings(short_kernels=short_kernels))
    same = sorted(confirmed) == sorted((i, d) for i, d, c in held if c) and sorted(kept) == [
        (i, d) for i, d, _ in held
    ]
    return held, same


def _outcome(
    label: str, series: Series, names: Names, product: list[Held], short_kernels: int
) -> Outcome:
    bench, same = _bench(series, short_kernels)
    readings = product_replay.compare_page_readings(names)
    silent = silent_readings(names, series) if readings[SILENT] else []
    return Outcome(label, bench, product, readings, silent, same)


def case_replay(seed: int, cell: situations.Cell, index: int, short_kernels: int) -> Outcome:
    """Series ``index`` of ``cell``: uploaded one kernel per bundle, as the bench replays it."""
    series = situations.make_case(seed, cell, index).series
    tag = f"{seed}_{cell.name.replace('-', '_')}_{index}"
    product = product_replay.replay(series, tag, [])
    return _outcome(f"#{index}", series, Names.of(tag), product, short_kernels)


def group_series(seed: int, cell: situations.Cell, index: int) -> list[Series]:
    """Upload group ``index`` of an upload cell, its metrics drawn as
    ``detector_situations.work`` draws them, on the first metric's kernel names (each
    metric draws its own; one upload brings one kernel of all of them)."""
    rng = random.Random(f"{seed}:{cell.name}:group {index}")
    n, trials = rng.randint(*cell.kernels), situations.TRIALS[index % len(situations.TRIALS)]
    count = situations.UPLOAD_METRICS
    drawn = [
        situations.make_case(seed, cell, index * count + m, trials, n).series for m in range(count)
    ]
    kernels = [p.kernel for p in drawn[0].points]
    return [
        replace(
            s, points=tuple(p._replace(kernel=k) for p, k in zip(s.points, kernels, strict=True))
        )
        for s in drawn
    ]


def group_manifest(workload: str, metrics: Sequence[tuple[Names, Series]], k: int) -> str:
    """One bundle of kernel ``k`` of every metric of the group: one stock run."""
    head = ["format = 1", f'[hardware."{OWN_HARDWARE}"]', "cpus = 2"]
    for names, series in metrics:
        head += [f"[metric.{names.metric}]", 'unit = "ops/s"', f'better = "{series.better}"']
    values = ", ".join(
        f"{names.metric} = [{', '.join(map(repr, series.points[k].values))}]"
        for names, series in metrics
    )
    run = [
        "[[run]]",
        f'workload = "{workload}"',
        'workload_version = "1"',
        f'kernel = "{metrics[0][1].points[k].kernel}"',
        "patches = []",
        f'hardware = "{OWN_HARDWARE}"',
        'mode = "UP"',
        f"metrics = {{ {values} }}",
    ]
    return "\n".join(head) + "\n\n" + "\n".join(run) + "\n"


def group_replay(seed: int, cell: situations.Cell, index: int, short_kernels: int) -> list[Outcome]:
    """Upload group ``index``: a bundle per kernel with all its metrics, each upload checked
    (every metric's series in the one check); each metric compared with its own replay."""
    drawn = group_series(seed, cell, index)
    tag = f"{seed}_{cell.name.replace('-', '_')}_g{index}"
    workload = Names.of(tag).workload
    metrics = [(Names(workload, f"m_{tag}_{m}"), s) for m, s in enumerate(drawn)]
    for k in range(len(drawn[0].points)):
        upload_id = product_replay.ingest(group_manifest(workload, metrics, k), f"{tag}-{k}.tar.gz")
        product_replay.check(upload_id)
    return [
        _outcome(
            f"g{index} m{m}",
            series,
            names,
            product_replay.stored_alerts(names, series),
            short_kernels,
        )
        for m, (names, series) in enumerate(metrics)
    ]


def silent_readings(names: Names, series: Series) -> list[str]:
    """The compare page's readings that differ from the alerts without a note, described (as
    ``product_replay.compare_page_readings`` reads them, kernels as series indices)."""
    from dashboards.page_data.compare import compare_data
    from perfdb.models import Alert, Run

    index = {p.kernel: i for i, p in enumerate(series.points)}
    runs = dict(
        Run.objects.filter(
            setup__workload__name=names.workload, setup__hardware__name=OWN_HARDWARE
        ).values_list("pk", "kernel__version")
    )
    alerts = Alert.objects.filter(
        metric__name=names.metric, setup__hardware__name=OWN_HARDWARE, confirmed_at__isnull=False
    ).prefetch_related("baseline_runs")
    confirmed = {a.candidate_run_id: a.direction for a in alerts}
    readings = [([r.pk for r in a.baseline_runs.all()], [a.candidate_run_id]) for a in alerts]
    by_kernel = sorted(runs, key=lambda r: index[runs[r]])
    readings += [([a], [b]) for a, b in zip(by_kernel, by_kernel[1:], strict=False)]
    found = []
    for base, new in readings:
        lines, _ = compare_data(base, new)
        (line,) = [line for line in lines if line.metric == names.metric]
        page = product_replay._direction(line.significant, line.better)
        detector = next((confirmed[r] for r in new if r in confirmed), None)
        if page != detector and not line.alert_note:
            found.append(
                f"kernels {[index[runs[r]] for r in base]} -> {[index[runs[r]] for r in new]}: "
                f"page {page or 'not significant'} ({line.verdict}, {line.reason}), "
                f"alert {detector or 'none'}"
            )
    return found


# --- the table ---


def alerts_text(held: Sequence[Held]) -> str:
    """``[k1 regression, k4 improvement pending]``: kernel index, direction, pending when
    not confirmed."""
    return "[" + ", ".join(f"k{i} {d}{'' if c else ' pending'}" for i, d, c in held) + "]"


def report(rows: Sequence[tuple[str, list[Outcome]]], seconds: float) -> None:
    lines = []
    for name, outcomes in rows:
        readings = sum((o.readings for o in outcomes), Counter[str]())
        differ = [
            f"{o.label}: bench {alerts_text(o.bench)} / product {alerts_text(o.product)}"
            for o in outcomes
            if not o.agrees
        ]
        agree = sum(o.agrees for o in outcomes)
        lines.append(
            (
                name,
                len(outcomes),
                agree,
                f"{len(outcomes) - agree}" + (" (" + "; ".join(differ) + ")" if differ else ""),
                f"{readings[AGREES]} / {readings[SAYS_WHY]} / {readings[SILENT]}",
            )
        )
    print(
        table(
            (
                "cell",
                "series",
                "agree",
                "differ",
                "compare page: agree / differ, says why / silent",
            ),
            lines,
        )
    )
    everything = [o for _, outcomes in rows for o in outcomes]
    for name, outcomes in rows:
        for o in outcomes:
            for text in o.silent:
                print(f"SILENT {name} {o.label}: {text}")
            if not o.bench_model:
                print(
                    f"NOTE {name} {o.label}: product_replay.in_bench differs from "
                    "detector_situations.perfdb_replay"
                )
    readings = sum((o.readings for o in everything), Counter[str]())
    print(
        f"\n{sum(o.agrees for o in everything)} of {len(everything)} series agree; compare page: "
        f"{sum(readings.values())} readings, {readings[SAYS_WHY]} differ with a reason, "
        f"{readings[SILENT]} silent ({seconds:.0f} s)"
    )


# --- command line ---


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--seed", type=int, default=HELD_OUT_SEED, help="held out: 61 (2003 tuned the goals)"
    )
    parser.add_argument("--per-cell", type=int, default=3, help="series per situation")
    parser.add_argument(
        "--groups", type=int, default=1, help="upload-30 groups of 30 metrics (0: none)"
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        choices=list(situations.BY_NAME),
        help="this cell only",
    )
    args = parser.parse_args(argv)
    agreement_database(DEFAULT_DB, "bench-situations-agreement-only")
    from django.conf import settings

    from perfdb.alerting import queue as alerting_queue

    mock.patch.object(alerting_queue, "regressions_check").start()  # run here instead
    mock.patch.object(alerting_queue, "notify_upload").start()  # no email worker here
    short_kernels = settings.PERFDB_SHORT_KERNELS
    cells = [
        c for c in situations.CELLS if not c.siblings and (not args.only or c.name in args.only)
    ]
    print(
        f"# situations through the product: seed {args.seed}, {args.per_cell} series a cell, "
        f"{args.groups} upload-30 group(s), one kernel per upload, no prior"
    )
    started = time.perf_counter()
    rows: list[tuple[str, list[Outcome]]] = []
    for cell in cells:
        if cell.upload:
            if args.groups:
                outcomes = [
                    o
                    for g in range(args.groups)
                    for o in group_replay(args.seed, cell, g, short_kernels)
                ]
                rows.append((cell.name, outcomes))
            continue
        rows.append(
            (
                cell.name,
                [case_replay(args.seed, cell, i, short_kernels) for i in range(args.per_cell)],
            )
        )
    report(rows, time.perf_counter() - started)


if __name__ == "__main__":
    main()

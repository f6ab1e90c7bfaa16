"""Regression-check speed: ``regressions_check_upload`` on an upload of 100 runs.

Re-run (on a database built with ``python manage.py synth_history --scale N``):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data \
        python bench/regression_speed.py

The upload goes through the real pipeline: 100 runs (10 later kernels, 2.6.3 to 2.6.12, on
10 synthetic setups of different workloads), each extending a stored series of 64 runs, with
a 15 % regression from 2.6.8 on half of them. The check the pipeline would queue is then run
in this process and timed: whole upload, per series (series query + detector + alerts), and
a second time (nothing new to record). Runs made here are marked synthetic.

Then the long series (``--only long`` for it alone): one setup with 60 metrics x 1,000 kernels
(4.0.0 to 4.9.99, one value each: 60,000 results, ingested once through the same pipeline and
kept for later runs), then one more run (kernel 5.0.N) as its own upload, and the check of its
60 series is timed (wall and this process's CPU: the machine may be shared), with what the
check reads (``check_data.load``) apart.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING
from unittest import mock

from _common import django_setup, ms, p50, p95, stored_upload, table, timed

if TYPE_CHECKING:
    from perfdb.models import Upload

LONG_WORKLOAD = "synthetic-long-series"
LONG_METRICS = 60
LONG_KERNELS = [f"4.{i // 100}.{i % 100}" for i in range(1000)]

WORKLOADS = (
    "VolanoMark",
    "SPECjAppServer2002",
    "Trade",
    "SPECweb99",
    "LMBench",
    "tiobench",
    "kernbench",
    "netperf",
    "hackbench",
    "AIM7",
)


def _toml_value(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def manifest(nonce: str) -> str:
    """10 setups x 10 kernels; the generator's own values, so the series continue smoothly."""
    from ingest import synthetic

    specs = [
        synthetic.setup_spec(i)
        for i in range(synthetic.SETUPS_PER_UNIT)
        if synthetic.setup_spec(i).workload.name.removeprefix(synthetic.PREFIX) in WORKLOADS
    ]
    lines = ["format = 1"]
    declared = {}
    for spec in specs:
        for m in spec.workload.metrics:
            declared[m.name] = m
    for m in declared.values():
        lines += [f"[metric.{m.name}]", f'unit = "{m.unit}"', f'better = "{m.better}"']
    for n, spec in enumerate(specs):
        last = list(synthetic.runs_of_setup(spec, seed=1))[-1]  # 2.6.2 stock
        for step, kernel in enumerate(synthetic.BENCH_KERNELS):
            worse = 0.85 if n % 2 == 0 and step >= 5 else 1.0
            metrics = {}
            for m in spec.workload.metrics:
                values = [v for name, _, _, v in last.results if name == m.name]
                factor = worse if m.better == "higher" else 1 / worse if m.better == "lower" else 1
                metrics[m.name] = [round(v * factor * (1 + 0.002 * step), 6) for v in values]
            params = ", ".join(f"{k} = {_toml_value(v)}" for k, v in spec.params)
            values_toml = ", ".join(f"{k} = {v}" for k, v in metrics.items())
            lines += [
                "[[run]]",
                f'workload = "{spec.workload.name}"',
                f'workload_version = "{spec.workload.version}"',
                f'kernel = "{kernel}"',
                f'hardware = "{spec.hardware.name}"',
                f'mode = "{spec.mode}"',
                f'label = "{nonce}-{n}-{step}"',
                f"params = {{ {params} }}",
                f"metrics = {{ {values_toml} }}",
            ]
    return "\n".join(lines) + "\n"


def long_manifest(kernels: list[str], nonce: str) -> str:
    """Runs of the long-series setup: 60 metrics (half higher-is-better), one value each,
    1 % noise around a level that differs per metric; no steps."""
    import random

    rng = random.Random(f"{nonce}-{kernels[0]}")
    lines = ["format = 1", "[hardware.synthetic-long-hw]", "cpus = 4"]
    for m in range(LONG_METRICS):
        better = "higher" if m % 2 == 0 else "lower"
        lines += [f"[metric.long_m{m:02d}]", 'unit = "ops/s"', f'better = "{better}"']
    for kernel in kernels:
        values = ", ".join(
            f"long_m{m:02d} = [{(100 + m) * rng.gauss(1, 0.01):.6f}]" for m in range(LONG_METRICS)
        )
        lines += [
            "[[run]]",
            f'workload = "{LONG_WORKLOAD}"',
            f'kernel = "{kernel}"',
            'hardware = "synthetic-long-hw"',
            'mode = "SMP"',
            f'label = "{nonce}-{kernel}"',
            f"metrics = {{ {values} }}",
        ]
    return "\n".join(lines) + "\n"


def ingest_manifest(text: str, name: str) -> tuple[Upload, float, list[int]]:
    """Store a one-file bundle as an Upload and ingest it; the upload, seconds, run ids."""
    from ingest import services
    from perfdb.models import Run

    upload = stored_upload(text, f"{name}.tar.gz")
    seconds, run_ids = timed(services.upload_ingest, upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == "done", upload.error
    Run.objects.filter(pk__in=run_ids).update(synthetic=True)
    return upload, seconds, run_ids


def touched_series(run_ids: list[int]) -> list[tuple[int, int]]:
    from perfdb.models import Result

    rows = Result.objects.filter(run_id__in=run_ids).values_list("setup_id", "metric_id")
    return sorted(set(rows))


def long_series() -> None:
    """One run onto 60 series of 1,000 kernels: the check of its upload (goal <= 100 ms)."""
    from django.db import transaction

    from perfdb.alerting import check_data, regressions
    from perfdb.models import Metric, Run
    from perfdb.operations.gc_pause import collector_paused

    nonce = uuid.uuid4().hex[:8]
    stored = Run.objects.filter(setup__workload__name=LONG_WORKLOAD)
    if stored.count() < len(LONG_KERNELS):
        _, seconds, _ = ingest_manifest(long_manifest(LONG_KERNELS, nonce), f"long-{nonce}")
        print(f"long series: 1,000 runs x {LONG_METRICS} metrics ingested in {seconds:.1f} s")
    kernel = f"5.0.{stored.count() - len(LONG_KERNELS)}"
    upload, seconds, run_ids = ingest_manifest(long_manifest([kernel], nonce), f"one-{nonce}")
    series = touched_series(run_ids)
    points = len(check_data.load_points(series[:1])[0][series[0]])
    cpu = time.process_time()
    first, created = timed(regressions.regressions_check_upload, upload_id=upload.pk, series=series)
    first_cpu = time.process_time() - cpu
    again, again_cpu = [], []
    for _ in range(5):
        cpu = time.process_time()
        again.append(
            timed(regressions.regressions_check_upload, upload_id=upload.pk, series=series)[0]
        )
        again_cpu.append(time.process_time() - cpu)
    task, task_cpu = _task_check(upload.pk, series)
    metrics = Metric.objects.in_bulk({m for _, m in series})
    loads, load_cpu = [], []
    # as the check reads: in a transaction (it locks the series' alerts), collector paused
    with transaction.atomic(), collector_paused():
        for _ in range(5):
            cpu = time.process_time()
            loads.append(timed(check_data.load, series, metrics, set(run_ids))[0])
            load_cpu.append(time.process_time() - cpu)
    print(
        f"\none run (kernel {kernel}) onto {len(series)} series of {points} points; "
        f"ingest {seconds:.2f} s; {created} alerts\n"
    )
    rows = [
        ("check, first (goal <= 100 ms)", ms(first), "-", ms(first_cpu)),
        ("check, again (5 times)", ms(p50(again)), ms(max(again)), ms(p50(again_cpu))),
        ("the task's check, again (detection_run)", ms(task), "-", ms(task_cpu)),
        (
            "what the check reads (check_data.load)",
            ms(p50(loads)),
            ms(max(loads)),
            ms(p50(load_cpu)),
        ),
    ]
    print(table(["what", "ms (p50)", "max ms", "this process's CPU ms (p50)"], rows))
    print(f"load average: {Path('/proc/loadavg').read_text().split()[0]}")


def _task_check(upload_id: int, series: list[tuple[int, int]]) -> tuple[float, float]:
    """Wall and CPU seconds of the check as the detection worker runs it: through
    ``regressions.detection_run``, a transaction per DETECTION_SERIES_PER_TRANSACTION series
    (the rows above check every series in one call)."""
    from perfdb.alerting.regressions import detection_run

    cpu = time.process_time()
    wall = timed(detection_run, upload_id=upload_id, series=series)[0]
    return wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["upload", "long"], help="one of the two cases")
    args = parser.parse_args()
    # As the detection worker runs (docker-compose: DEBUG 0): with DEBUG on, Django wraps
    # every cursor to record each query's SQL and time, which the worker never pays.
    os.environ.setdefault("DEBUG", "0")
    os.environ.setdefault("SECRET_KEY", "bench-regression-speed-only")
    django_setup()
    from perfdb.alerting import queue as alerting_queue

    mock.patch.object(alerting_queue, "regressions_check").start()  # timed here instead
    mock.patch.object(alerting_queue, "notify_upload").start()  # no email worker here
    if args.only != "long":
        hundred_runs()
    if args.only != "upload":
        long_series()


def hundred_runs() -> None:
    """The 100-run upload onto 64-build series (goal <= 1 s for its check)."""
    from perfdb.alerting import regressions
    from perfdb.models import Alert

    nonce = uuid.uuid4().hex[:8]
    upload, ingest_seconds, run_ids = ingest_manifest(manifest(nonce), f"regressions-{nonce}")
    series = touched_series(run_ids)
    cpu = time.process_time()
    first, created = timed(regressions.regressions_check_upload, upload_id=upload.pk, series=series)
    cpu_first, cpu = time.process_time() - cpu, time.process_time()
    again, created_again = timed(
        regressions.regressions_check_upload, upload_id=upload.pk, series=series
    )
    cpu_again = time.process_time() - cpu
    task, task_cpu = _task_check(upload.pk, series)
    per_series = [
        timed(regressions.regressions_check_upload, upload_id=upload.pk, series=[s])[0]
        for s in series
    ]
    alerts = Alert.objects.filter(upload=upload).count()
    print(
        f"upload of {len(run_ids)} runs, {len(series)} series; ingest {ingest_seconds:.2f} s; "
        f"{created} alerts created ({alerts} stored), {created_again} on the second check; "
        f"this process's CPU: first check {ms(cpu_first)} ms, second {ms(cpu_again)} ms\n"
    )
    rows = [
        ("whole upload, first check (alerts written)", ms(first), "-", "-"),
        ("whole upload, second check (nothing new)", ms(again), "-", "-"),
        (f"the task's check again (detection_run), CPU {ms(task_cpu)} ms", ms(task), "-", "-"),
        ("per series (first check / series)", ms(first / len(series)), "-", "-"),
        ("per series, checked alone", "-", ms(p50(per_series)), ms(p95(per_series))),
    ]
    print(table(["what", "total ms", "p50 ms", "p95 ms"], rows))


if __name__ == "__main__":
    main()

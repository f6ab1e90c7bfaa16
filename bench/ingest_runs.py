"""Ingest of a many-run bundle (a lab's backfill, or a nightly of many machines), against a
raw COPY of the same result rows.

Re-run:

    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data
    python bench/ingest_runs.py --runs 1000

One bundle of ``--runs`` runs on one new kernel each, ``--metrics`` metrics with one value
each in the manifest (no files), is stored as an Upload and ingested by
``ingest.services.upload_ingest`` after one small warm-up ingest (a worker has taken uploads
before). CPU is this process's plus its PostgreSQL backend's (from /proc), the figure a
loaded machine does not inflate. The same result rows are then COPYed raw into perfdb_result
for the ratio. The regression check queued after commit is left out (bench/regression_speed.py
times it). Runs are marked synthetic, so ``synth_history --remove`` clears them.
"""

from __future__ import annotations

import argparse
import io
import random
import tarfile
import tempfile
import time
import uuid
from pathlib import Path
from unittest import mock

from _common import django_setup, table
from ingest_speed import broker_warm, cpu_seconds, stored_upload, worker_warm


def manifest(runs: int, metrics: int, nonce: str) -> str:
    """``runs`` runs of one setup, a new kernel each, one value per metric (1 % noise)."""
    rng = random.Random(nonce)
    lines = ["format = 1", "[hardware.synthetic-runs-hw]", "cpus = 4"]
    for m in range(metrics):
        better = "higher" if m % 2 == 0 else "lower"
        lines += [f"[metric.runs_m{m:02d}]", 'unit = "ops/s"', f'better = "{better}"']
    for i in range(runs):
        values = ", ".join(
            f"runs_m{m:02d} = [{(100 + m) * rng.gauss(1, 0.01):.6f}]" for m in range(metrics)
        )
        lines += [
            "[[run]]",
            'workload = "synthetic-runs-bench"',
            f'kernel = "9.{i // 100}.{i % 100}-{nonce}"',
            'hardware = "synthetic-runs-hw"',
            'mode = "SMP"',
            f"metrics = {{ {values} }}",
        ]
    return "\n".join(lines) + "\n"


def bundle(path: Path, text: str) -> Path:
    body = text.encode()
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("manifest.toml")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    return path


def raw_copy(run_ids: list[int]) -> float:
    """CPU seconds to COPY the runs' result rows into perfdb_result again (as trial 99) and
    commit."""
    from django.db import connection, transaction

    from perfdb.models import Result

    rows = list(
        Result.objects.filter(run_id__in=run_ids).values_list(
            "run_id", "setup_id", "metric_id", "discarded", "value"
        )
    )
    started = cpu_seconds()
    with transaction.atomic(), connection.cursor() as cursor:
        columns = '"run_id", "setup_id", "metric_id", "trial", "discarded", "value"'
        with cursor.cursor.copy(f"COPY perfdb_result ({columns}) FROM STDIN") as copy:
            for run, setup, metric, discarded, value in rows:
                copy.write_row((run, setup, metric, 99, discarded, value))
    return cpu_seconds() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--metrics", type=int, default=60)
    args = parser.parse_args()
    django_setup()
    from ingest import services
    from perfdb.alerting import queue as alerting_queue
    from perfdb.models import Result, Run

    mock.patch.object(alerting_queue, "regressions_check").start()  # timed separately
    broker_warm()
    nonce = uuid.uuid4().hex[:8]
    with tempfile.TemporaryDirectory() as tmp:
        worker_warm(Path(tmp) / "warm.tar.gz")
        path = bundle(Path(tmp) / f"runs-{nonce}.tar.gz", manifest(args.runs, args.metrics, nonce))
        upload = stored_upload(path)
        cpu, wall = cpu_seconds(), time.perf_counter()
        run_ids = services.upload_ingest(upload_id=upload.pk)
        wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    results = Result.objects.filter(run_id__in=run_ids).count()
    copy_cpu = raw_copy(run_ids)
    Run.objects.filter(pk__in=run_ids).update(synthetic=True)
    with open("/proc/loadavg") as load:
        print(f"{len(run_ids)} runs, {results:,} results; load average {load.read().split()[0]}\n")
    headers = ["ingest s", "results/s", "CPU s ingest / COPY", "CPU ratio"]
    row = (
        f"{wall:.2f}",
        f"{results / wall:,.0f}",
        f"{cpu:.2f} / {copy_cpu:.2f}",
        f"{cpu / copy_cpu:.1f}x",
    )
    print(table(headers, [row]))


if __name__ == "__main__":
    main()

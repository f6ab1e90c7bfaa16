"""Ingest speed through the real pipeline, against a raw COPY of the same rows.

Re-run:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data python bench/ingest_speed.py
    ... --phases   # also the CPU of each phase: bundle read, parse, write (COPY, raw files)

For 10k, 100k and 1M samples: a bundle with one run and one vmstat file (16 columns) is built,
stored as an Upload, and ingested by ``ingest.services.upload_ingest`` (claim, bundle read,
parse, one-transaction write, commit) in a fresh subprocess, which then reports its peak
resident memory (ru_maxrss). The subprocess first ingests a 1,000-sample bundle, untimed: a
worker has taken uploads before, so its first query's connection, the ORM's compiled
statements and the parsers' imports are not part of an upload's cost (``--cold`` keeps them).
The same sample rows are then COPYed straight into perfdb_sample
and committed, on the same machine, for the ratio (float arrays sent as array text, as the
writer sends them, formatted inside the timing). Wall time and CPU time (this process and its
PostgreSQL backend, read from /proc) are both reported: on a loaded machine the CPU ratio is
the figure to trust. The regression check the pipeline queues
after commit is left out (vmstat means have no direction; bench/regression_speed.py times it).
Runs made here are marked synthetic, so ``synth_history --remove`` clears them.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from unittest import mock

from _common import ROOT, django_setup, p50, table, timed

COLUMNS = ["r", "b", "swpd", "free", "buff", "cache", "si", "so", "bi", "bo", "in", "cs"]
COLUMNS += ["us", "sy", "id", "wa"]
SIZES = (10_000, 100_000, 1_000_000)


def vmstat_text(samples: int) -> str:
    """vmstat output with ``samples`` cells (rounded up to whole rows)."""
    rows = -(-samples // len(COLUMNS))
    lines = [
        "procs -----------memory---------- ---swap-- -----io---- --system-- ----cpu----",
        " ".join(COLUMNS),
    ]
    for i in range(rows):
        values: tuple[int, ...] = (2, 0, 0, 250000 - i % 997, 40000, 300000 + i % 89, 0, 0, 20)
        values += (80 + i % 7, 1200 + i % 13, 45000 + i % 101, 40, 45, 15, 0)
        lines.append(" ".join(str(v) for v in values))
    return "\n".join(lines) + "\n"


def bundle_bytes(samples: int, label: str) -> bytes:
    manifest = f"""format = 1
[hardware.synthetic-ingest-hw]
cpus = 2

[[run]]
workload = "synthetic-ingest-bench"
kernel = "2.6.0"
hardware = "synthetic-ingest-hw"
mode = "SMP"
label = "{label}"
files = [{{ path = "vmstat.txt", parser = "vmstat" }}]
"""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, text in (("manifest.toml", manifest), ("vmstat.txt", vmstat_text(samples))):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


# --- the child: one ingest, then the raw COPY ---------------------------------------------


def stored_upload(path: Path) -> Any:
    """The bundle at ``path`` stored as an Upload, as the API stores it."""
    import hashlib

    from django.core.files import File

    from perfdb.models import Upload

    data = path.read_bytes()
    upload = Upload(
        filename=path.name, sha256=hashlib.sha256(data).hexdigest(), size=len(data), source="cli"
    )
    with open(path, "rb") as stream:
        upload.file.save(path.name, File(stream), save=False)
    upload.save()
    return upload


def worker_warm(path: Path) -> None:
    """One small untimed ingest, as a worker has done before the upload being measured."""
    from ingest import services
    from perfdb.models import Run

    warm = path.with_name(f"warm-{path.name}")
    warm.write_bytes(bundle_bytes(1000, label=warm.stem))
    run_ids = services.upload_ingest(upload_id=stored_upload(warm).pk)
    Run.objects.filter(pk__in=run_ids).update(synthetic=True)


def phases_timed() -> dict[str, float]:
    """CPU seconds (this process and its backend) each phase of the ingest takes, summed over
    its calls, by wrapping what the pipeline calls (``--phases``); "COPY" and "raw files" are
    parts of "write"."""
    from ingest import services, writer

    phases = {
        "read": (services, "read_stored_bundle"),
        "parse": (services, "bundle_parse"),
        "write": (services, "bundle_write"),
        "COPY": (writer, "copy_rows"),
        "raw files": (writer, "attached_write"),
    }
    spent = dict.fromkeys(phases, 0.0)
    pid = backend_pid()
    for name, (module, attr) in phases.items():
        mock.patch.object(module, attr, _charged(getattr(module, attr), name, spent, pid)).start()
    return spent


def _charged(real: Any, name: str, spent: dict[str, float], pid: int) -> Any:
    """``real``, adding the CPU each call takes to ``spent[name]``."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        start = cpu_now(pid)
        try:
            return real(*args, **kwargs)
        finally:
            spent[name] += cpu_now(pid) - start

    return wrapped


def child(path: Path, cold: bool, phases: bool) -> None:
    import resource

    django_setup()
    from ingest import services
    from perfdb.alerting import queue as alerting_queue
    from perfdb.models import Run

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mock.patch.object(alerting_queue, "regressions_check").start()  # timed separately
    broker_warm()
    if not cold:
        worker_warm(path)
    upload = stored_upload(path)
    spent = phases_timed() if phases else {}
    cpu = cpu_seconds()
    seconds, run_ids = timed(services.upload_ingest, upload_id=upload.pk)
    cpu = cpu_seconds() - cpu
    upload.refresh_from_db()
    assert upload.status == "done", upload.error
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    Run.objects.filter(pk__in=run_ids).update(synthetic=True)
    rows = stored_rows(run_ids[0])
    samples = sum(len(row[4]) for row in rows)

    copy_cpu = cpu_seconds()
    copy_seconds, _ = timed(raw_copy, rows)
    copy_cpu = cpu_seconds() - copy_cpu
    print(
        json.dumps(
            {
                "samples": samples,
                "seconds": seconds,
                "copy_seconds": copy_seconds,
                "cpu": cpu,
                "copy_cpu": copy_cpu,
                "rss_mb": rss_peak / 1024,
                "rss_start_mb": rss_before / 1024,
                "phases": spent,
            }
        )
    )


def stored_rows(run_id: int) -> list[tuple]:
    """The run's stored rows (one per vmstat column, values as arrays), to COPY again as
    trial 1."""
    from perfdb.models import Sample

    return [
        (
            run_id,
            1,
            s.source,
            s.column,
            s.values,
            s.first_is_since_boot,
            s.timestamps,
            s.preview,
            s.preview_timestamps,
            s.preview_stride,
        )
        for s in Sample.objects.filter(run_id=run_id)
    ]


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and by its PostgreSQL backend (same machine:
    /proc), the cost of the work whatever else the machine runs at the same time."""
    return cpu_now(backend_pid())


def backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def cpu_now(pid: int) -> float:
    """This process's CPU seconds and those of the backend ``pid``: from its schedstat (ns;
    the clock ticks of /proc/<pid>/stat are 10 ms, a third of a 100k-sample COPY), else its
    stat."""
    import os

    try:
        with open(f"/proc/{pid}/schedstat") as schedstat:
            backend = int(schedstat.read().split()[0]) / 1e9
    except (FileNotFoundError, ValueError, IndexError):
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        backend = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return time.process_time() + backend


def broker_warm() -> None:
    """A worker has its broker connection up before it takes an upload: the commit's
    send_task (the page-cache warm-up, perfdb/cache/) must not pay kombu's first import."""
    import redis
    from django.conf import settings

    from config.celery import app

    app.send_task("bench.ingest_speed.warm", queue="bench-warm")  # nobody takes it
    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete("bench-warm")


def raw_copy(rows: list[tuple]) -> None:
    """COPY the rows into perfdb_sample and commit: float arrays as array text, formatted
    here, as the writer sends them (ingest.copy_rows.float_array)."""
    from django.db import connection, transaction

    from ingest.copy_rows import float_array

    with transaction.atomic(), connection.cursor() as cursor:
        columns = (
            '"run_id", "trial", "source", "column", "values", "first_is_since_boot", '
            '"timestamps", "preview", "preview_timestamps", "preview_stride"'
        )
        with cursor.cursor.copy(f"COPY perfdb_sample ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(
                    (*row[:4], float_array(row[4]), *row[5:7], float_array(row[7]), *row[8:])
                )


# --- the parent: bundles, subprocesses, table ---------------------------------------------


def measure(samples: int, workdir: Path, cold: bool, phases: bool) -> dict:
    path = workdir / f"ingest-{samples}-{uuid.uuid4().hex[:8]}.tar.gz"
    path.write_bytes(bundle_bytes(samples, label=path.stem))
    flags = [*(["--cold"] if cold else []), *(["--phases"] if phases else [])]
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path), *flags],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--cold", action="store_true", help="no warm-up ingest: a fresh worker's first upload"
    )
    parser.add_argument(
        "--phases", action="store_true", help="also CPU per phase (read, parse, write, ...)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args()
    if args.child:
        child(args.child, args.cold, args.phases)
        return
    rows, phase_rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            runs = [measure(size, Path(tmp), args.cold, args.phases) for _ in range(args.repeat)]
            if args.phases:
                phase_rows.append(phase_row(runs))
            seconds = p50([r["seconds"] for r in runs])
            copy = p50([r["copy_seconds"] for r in runs])
            cpu, copy_cpu = p50([r["cpu"] for r in runs]), p50([r["copy_cpu"] for r in runs])
            rows.append(
                (
                    f"{runs[0]['samples']:,}",
                    f"{seconds:.2f}",
                    f"{runs[0]['samples'] / seconds:,.0f}",
                    f"{copy:.2f}",
                    f"{seconds / copy:.1f}x",
                    f"{cpu:.3f} / {copy_cpu:.3f}",
                    f"{cpu / copy_cpu:.2f}x",
                    f"{max(r['rss_mb'] for r in runs):.0f}",
                    f"{runs[0]['rss_start_mb']:.0f}",
                )
            )
    where = "a fresh process" if args.cold else "a process after one warm-up ingest"
    print(f"median of {args.repeat} ingests per size, each in {where}\n")
    headers = [
        "samples",
        "ingest s",
        "samples/s",
        "raw COPY s",
        "ingest / COPY",
        "CPU s ingest / COPY",
        "CPU ratio",
        "peak RSS MB",
        "RSS before MB",
    ]
    print(table(headers, rows))
    if phase_rows:
        print("\nCPU s (process + backend) by phase, median; COPY and raw files are in write\n")
        names = ["read", "parse", "write", "COPY", "raw files"]
        print(table(["samples", "total", *names, "rest"], phase_rows))


def phase_row(runs: list[dict]) -> list[str]:
    """One size's CPU per phase (``--phases``): medians over the repeats."""
    names = ["read", "parse", "write", "COPY", "raw files"]
    rest = p50([r["cpu"] - sum(r["phases"][n] for n in names[:3]) for r in runs])
    cells = [p50([r["cpu"] for r in runs]), *(p50([r["phases"][n] for r in runs]) for n in names)]
    return [f"{runs[0]['samples']:,}", *(f"{c:.3f}" for c in [*cells, rest])]


if __name__ == "__main__":
    main()

"""Ingest speed through the real pipeline, against a raw COPY of the same rows.

Re-run:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data python bench/ingest_speed.py

For 10k, 100k and 1M samples: a bundle with one run and one vmstat file (16 columns) is built,
stored as an Upload, and ingested by ``ingest.services.upload_ingest`` (claim, bundle read,
parse, one-transaction write, commit) in a fresh subprocess, which then reports its peak
resident memory (ru_maxrss). The same sample rows are then COPYed straight into perfdb_sample
and committed, on the same machine, for the ratio. The regression check the pipeline queues
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
import uuid
from pathlib import Path
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


def child(path: Path) -> None:
    import hashlib
    import resource

    django_setup()
    from django.core.files import File
    from django.db import connection, transaction

    from ingest import services
    from perfdb.alerting import queue as alerting_queue
    from perfdb.models import Run, Sample, Upload

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mock.patch.object(alerting_queue, "regressions_check").start()  # timed separately
    data = path.read_bytes()
    upload = Upload(
        filename=path.name, sha256=hashlib.sha256(data).hexdigest(), size=len(data), source="cli"
    )
    with open(path, "rb") as stream:
        upload.file.save(path.name, File(stream), save=False)
    upload.save()
    seconds, run_ids = timed(services.upload_ingest, upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == "done", upload.error
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    Run.objects.filter(pk__in=run_ids).update(synthetic=True)
    run_id = run_ids[0]
    # The stored rows (one per vmstat column, values as arrays), copied again as trial 1.
    rows = [
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
    samples = sum(len(row[4]) for row in rows)

    def raw_copy() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            columns = (
                '"run_id", "trial", "source", "column", "values", "first_is_since_boot", '
                '"timestamps", "preview", "preview_timestamps", "preview_stride"'
            )
            with cursor.cursor.copy(f"COPY perfdb_sample ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)

    copy_seconds, _ = timed(raw_copy)
    print(
        json.dumps(
            {
                "samples": samples,
                "seconds": seconds,
                "copy_seconds": copy_seconds,
                "rss_mb": rss_peak / 1024,
                "rss_start_mb": rss_before / 1024,
            }
        )
    )


# --- the parent: bundles, subprocesses, table ---------------------------------------------


def measure(samples: int, workdir: Path) -> dict:
    path = workdir / f"ingest-{samples}-{uuid.uuid4().hex[:8]}.tar.gz"
    path.write_bytes(bundle_bytes(samples, label=path.stem))
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            runs = [measure(size, Path(tmp)) for _ in range(args.repeat)]
            seconds = p50([r["seconds"] for r in runs])
            copy = p50([r["copy_seconds"] for r in runs])
            rows.append(
                (
                    f"{runs[0]['samples']:,}",
                    f"{seconds:.2f}",
                    f"{runs[0]['samples'] / seconds:,.0f}",
                    f"{copy:.2f}",
                    f"{seconds / copy:.1f}x",
                    f"{max(r['rss_mb'] for r in runs):.0f}",
                    f"{runs[0]['rss_start_mb']:.0f}",
                )
            )
    print(f"median of {args.repeat} ingests per size, each in a fresh process\n")
    headers = [
        "samples",
        "ingest s",
        "samples/s",
        "raw COPY s",
        "ingest / COPY",
        "peak RSS MB",
        "RSS before MB",
    ]
    print(table(headers, rows))


if __name__ == "__main__":
    main()

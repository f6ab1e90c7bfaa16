"""Shared by the benchmarks: Django set-up against a benchmark database, timing, tables.

The benchmarks never touch the ``perfdb`` database: DATABASE_URL defaults to
``perfdb_bench_data`` and a URL naming ``perfdb`` itself is refused.
"""

from __future__ import annotations

import hashlib
import io
import os
import statistics
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfdb.models import Upload

ROOT = Path(__file__).resolve().parent.parent
BENCH_DB = "postgres://postgres@127.0.0.1:5432/perfdb_bench_data"


def django_setup() -> None:
    """Point Django at the benchmark database (never the real one) and start it."""
    os.environ.setdefault("DATABASE_URL", BENCH_DB)
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/14")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if os.environ["DATABASE_URL"].rstrip("/").endswith("/perfdb"):
        sys.exit("refusing to benchmark against the perfdb database; set DATABASE_URL")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def agreement_database(default_url: str, secret: str) -> None:
    """Set Django up on an empty, migrated database whose name says it is an agreement
    bench's (``DATABASE_URL``, else ``default_url``): created when missing, emptied first,
    and refused unless its name contains "agreement"."""
    import logging

    import psycopg

    url = os.environ.setdefault("DATABASE_URL", default_url)
    name = url.rstrip("/").rsplit("/", 1)[1]
    if "agreement" not in name:
        sys.exit(f"refusing to empty {name}: the database's name must contain 'agreement'")
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    os.environ.setdefault("DEBUG", "0")
    os.environ.setdefault("SECRET_KEY", secret)
    django_setup()
    from django.core.management import call_command

    logging.disable(logging.INFO)  # a line per upload and check otherwise
    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)


def as_a_gunicorn_worker() -> None:
    """Import every view and freeze what is imported out of the cycle collector's reach, as
    config/gunicorn.conf.py's ``pre_fork`` does before a worker forks. A bench serving pages
    in its own process without it paid a full collection over them in one request of ten or
    twenty (90-220 ms p95 tails on 5-50 ms pages) that gunicorn's workers do not pay."""
    import gc

    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 (imports the URL conf, hence every view)
    gc.freeze()


def stored_upload(manifest: str, name: str) -> Upload:
    """A bundle of this one manifest stored as an upload, as the upload API stores it, but
    not queued: the caller ingests it (``ingest.services.upload_ingest``) in its process."""
    from django.core.files.base import ContentFile

    from perfdb.models import Upload

    body = manifest.encode()
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        info = tarfile.TarInfo("manifest.toml")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    blob = data.getvalue()
    upload = Upload(filename=name, sha256=hashlib.sha256(blob).hexdigest(), size=len(blob))
    upload.file.save(name, ContentFile(blob), save=False)
    upload.save()
    return upload


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    """Seconds one call takes, and what it returned."""
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


def p50(values: Sequence[float]) -> float:
    return statistics.median(values)


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table, so the output pastes into docs/performance.md as is."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
        for row in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def result_count() -> int:
    """Rows in the result table (the planner's estimate: count(*) over 10M rows takes seconds)."""
    from django.db import connection

    with connection.cursor() as cursor:
        # a partitioned table's own row has no count: its partitions' add up to it
        cursor.execute(
            "SELECT coalesce((SELECT sum(greatest(reltuples, 0)) FROM pg_class WHERE oid IN "
            "(SELECT inhrelid FROM pg_inherits WHERE inhparent = 'perfdb_result'::regclass)), "
            "(SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = 'perfdb_result'::regclass)"
            ")::bigint"
        )
        return int(cursor.fetchone()[0])

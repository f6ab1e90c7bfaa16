"""An upload's fixed cost: what ``upload_ingest`` spends whatever the size of the data.

Re-run:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data \\
        python bench/ingest_fixed_cost.py [--uploads 60]

Uploads of one run and one 160-sample vmstat file (the bundles of bench/ingest_speed.py, so
small that parsing and COPY are a small part) are ingested one after another in this
process, after one untimed warm-up ingest; printed: the median CPU of one (this process and
its PostgreSQL backend, /proc), the SQL statements it sent (BEGIN and COMMIT included) and
its round trips to Redis (a pipeline is one), the page-cache versions and the warm-up task's
publish among them: at 100k samples it is a large part of what the ingest adds to a raw
COPY (docs/performance.md, Ingest). The regression check queued after commit is left out,
as in ingest_speed.py. Runs made here are marked synthetic.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

from _common import django_setup, p50
from ingest_speed import (
    broker_warm,
    bundle_bytes,
    cpu_seconds,
    stored_upload,
    worker_warm,
)


def redis_round_trips() -> list[int]:
    """A counter of the commands (or pipelines) this process sends to Redis."""
    import redis

    sent = [0]
    real = redis.connection.AbstractConnection.send_packed_command

    def counted(self: Any, command: Any, check_health: bool = True) -> None:
        sent[0] += 1
        real(self, command, check_health)

    mock.patch.object(redis.connection.AbstractConnection, "send_packed_command", counted).start()
    return sent


def ingest_one(workdir: Path, index: int, sent: list[int]) -> tuple[float, int, int]:
    """CPU seconds, SQL statements and Redis round trips of one small upload's ingest."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ingest import services
    from perfdb.models import Run

    path = workdir / f"fixed-{index}.tar.gz"
    path.write_bytes(bundle_bytes(160, label=f"{workdir.name}-{index}"))
    upload = stored_upload(path)
    before_redis, before_cpu = sent[0], cpu_seconds()
    with CaptureQueriesContext(connection) as queries:
        run_ids = services.upload_ingest(upload_id=upload.pk)
    cpu, redis_sent = cpu_seconds() - before_cpu, sent[0] - before_redis
    Run.objects.filter(pk__in=run_ids).update(synthetic=True)
    return cpu, len(queries.captured_queries), redis_sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--uploads", type=int, default=60)
    args = parser.parse_args()
    django_setup()
    import logging

    from perfdb.alerting import queue as alerting_queue

    logging.disable(logging.INFO)
    mock.patch.object(alerting_queue, "regressions_check").start()  # timed separately
    broker_warm()
    sent = redis_round_trips()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        worker_warm(workdir / "warm.tar.gz")
        done = [ingest_one(workdir, i, sent) for i in range(args.uploads)]
    cpu = p50([d[0] for d in done]) * 1e3
    print(
        f"{args.uploads} uploads of 160 samples: CPU per upload (process + backend) median "
        f"{cpu:.2f} ms; SQL statements {p50([d[1] for d in done]):.0f}; "
        f"Redis round trips {p50([d[2] for d in done]):.0f}"
    )


if __name__ == "__main__":
    main()

"""What the big tables' reads do, partitioned or not: the plans of the page queries, and the
in-place conversion's time (migration 0010).

    # the plans (run once before and once after migration 0010, on the same data):
    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_partitions
    python bench/partition_speed.py
    # time the conversion of a database at migration 0009 (the maintenance window), e.g.
    # after `python manage.py migrate perfdb 0009`:
    python bench/partition_speed.py --convert

For a few random synthetic setups and runs, the statements that read perfdb_result,
perfdb_sample or perfdb_profileentry are captured as the pages issue them (the series query,
the metric picker, the run detail page, the activity page's run picker) and explained with
``EXPLAIN (ANALYZE, BUFFERS)``: per statement the scans of those tables (index-only or not,
which index, heap fetches), how many partitions it executed, its buffers and time. Then the
tables' and indexes' sizes. Prints Markdown tables; the load average goes with each figure.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
from collections import Counter
from typing import Any

from _common import django_setup, table

BIG = re.compile(r"^perfdb_(result|sample|profileentry)(_p\d\d)?$")
MIGRATION = ("perfdb", "0010_partition_big_tables")  # 0011 makes samples, profiles plain again


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def parent_indexes() -> dict[str, str]:
    """A partition's index name -> the partitioned table's index it belongs to."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, p.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " JOIN pg_class p ON p.oid = i.inhparent WHERE c.relkind = 'i'"
        )
        return dict(cursor.fetchall())


def _walk(node: dict[str, Any], found: list[dict[str, Any]], parents: dict[str, str]) -> None:
    """Every plan node that scans one of the big tables (or one of their partitions); a
    bitmap heap scan is named after the index its bitmap index scan reads."""
    children = node.get("Plans", [])
    if BIG.match(node.get("Relation Name", "")):
        index = node.get("Index Name") or ", ".join(
            c.get("Index Name", "") for c in children if c["Node Type"] == "Bitmap Index Scan"
        )
        found.append({**node, "Index Name": parents.get(index, index)})
    for child in children:
        _walk(child, found, parents)


def explain(sql: str, parents: dict[str, str]) -> dict[str, Any]:
    """The plan of one statement, summed up: scan kinds, partitions read, buffers, ms."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}")
        raw = cursor.fetchone()[0]
    doc = (json.loads(raw) if isinstance(raw, str) else raw)[0]
    scans: list[dict[str, Any]] = []
    _walk(doc["Plan"], scans, parents)
    read = [s for s in scans if s.get("Actual Loops", 0)]
    kinds = Counter(f"{s['Node Type']} {s.get('Index Name', '')}".strip() for s in read)
    return {
        "kinds": ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in sorted(kinds.items())),
        "partitions": len({s["Relation Name"] for s in read}),
        "heap_fetches": sum(s.get("Heap Fetches", 0) for s in read),
        "buffers": sum(doc["Plan"].get(f"Shared {k} Blocks", 0) for k in ("Hit", "Read")),
        "ms": doc["Execution Time"],
    }


def captured(fn, *args: Any, **kwargs: Any) -> list[str]:
    """The statements ``fn`` issues that read the big tables."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        fn(*args, **kwargs)
    return [
        q["sql"]
        for q in queries.captured_queries
        if re.search(r'"perfdb_(result|sample|profileentry)"', q["sql"])
    ]


def page_reads(rng: random.Random, samples: int) -> dict[str, list[str]]:
    """The statements of each read, for ``samples`` random setups and runs."""
    from django.test import Client

    from dashboards import chart_queries as cq
    from ingest.synthetic import PREFIX
    from perfdb.models import Run, Setup

    setups = list(
        Setup.objects.filter(workload__name__startswith=PREFIX).values_list("id", flat=True)
    )
    profiled = Run.objects.filter(synthetic=True, profile__isnull=False)
    run_ids = list(profiled.values_list("id", flat=True)[:2000])
    client = Client()
    reads: dict[str, list[str]] = {}
    for _ in range(samples):
        setup_id = rng.choice(setups)
        reads.setdefault("metric picker (metric_choices)", []).extend(
            captured(cq.metric_choices, setup_ids=[setup_id])
        )
        metric = rng.choice(cq.metric_choices(setup_ids=[setup_id]))
        reads.setdefault("series query (series_points)", []).extend(
            captured(cq.series_points, setup_id=setup_id, metric=metric)
        )
        run_id = rng.choice(run_ids)
        reads.setdefault("run detail /runs/<id>/", []).extend(
            captured(client.get, f"/runs/{run_id}/")
        )
    reads["activity run picker (run_choices, vmstat)"] = captured(cq.run_choices, vmstat_only=True)
    return reads


def plans(samples: int, seed: int) -> None:
    """One row per read and plan shape: statements, tables read, heap fetches, buffers, ms."""
    from django.db import connection

    with connection.cursor() as cursor:  # both layouts planned from fresh statistics
        cursor.execute("ANALYZE perfdb_result, perfdb_sample, perfdb_profileentry")
    reads = page_reads(random.Random(seed), samples)
    parents = parent_indexes()
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for name, statements in reads.items():
        for sql in dict.fromkeys(statements):  # explained once each, warm (just run)
            e = explain(sql, parents)
            groups.setdefault((name, e["kinds"], e["partitions"]), []).append(e)
    rows = [
        (
            name,
            kinds,
            len(found),
            parts,
            max(e["heap_fetches"] for e in found),
            max(e["buffers"] for e in found),
            f"{statistics.median(e['ms'] for e in found):.2f}",
            f"{max(e['ms'] for e in found):.2f}",
        )
        for (name, kinds, parts), found in groups.items()
    ]
    headers = ["read", "scans (executed)", "statements", "tables read", "max heap fetches"]
    print(f"load average {loadavg()}; {samples} random setups and runs, warm\n")
    print(table([*headers, "max buffers", "p50 ms", "max ms"], rows))


def sizes() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT t, (SELECT count(*) FROM pg_inherits WHERE inhparent = t::regclass),
                   pg_size_pretty(sum(pg_table_size(c.oid))),
                   pg_size_pretty(sum(pg_indexes_size(c.oid))),
                   sum(c.reltuples)::bigint
            FROM unnest(ARRAY['perfdb_result', 'perfdb_sample', 'perfdb_profileentry']) t
            JOIN pg_class c ON c.relkind = 'r' AND (c.oid = t::regclass OR c.oid IN (
                SELECT inhrelid FROM pg_inherits WHERE inhparent = t::regclass))
            GROUP BY t ORDER BY t
            """
        )
        rows = cursor.fetchall()
    print()
    print(table(["table", "partitions", "table size", "index size", "rows (estimate)"], rows))


def convert() -> None:
    """Migrate a database at 0009 to perfdb's latest (0010 and 0011 convert the tables) and
    time it: the maintenance window."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    if MIGRATION in executor.loader.applied_migrations:
        raise SystemExit("already partitioned: migrate perfdb 0009 first (or use a copy)")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM perfdb_result), (SELECT count(*) FROM perfdb_sample),"
            " (SELECT count(*) FROM perfdb_profileentry)"
        )
        results, samples, profile = cursor.fetchone()
    load_before = loadavg()
    start, cpu = time.perf_counter(), time.process_time()
    executor.migrate([n for n in executor.loader.graph.leaf_nodes() if n[0] == "perfdb"])
    seconds = time.perf_counter() - start
    rows = results + samples + profile
    print(
        f"converted {results:,} results, {samples:,} sample rows, {profile:,} profile entries "
        f"in {seconds:.1f} s ({seconds / max(rows, 1) * 1e6:.1f} s per million rows; "
        f"{time.process_time() - cpu:.1f} s CPU in this process); load average {load_before} "
        f"before, {loadavg()} after"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--convert", action="store_true", help="time migration 0010 here")
    args = parser.parse_args()
    django_setup()
    if args.convert:
        convert()
        return
    plans(args.samples, args.seed)
    sizes()


if __name__ == "__main__":
    main()

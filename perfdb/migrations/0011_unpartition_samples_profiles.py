"""Samples and profile entries back to plain tables; results stay hash-partitioned by setup
(docs/deploy.md, "Partitioning").

Measured after 0010: every read of these two tables names the run, but many are correlated
probes from a list of runs ("runs of this setup that have a profile", "newest runs with a
vmstat series"). PostgreSQL 15 prunes such a probe to one partition only at run time, and
plans it as if it read all 16, so the planner took a scan of every partition instead: the
profile-diff picker of the run page went from an index-only probe (0.3 ms) to 780 ms, the
activity page's run picker to 700 ms, at 5M results. Unpartitioned, each probe is one
look-up in profile_uniq / sample_column_uniq (both start with run). These tables stay
small next to results (at 100M results: 8.4M profile entries, 3.1M sample rows), so
partitioning them bought little. The conversion is 0010's, the other way.
"""

from __future__ import annotations

from importlib import import_module

from django.db import migrations

_0010 = import_module("perfdb.migrations.0010_partition_big_tables")
TABLES = {"perfdb_sample": "run_id", "perfdb_profileentry": "run_id"}


def unpartition(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for table, key in TABLES.items():
            _0010._convert(cursor, table, key, partitioned=False)


def partition(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for table, key in TABLES.items():
            _0010._convert(cursor, table, key, partitioned=True)


class Migration(migrations.Migration):
    dependencies = [
        ("perfdb", "0010_partition_big_tables"),
    ]

    operations = [migrations.RunPython(unpartition, partition)]

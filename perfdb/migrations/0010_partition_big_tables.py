"""Hash-partition the three big tables in place (docs/deploy.md, "Partitioning").

- ``perfdb_result`` by ``setup_id``: every series read names one setup
  (``result_series_idx (setup, metric)``), so it touches one partition.
- ``perfdb_sample`` and ``perfdb_profileentry`` by ``run_id``: every read of them names the
  run (the activity page, run detail, the kernel-time chart), and their unique keys already
  start with ``run_id``.

PostgreSQL requires every unique constraint of a partitioned table, the primary key included,
to contain the partition key: the primary keys become ``(id, <key>)`` and ``result_uniq``
becomes ``(run, metric, trial, setup)`` (a run has one setup, so it constrains the same
rows). Django keeps ``id`` as the model's primary key: ids still come from one sequence per
table, and nothing has a foreign key to these tables (a foreign key to a composite key is
what Django 5.2 cannot do, and what would have ruled this out).

The conversion runs in one transaction and holds an exclusive lock on each table while its
rows are copied, so it needs a maintenance window on a large database (docs/deploy.md gives
the time per million rows). Each table: rename it away, create the partitioned table with
the same columns and CHECKs, copy the rows, drop the old table, then build the same indexes
and constraints (read from the catalogue before the rename, so indexes added by earlier
migrations come along) with the partition key added to the unique ones, and a sequence that
continues where the identity left off. The reverse does the same into a plain table.
"""

from __future__ import annotations

import re

import django.db.models.deletion
from django.db import migrations, models

PARTITIONS = 16
# table: partition key
TABLES = {
    "perfdb_result": "setup_id",
    "perfdb_sample": "run_id",
    "perfdb_profileentry": "run_id",
}
# Single-column foreign-key indexes not rebuilt: each repeats the first column of a unique
# key or of result_series_idx, and every index is written for every row (the models say
# db_index=False); the reverse builds them again.
REDUNDANT = {
    "perfdb_result": ("run_id", "setup_id"),
    "perfdb_sample": ("run_id",),
    "perfdb_profileentry": ("run_id",),
}
_UNIQUE = re.compile(r"^(PRIMARY KEY|UNIQUE) \(([^)]*)\)(.*)$")


def _catalogue(cursor, table: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The table's plain indexes (CREATE statements) and its primary key, unique and
    foreign-key constraints (name, definition); CHECKs come along with ``LIKE``."""
    cursor.execute(
        """
        SELECT pg_get_indexdef(x.indexrelid) FROM pg_index x
        WHERE x.indrelid = %s::regclass AND NOT EXISTS (
            SELECT 1 FROM pg_constraint c
            WHERE c.conrelid = x.indrelid AND c.conindid = x.indexrelid)
        ORDER BY x.indexrelid
        """,
        [table],
    )
    indexes = [row[0] for row in cursor.fetchall()]
    cursor.execute(
        """
        SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
        WHERE conrelid = %s::regclass AND contype IN ('p', 'u', 'f')
        ORDER BY contype DESC, conname
        """,
        [table],
    )
    return indexes, list(cursor.fetchall())


def _with_key(definition: str, key: str, partitioned: bool) -> str:
    """A PRIMARY KEY / UNIQUE definition with the partition key appended (partitioned) or
    a trailing partition key removed (back to a plain table); others unchanged."""
    match = _UNIQUE.match(definition)
    if not match:
        return definition
    kind, columns, rest = match.groups()
    names = [c.strip() for c in columns.split(",")]
    if partitioned and key not in names:
        names.append(key)
    elif not partitioned and len(names) > 1 and names[-1] == key:
        names.pop()
    return f"{kind} ({', '.join(names)}){rest}"


def _sequence_sql(cursor, table: str, old: str) -> list[str]:
    """A sequence owned by the new table's ``id`` that continues the old table's."""
    cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [old])
    (old_seq,) = cursor.fetchone()
    cursor.execute(f"SELECT last_value, is_called FROM {old_seq}")
    last_value, is_called = cursor.fetchone()
    seq = f"{table}_id_seq_new"
    return [
        f"CREATE SEQUENCE {seq} AS bigint OWNED BY {table}.id",
        f"SELECT setval('{seq}', {int(last_value)}, {bool(is_called)})",
        f"ALTER TABLE {table} ALTER COLUMN id SET DEFAULT nextval('{seq}')",
    ]


def _convert(cursor, table: str, key: str, partitioned: bool) -> None:
    """Rebuild ``table`` partitioned by hash of ``key`` (or plain), rows and all."""
    indexes, constraints = _catalogue(cursor, table)
    # The index builds after the copy sort every row: at 100M rows the default 64 MB spills.
    cursor.execute("SET LOCAL maintenance_work_mem = '512MB'")
    old = f"{table}_old"
    cursor.execute(f"ALTER TABLE {table} RENAME TO {old}")
    layout = f" PARTITION BY HASH ({key})" if partitioned else ""
    cursor.execute(
        f"CREATE TABLE {table} (LIKE {old} INCLUDING DEFAULTS INCLUDING CONSTRAINTS "
        f"INCLUDING STORAGE INCLUDING COMPRESSION){layout}"
    )
    for n in range(PARTITIONS if partitioned else 0):
        cursor.execute(
            f"CREATE TABLE {table}_p{n:02d} PARTITION OF {table} "
            f"FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {n})"
        )
    if partitioned:
        statements = _sequence_sql(cursor, table, old)
    else:  # back to an identity column, as Django's BigAutoField makes it
        cursor.execute(f"SELECT COALESCE(max(id), 0) + 1 FROM {old}")
        (start,) = cursor.fetchone()
        statements = [
            f"ALTER TABLE {table} ALTER COLUMN id DROP DEFAULT",
            f"ALTER TABLE {table} ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY "
            f"(START WITH {int(start)})",
        ]
    for sql in statements:
        cursor.execute(sql)
    cursor.execute(f"INSERT INTO {table} SELECT * FROM {old}")
    cursor.execute(f"DROP TABLE {old}")  # and its sequence: the name is free again
    cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
    cursor.execute(f"ALTER SEQUENCE {cursor.fetchone()[0]} RENAME TO {table}_id_seq")
    for name, definition in constraints:
        keyed = _with_key(definition, key, partitioned)
        cursor.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {keyed}')
    redundant = tuple(f"USING btree ({column})" for column in REDUNDANT[table])
    for create in indexes:
        if partitioned and create.endswith(redundant):
            continue
        if partitioned and create.startswith("CREATE UNIQUE") and key not in create:
            raise RuntimeError(f"unique index without the partition key {key}: {create}")
        cursor.execute(create)
    cursor.execute(f"ANALYZE {table}")


def partition(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for table, key in TABLES.items():
            _convert(cursor, table, key, partitioned=True)


def unpartition(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for table, key in TABLES.items():
            _convert(cursor, table, key, partitioned=False)
            for column in REDUNDANT[table]:  # as Django names a foreign key's index
                name = schema_editor._create_index_name(table, [column], suffix="")
                cursor.execute(f'CREATE INDEX IF NOT EXISTS "{name}" ON {table} ({column})')


class Migration(migrations.Migration):
    dependencies = [
        ("perfdb", "0009_reference_claims"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(partition, unpartition)],
            state_operations=[
                migrations.AlterField(
                    model_name="profileentry",
                    name="run",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="profile",
                        to="perfdb.run",
                    ),
                ),
                migrations.AlterField(
                    model_name="result",
                    name="run",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="results",
                        to="perfdb.run",
                    ),
                ),
                migrations.AlterField(
                    model_name="result",
                    name="setup",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="perfdb.setup",
                    ),
                ),
                migrations.AlterField(
                    model_name="sample",
                    name="run",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="samples",
                        to="perfdb.run",
                    ),
                ),
                migrations.RemoveConstraint(model_name="result", name="result_uniq"),
                migrations.AddConstraint(
                    model_name="result",
                    constraint=models.UniqueConstraint(
                        fields=("run", "metric", "trial", "setup"), name="result_uniq"
                    ),
                ),
            ],
        ),
    ]

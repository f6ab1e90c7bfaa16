"""The run tables' layout: perfdb_result is hash-partitioned by setup (migrations 0010, 0011),
samples and profiles are not: what each read touches, and the in-place conversion of an
existing database, forward and back, rows and ids kept."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from dashboards import chart_queries as cq
from ingest import synthetic
from perfdb.models import ProfileEntry, Result, Run, Sample
from tests.factories import ResultFactory


def _layout(table: str) -> tuple[str, str, int]:
    """(strategy, key column, number of partitions) of a partitioned table."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT p.partstrat, a.attname,
                   (SELECT count(*) FROM pg_inherits i WHERE i.inhparent = p.partrelid)
            FROM pg_partitioned_table p
            JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
            WHERE p.partrelid = %s::regclass
            """,
            [table],
        )
        row = cursor.fetchone()
    assert row is not None, f"{table} is not partitioned"
    return row


def _partitions_read(sql: str, params) -> set[str]:
    """The partitions of the big tables that the plan of ``sql`` reads."""
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    return set(re.findall(r"perfdb_(?:result|sample|profileentry)_p\d\d", plan))


def _partitioned() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT partrelid::regclass::text FROM pg_partitioned_table")
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.django_db
def test_results_are_hash_partitioned_by_setup_samples_and_profiles_are_not():
    assert _layout("perfdb_result") == ("h", "setup_id", 16)
    assert _partitioned() == {"perfdb_result"}


@pytest.mark.django_db
def test_a_series_reads_one_partition():
    synthetic.history_write(scale=1, seed=1)
    run = Run.objects.filter(profile__isnull=False).first()
    with_samples = Run.objects.filter(samples__isnull=False).first()
    assert run is not None and with_samples is not None
    metric = cq.metric_choices(setup_ids=[run.setup_id])[0]
    with CaptureQueriesContext(connection) as queries:
        series = cq.series_points(setup_id=run.setup_id, metric=metric)
    assert series.series.points
    reads = [q["sql"] for q in queries.captured_queries if "perfdb_result" in q["sql"]]
    assert reads, "the series query reads perfdb_result"
    for sql in reads:
        assert len(_partitions_read(sql, None)) == 1, sql
    # Samples and profile entries are plain tables again (migration 0011): a run's rows are
    # one look-up in the unique key that starts with run.
    for model, run_id in ((Sample, with_samples.pk), (ProfileEntry, run.pk)):
        sql, params = model.objects.filter(run_id=run_id).query.sql_with_params()
        assert _partitions_read(sql, params) == set()
        assert model.objects.filter(run_id=run_id).exists()


@pytest.mark.django_db(transaction=True)
def test_converting_back_and_forth_keeps_rows_ids_and_the_sequence():
    synthetic.history_write(scale=1, seed=1)
    before = {
        model: sorted(model.objects.values_list("id", flat=True))
        for model in (Result, Sample, ProfileEntry)
    }
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    try:
        executor.migrate([("perfdb", "0009_reference_claims")])
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_partitioned_table")
            assert cursor.fetchone()[0] == 0
        assert sorted(Result.objects.values_list("id", flat=True)) == before[Result]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(leaves)
    for model, ids in before.items():
        assert sorted(model.objects.values_list("id", flat=True)) == ids
    assert _partitioned() == {"perfdb_result"}
    run = Run.objects.first()
    assert run is not None
    extra = ResultFactory(run=run, metric=Result.objects.first().metric, trial=99, value=1.0)
    assert extra.pk > max(before[Result]), "new ids continue after the moved rows"

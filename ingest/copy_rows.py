"""Rows to PostgreSQL COPY: the one bulk path of the ingest writer (ingest/writer.py) and the
synthetic history (ingest/synthetic/store.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import connection

from perfdb.timeseries import PREVIEW_POINTS, Column


def copy_rows(table: str, columns: Iterable[str], rows: Iterable[tuple]) -> None:
    """Bulk-load rows with COPY inside the caller's transaction; no rows, no round trip."""
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        return
    with connection.cursor() as cursor:
        raw = cursor.cursor  # the psycopg 3 cursor under Django's wrapper
        cols = ", ".join(f'"{c}"' for c in columns)
        with raw.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
            copy.write_row(first)
            for row in rows:
                copy.write_row(row)


def copy_rows_binary(table: str, columns: Sequence[tuple[str, str]], rows: Iterable[tuple]) -> None:
    """copy_rows in COPY's binary format; ``columns`` are (name, PostgreSQL type) pairs.

    For big byte strings (a bundle's raw files): as text, bytea goes as hex, twice its size,
    formatted by psycopg and decoded again by the server; binary sends the bytes as they are.
    """
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        return
    with connection.cursor() as cursor:
        raw = cursor.cursor
        cols = ", ".join(f'"{name}"' for name, _ in columns)
        with raw.copy(f"COPY {table} ({cols}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types([kind for _, kind in columns])
            copy.write_row(first)
            for row in rows:
                copy.write_row(row)


SAMPLE_COLUMNS = (
    "run_id",
    "trial",
    "source",
    "column",
    "values",
    "indexes",
    "first_is_since_boot",
    "timestamps",
    "preview",
    "preview_timestamps",
    "preview_stride",
)


def float_array(values: Sequence[float]) -> str:
    """A float8[] as PostgreSQL's array text, for COPY.

    psycopg's list dumper runs a quoting regex over every element's text (0.6 s of CPU per
    million samples, more than the COPY itself); a float's repr is the shortest text that
    reads back as the same double, and needs no quoting (``nan`` and ``inf`` included).
    """
    return "{" + ",".join(map(float.__repr__, map(float, values))) + "}"


def sample_row(run_id: int, c: Column) -> tuple:
    """One perfdb_sample row for COPY, in SAMPLE_COLUMNS order, with its chart preview."""
    preview, preview_stamps, k = c.preview(PREVIEW_POINTS)
    return (
        run_id,
        c.trial,
        c.source,
        c.column,
        float_array(c.values),
        c.indexes,
        c.first_is_since_boot,
        c.timestamps,
        float_array(preview),
        preview_stamps,
        k,
    )

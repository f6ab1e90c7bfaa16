"""ingest/parsers/vmstat_rows.py: vmstat's rows and plain blocks made into series columns."""

import numpy as np

from ingest.parsers.base import Sample, SeriesColumn
from ingest.parsers.vmstat_rows import PlainBlock, row_count, series_columns

COLUMNS = ("r", "cs")


def block(line: int, columns: tuple[str, ...], values: list[list[int]]) -> PlainBlock:
    return PlainBlock(line, columns, np.array(values, dtype=np.int64))


def test_rows_under_one_header_are_a_column_each():
    rows = [(2, COLUMNS, (1.0, 20.0), None), (3, COLUMNS, (2.0, 30.0), None)]
    assert series_columns(rows, True) == (
        (
            SeriesColumn("vmstat", "r", (1.0, 2.0), first_is_since_boot=True),
            SeriesColumn("vmstat", "cs", (20.0, 30.0), first_is_since_boot=True),
        ),
        (),
    )


def test_timestamps_are_kept_per_row():
    stamps = ("2015-01-11 20:18:35", "2015-01-11 20:18:36")
    rows = [(2, COLUMNS, (1.0, 20.0), stamps[0]), (3, COLUMNS, (2.0, 30.0), stamps[1])]
    columns, samples = series_columns(rows, False)
    assert [c.timestamps for c in columns] == [stamps, stamps]
    assert samples == ()


def test_a_plain_block_and_the_rows_after_it_are_one_column_of_floats():
    rows = [block(2, COLUMNS, [[1, 20], [2, 30]]), (4, COLUMNS, (3.0, 40.0), None)]
    columns, samples = series_columns(rows, True)
    assert columns == (
        SeriesColumn("vmstat", "r", (1.0, 2.0, 3.0), first_is_since_boot=True),
        SeriesColumn("vmstat", "cs", (20.0, 30.0, 40.0), first_is_since_boot=True),
    )
    assert all(type(v) is float for c in columns for v in c.values)
    assert samples == ()
    assert row_count(rows) == 3


def test_a_stamped_row_after_a_plain_block_stamps_every_row():
    rows = [block(2, COLUMNS, [[1, 20], [2, 30]]), (4, COLUMNS, (3.0, 40.0), "23:40:01")]
    columns, _ = series_columns(rows, False)
    assert [c.timestamps for c in columns] == [("", "", "23:40:01")] * 2


def test_a_column_only_some_rows_have_is_kept_as_samples():
    rows = [(2, COLUMNS, (1.0, 20.0), None), block(3, ("r", "cs", "wa"), [[2, 30, 5]])]
    columns, samples = series_columns(rows, True)
    assert columns == (
        SeriesColumn("vmstat", "r", (1.0, 2.0), first_is_since_boot=True),
        SeriesColumn("vmstat", "cs", (20.0, 30.0), first_is_since_boot=True),
    )
    assert samples == (Sample("vmstat", "wa", 1, 5.0),)
    assert row_count(rows) == 2


def test_no_rows_no_columns():
    assert series_columns([], True) == ((), ())
    assert row_count([]) == 0

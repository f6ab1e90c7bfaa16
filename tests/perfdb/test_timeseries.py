import pytest

from perfdb.timeseries import columns_from_samples, stride


def test_samples_become_one_column_each_in_row_order():
    rows = [
        (0, "vmstat", "cs", 1, 900.0, False, ""),
        (0, "vmstat", "cs", 0, 5000.0, True, ""),
        (0, "vmstat", "r", 0, 3.0, True, ""),
        (0, "vmstat", "r", 1, 4.0, False, ""),
        (1, "vmstat", "r", 0, 7.0, False, "12:00:01"),
    ]
    columns = {(c.trial, c.column): c for c in columns_from_samples(rows)}
    cs = columns[(0, "cs")]
    assert cs.values == [5000.0, 900.0] and cs.indexes is None and cs.first_is_since_boot
    assert cs.timestamps == []
    assert columns[(1, "r")].timestamps == ["12:00:01"]
    assert not columns[(1, "r")].first_is_since_boot


def test_gaps_keep_their_row_numbers():
    rows = [(0, "series", "x", i, float(i), False, "") for i in (1, 3, 4)]
    (column,) = columns_from_samples(rows)
    assert column.indexes == [1, 3, 4] and column.values == [1.0, 3.0, 4.0]


@pytest.mark.parametrize(
    ("length", "max_points", "step"),
    [(10, 2000, 1), (2000, 2000, 1), (2001, 2000, 2), (59000, 2000, 30)],
)
def test_stride(length, max_points, step):
    assert stride(length, max_points) == step
    assert len(range(length)[::step]) <= max_points

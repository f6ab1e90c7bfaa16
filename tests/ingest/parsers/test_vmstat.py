from pathlib import Path
from statistics import mean

import pytest

from ingest.parsers import ParseError, get_parser

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "vmstat"
parse = get_parser("vmstat")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def measured(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


def column(result, name: str) -> list[float]:
    samples = sorted(result.all_samples(), key=lambda s: s.index)
    return [s.value for s in samples if s.column == name]


def test_procps_ng_timestamps_from_lkp_fixture():
    result = parse(read("lkp-fixture-vmstat-1.txt"), {})
    first = [s for s in result.all_samples() if s.index == 0]
    assert all(s.since_boot for s in first)
    assert {s.timestamp for s in first} == {"2015-01-11 20:18:35"}
    assert column(result, "cs")[:2] == [23, 2187]
    assert "st" in result.metadata["vmstat_columns"].split()
    cs = column(result, "cs")
    assert measured(result)["vmstat_cs_mean"] == pytest.approx(mean(cs[1:]))


def test_procps2_repeated_header_is_not_a_new_since_boot_row():
    result = parse(read("procps2-2.4-repeated-header.txt"), {})
    assert column(result, "cs") == [80, 12195, 12079, 17508]
    assert column(result, "w") == [0, 0, 0, 0]
    assert [s.index for s in result.all_samples() if s.since_boot and s.column == "r"] == [0]
    assert measured(result)["vmstat_cs_mean"] == pytest.approx(mean([12195, 12079, 17508]))
    assert measured(result)["vmstat_r_mean"] == pytest.approx(mean([9, 12, 14]))
    assert result.warnings == ()


def test_header_after_data_applies_to_rows_above():
    result = parse(read("procps2-header-after-data.txt"), {})
    assert column(result, "so") == [3, 16, 92]
    assert any("header after the data" in w for w in result.warnings)


def test_noise_lines_are_warned_and_wide_values_kept():
    result = parse(read("procps2-noise.txt"), {})
    assert column(result, "bo") == [2, 1027052, 12]
    assert column(result, "in") == [105, 246649, 402]
    lines = sorted(int(w.split()[1].rstrip(":")) for w in result.warnings)
    assert lines == [1, 6, 8, 9]
    assert any(w.startswith("line 8: 4 fields for 16 columns") for w in result.warnings)


@pytest.mark.parametrize(
    ("name", "columns"),
    [
        ("procps3-2.6-wa.txt", "r b swpd free buff cache si so bi bo in cs us sy id wa"),
        ("procps-ng-a-gu.txt", "r b swpd free inact active si so bi bo in cs us sy id wa st gu"),
        ("paper-subset.txt", "r in cs us sy id"),
    ],
)
def test_columns_by_header_name(name, columns):
    result = parse(read(name), {})
    assert result.metadata["vmstat_columns"] == columns
    assert {s.column for s in result.all_samples()} == set(columns.split())


def test_units_per_column():
    result = parse(read("procps-ng-a-gu.txt"), {})
    units = {m.metric: m.unit for m in result.measurements}
    assert units["vmstat_cs_mean"] == "/s"
    assert units["vmstat_id_mean"] == "%"
    assert units["vmstat_r_mean"] == "tasks"
    assert units["vmstat_inact_mean"] == "KiB"
    assert units["vmstat_gu_mean"] == "%"
    assert {m.better for m in result.measurements} == {"none"}


def test_excerpt_option_keeps_first_row():
    result = parse(read("paper-subset.txt"), {"first_row_since_boot": False})
    assert not any(s.since_boot for s in result.all_samples())
    assert measured(result)["vmstat_cs_mean"] == pytest.approx(mean([12195, 12079, 17508]))


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        (" r  cs  id\n 1  2,5  3\n", "decimal comma", 2),
        (" r  cs  id\n 1  NaN  3\n", "is not a number", 2),
    ],
)
def test_broken_numbers(text, fragment, line):
    with pytest.raises(ParseError, match=fragment) as error:
        parse(text, {})
    assert error.value.line == line


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "no vmstat column header"),
        (" 1 0 0 812344\n", "no vmstat column header"),
        (" r  cs  id\nKilled\n", "no data rows"),
    ],
)
def test_nothing_to_read(text, fragment):
    with pytest.raises(ParseError, match=fragment):
        parse(text, {})


def test_only_since_boot_row_gives_no_means():
    result = parse(" r  cs  id\n 1  20  97\n", {})
    assert result.measurements == ()
    assert any("only the since-boot row" in w for w in result.warnings)

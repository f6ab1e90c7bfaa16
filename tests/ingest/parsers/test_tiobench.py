from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "tiobench"
parse = get_parser("tiobench")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def values(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


@pytest.mark.parametrize(
    ("name", "options", "metric", "expected"),
    [
        ("tiobench-0.3.3-full.txt", {}, "seq_read_rate_t1", 29.41),
        ("tiobench-0.3.3-full.txt", {}, "seq_read_cpu_pct_t8", 283.4),
        ("tiobench-0.3.3-full.txt", {}, "rand_read_cpu_pct_t8", 5.301),
        ("tiobench-0.3.3-full.txt", {}, "seq_write_max_lat_ms_t8", 12004.77),
        ("tiobench-0.3.3-full.txt", {}, "seq_write_lat_over_10s_pct_t8", 0.0031),
        ("tiobench-0.3.3-full.txt", {}, "rand_write_cpu_eff_t1", 46),
        (
            "tiobench-compact-two-kernels.txt",
            {"identifier": "2.5.68-mm2"},
            "seq_read_rate_t8",
            24.08,
        ),
        (
            "tiobench-compact-two-kernels.txt",
            {"identifier": "2.5.68"},
            "rand_write_avg_lat_ms_t8",
            0.09,
        ),
        ("tiobench-mail-rewrapped.txt", {}, "seq_read_max_lat_ms_t1", 471.20),
        ("tiobench-mail-rewrapped.txt", {}, "rand_read_cpu_eff_t2", 87),
    ],
)
def test_values(name, options, metric, expected):
    assert values(parse(read(name), options))[metric] == pytest.approx(expected)


def test_every_section_and_thread_count_is_named():
    result = parse(read("tiobench-0.3.3-full.txt"), {})
    assert len(result.measurements) == 4 * 2 * 7
    assert result.metadata == {
        "identifier": "2.5.62",
        "threads": "1,8",
        "file_size_mb": 252,
        "block_size": 4096,
    }


@pytest.mark.parametrize(
    ("suffix", "unit", "better"),
    [
        ("rate_t1", "MB/s", "higher"),
        ("cpu_pct_t1", "%", "none"),
        ("avg_lat_ms_t1", "ms", "lower"),
        ("max_lat_ms_t1", "ms", "lower"),
        ("lat_over_2s_pct_t1", "%", "lower"),
        ("cpu_eff_t1", "MB/s per CPU", "higher"),
    ],
)
def test_units_and_direction(suffix, unit, better):
    result = parse(read("tiobench-0.3.3-full.txt"), {})
    found = {m.metric: m for m in result.measurements}[f"rand_write_{suffix}"]
    assert (found.unit, found.better) == (unit, better)


def test_overflow_is_omitted_with_a_warning():
    result = parse(read("tiobench-compact-two-kernels.txt"), {"identifier": "2.5.68"})
    assert "rand_write_cpu_pct_t8" not in values(result)
    assert "rand_write_cpu_eff_t8" not in values(result)
    assert "rand_write_rate_t8" in values(result)
    assert any("line 29" in w and "overflowed" in w for w in result.warnings)


def test_several_identifiers_need_an_option():
    with pytest.raises(ParseError, match=r"several identifiers \['2.5.68', '2.5.68-mm2'\]"):
        parse(read("tiobench-compact-two-kernels.txt"), {})


WRAPPED_BADLY = """Sequential Reads
Identifier   Size  Size  Thr   Rate  (CPU%)  Latency    Latency      >2s      >10s    Eff
2.5.62                        252   4096    1   29.41 14.52%     0.132
96.35   0.00000
"""


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        (WRAPPED_BADLY, "row has 6 values, expected 10", 3),
        ("Random Reads\nx 252 4096 1 0,61 1.093% 6.401 47.18 0 0 56\n", "decimal comma", 2),
        ("Random Reads\nx 252 4096 1 0.61 1.093% 6.401 47.18 0 0 56 9\n", "has 11 values", 2),
        ("No size specified, using 252 MB\n", "no tiobench rows", None),
    ],
)
def test_rejects(text, fragment, line):
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert fragment in err.value.message
    assert err.value.line == line


def test_duplicate_thread_rows_are_refused():
    text = read("tiobench-0.3.3-full.txt").replace("    8   31.07", "    1   31.07")
    with pytest.raises(
        ParseError, match=r"line 19: second seq_read row for 1 threads \(first at line 18\)"
    ):
        parse(text, {})

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "tiobench"
parse = get_parser("tiobench")

MARATHE = "lkml-2003-03-07-marathe-2.5.64.txt"
CALLEJA = "lkml-2002-09-11-reiser-quoting-calleja-2.4.20-pre4-pre6.txt"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def values(record) -> dict[str, float]:
    return {m.metric: m.value for m in record.measurements}


def record(result, **keys):
    found = [r for r in result.records if all(r.keys.get(k) == v for k, v in keys.items())]
    assert len(found) == 1, found
    return found[0]


def test_real_single_kernel_report_is_four_records():
    # LKML, Marathe 2003-03-07, tiobench 0.3.3 on 2.5.64: one row per section, 10 threads.
    result = parse(read(MARATHE), {})
    assert [r.keys["test"] for r in result.records] == [
        "Sequential Reads",
        "Random Reads",
        "Sequential Writes",
        "Random Writes",
    ]
    assert {tuple(sorted(r.keys.items())) for r in result.records} >= {
        (
            ("block_size", 4096),
            ("file_size_mb", 252),
            ("label", "2.5.64"),
            ("test", "Sequential Writes"),
            ("threads", 10),
        )
    }
    writes = record(result, test="Sequential Writes")
    assert writes.line == 58
    assert values(writes) == {
        "seq_write_rate": 13.93,
        "seq_write_cpu_pct": 22.92,
        "seq_write_avg_lat_ms": 5.356,
        "seq_write_max_lat_ms": 26320.44,
        "seq_write_lat_over_2s_pct": 0.0922,
        "seq_write_lat_over_10s_pct": 0.0,
        "seq_write_cpu_eff": 61,
    }
    assert values(record(result, test="Random Reads"))["rand_read_avg_lat_ms"] == 254.222
    assert result.warnings == ()


def test_quoted_mail_with_two_kernels_and_prompts_keeps_every_row():
    # LKML, Reiser quoting Calleja 2002-09-11: `>`-quoted, two kernels, shell prompts between.
    result = parse(read(CALLEJA), {})
    assert len(result.records) == 2 * 4 * 4
    assert {r.keys["label"] for r in result.records} == {"2.4.20-pre4", "2.4.20-pre6"}
    pre6 = record(result, label="2.4.20-pre6", test="Sequential Reads", threads=8)
    assert pre6.line == 120
    assert values(pre6) == {
        "seq_read_rate": 8.36,
        "seq_read_cpu_pct": 21.69,
        "seq_read_avg_lat_ms": 2.970,
        "seq_read_max_lat_ms": 5532.30,
        "seq_read_lat_over_2s_pct": 0.00391,
        "seq_read_lat_over_10s_pct": 0.0,
        "seq_read_cpu_eff": 39,
    }
    pre4 = record(result, label="2.4.20-pre4", test="Random Writes", threads=1)
    assert values(pre4)["rand_write_cpu_pct"] == 3.620
    groups = group_records(result.records)
    assert len(groups) == 32 and all(len(g.trials) == 1 for g in groups)


@pytest.mark.parametrize(
    ("options", "count"),
    [
        ({"identifier": "2.4.20-pre6"}, 16),
        ({"block_size": 4096}, 32),
        ({"identifier": "2.4.20-pre4", "block_size": "4096"}, 16),
    ],
)
def test_options_filter_records(options, count):
    assert len(parse(read(CALLEJA), options).records) == count


@pytest.mark.parametrize(
    ("options", "fragment"),
    [({"identifier": "2.5.64"}, "no rows for identifier"), ({"block_size": 8192}, "block size")],
)
def test_filters_that_match_nothing(options, fragment):
    with pytest.raises(ParseError, match=fragment):
        parse(read(CALLEJA), options)


@pytest.mark.parametrize(
    ("name", "keys", "metric", "expected"),
    [
        ("tiobench-0.3.3-full.txt", {"test": "Sequential Reads", "threads": 8}, "cpu_pct", 283.4),
        ("tiobench-0.3.3-full.txt", {"test": "Random Reads", "threads": 8}, "cpu_pct", 5.301),
        (
            "tiobench-mail-rewrapped.txt",
            {"test": "Sequential Reads", "threads": 1},
            "max_lat_ms",
            471.20,
        ),
        ("tiobench-mail-rewrapped.txt", {"test": "Random Reads", "threads": 2}, "cpu_eff", 87),
        (
            "tiobench-compact-two-kernels.txt",
            {"label": "2.5.68-mm2", "test": "Sequential Reads", "threads": 8},
            "rate",
            24.08,
        ),
    ],
)
def test_hand_written_layouts(name, keys, metric, expected):
    found = record(parse(read(name), {}), **keys)
    prefix = {"Sequential Reads": "seq_read", "Random Reads": "rand_read"}[found.keys["test"]]
    assert values(found)[f"{prefix}_{metric}"] == pytest.approx(expected)


def test_compact_layout_has_no_size_keys_and_overflow_is_omitted():
    result = parse(read("tiobench-compact-two-kernels.txt"), {})
    overflowed = record(result, label="2.5.68", test="Random Writes", threads=8)
    assert set(overflowed.keys) == {"test", "label", "threads"}
    assert "rand_write_cpu_pct" not in values(overflowed)
    assert "rand_write_cpu_eff" not in values(overflowed)
    assert values(overflowed)["rand_write_rate"] == 2.75
    assert any("line 29" in w and "overflowed" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("suffix", "unit", "better"),
    [
        ("rate", "MB/s", "higher"),
        ("cpu_pct", "%", "none"),
        ("avg_lat_ms", "ms", "lower"),
        ("max_lat_ms", "ms", "lower"),
        ("lat_over_2s_pct", "%", "lower"),
        ("cpu_eff", "MB/s per CPU", "higher"),
    ],
)
def test_units_and_direction(suffix, unit, better):
    found = {
        m.metric: m for m in record(parse(read(MARATHE), {}), test="Random Writes").measurements
    }
    assert (found[f"rand_write_{suffix}"].unit, found[f"rand_write_{suffix}"].better) == (
        unit,
        better,
    )


def test_a_row_truncated_in_a_real_mail_is_rejected_with_its_line():
    # Derived from the real Marathe mail: the Random Reads row loses its last three cells.
    text = read(MARATHE).replace("1645.46   0.00000  0.00000    79", "1645.46")
    with pytest.raises(ParseError, match="row has 7 values, expected 10") as err:
        parse(text, {})
    assert err.value.line == 52


def test_a_corrupted_cell_in_a_real_mail_names_its_line():
    # Derived from the real Calleja mail: a decimal comma in one pre6 rate.
    text = read(CALLEJA).replace("8    8.36 21.69%", "8    8,36 21.69%")
    with pytest.raises(ParseError, match="decimal comma") as err:
        parse(text, {})
    assert err.value.line == 120


WRAPPED_BADLY = """Sequential Reads
Identifier   Size  Size  Thr   Rate  (CPU%)  Latency    Latency      >2s      >10s    Eff
2.5.62                        252   4096    1   29.41 14.52%     0.132
96.35   0.00000
"""


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        (WRAPPED_BADLY, "row has 6 values, expected 10", 3),
        ("Random Reads\nx 252 4096 1 0.61 1.093% 6.401 47.18 0 0 56 9\n", "has 11 values", 2),
        ("No size specified, using 252 MB\n", "no tiobench rows", None),
    ],
)
def test_rejects(text, fragment, line):
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert fragment in err.value.message
    assert err.value.line == line


def test_repeated_rows_are_trials_not_errors():
    # Derived from the real Marathe mail: the whole report pasted twice (a second run).
    text = read(MARATHE)
    result = parse(text + "\n" + text, {})
    groups = group_records(result.records)
    assert len(groups) == 4
    assert [n for n, _ in groups[0].trials] == [1, 2]

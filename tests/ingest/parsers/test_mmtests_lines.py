"""ingest/parsers/mmtests_lines.py: the line grammar of mmtests tables and their header names."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import Record, Summary
from ingest.parsers.mmtests_lines import (
    CELL,
    CELLS_ONLY,
    COMPARE_ROW,
    DURATION_ROW,
    NUMBERS_ONLY,
    OPS_ROW,
    Token,
    cell_edges,
    is_header_like,
    is_statistic,
    is_underline,
    join_lines,
    line_names,
    looks_like_row,
    number_edges,
    split_known,
    tokens,
)

MMTESTS = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "mmtests"
ROW = "Amean     256     24.4604 (   0.00%)     24.0353 *   1.74%*"


def _parse(name: str):
    return get_parser("mmtests")((MMTESTS / name).read_text(), {})


def _record(result, **keys: str) -> Record:
    found = [r for r in result.records if all(r.keys.get(k) == v for k, v in keys.items())]
    assert len(found) == 1, (keys, [r.keys for r in found])
    return found[0]


def _values(record: Record) -> dict[str, float]:
    return {m.metric: m.value for m in record.measurements}


def test_a_comparison_row_and_its_cells():
    match = COMPARE_ROW.match(ROW)
    assert match is not None
    assert (match["stat"], match["param"]) == ("Amean", "256")
    cells = [(c["value"], c["open"], c["pct"], c["close"]) for c in CELL.finditer(ROW)]
    assert cells == [("24.4604", "(", "0.00", ")"), ("24.0353", "*", "1.74", "*")]
    assert cell_edges(ROW) == [36, 59]  # where each kernel's cell ends
    assert CELLS_ONLY.match("      24.0353 *   1.74%*")  # a wrapped row's tail
    assert looks_like_row(ROW)
    assert not looks_like_row("Amean went up by 3% on send-64")
    assert not looks_like_row("")


def test_monitor_rows():
    duration = DURATION_ROW.match("Duration User  25810.02  25158.93")
    assert duration is not None and duration["name"] == "User"
    assert duration["nums"] == "25810.02  25158.93"
    older = DURATION_ROW.match("User 25810.02 25158.93")
    assert older is not None and older["name"] == "User"
    ops = OPS_ROW.match("Ops NUMA hint local faults %   15371.00   214570.00")
    assert ops is not None and ops["name"] == "NUMA hint local faults %"
    assert number_edges("Duration User  25810.02  25158.93") == [23, 33]
    assert NUMBERS_ONLY.match(" 1.0 2 -nan ")


@pytest.mark.parametrize(
    ("token", "statistic"),
    [
        ("Amean", True),
        ("Hmean", True),
        ("BAmean-99", True),
        ("Best99%Amean", True),
        ("Max-90%", True),
        ("1st-qrtle", True),
        ("CoeffVar", True),
        ("Duration", False),
        ("Ops", False),
        ("hackbench", False),
    ],
)
def test_is_statistic(token, statistic):
    assert is_statistic(token) is statistic


def test_tokens_underlines_and_header_lines():
    assert tokens("  ab  cd") == [Token(2, 4, "ab"), Token(6, 8, "cd")]
    assert is_underline("-----") and is_underline("  ====  ")
    assert not is_underline("--") and not is_underline("== x ==")
    assert is_header_like("   hackbench   hackbench")  # indented over the row labels
    assert is_header_like("good    good + series")  # spaced like columns
    assert not is_header_like("netperf-udp")  # a heading at the margin
    assert not is_header_like("2-socket CascadeLake")


def test_split_known_finds_every_reading():
    assert split_known("vanillapatched", frozenset({"vanilla", "patched"})) == [
        ["vanilla", "patched"]
    ]
    assert len(split_known("ab", frozenset({"a", "ab", "b"}))) == 2  # ambiguous
    assert split_known("xyz", frozenset({"a"})) == []


def test_line_names():
    def names(line: str, edges: list[int], width: int, known: frozenset[str] = frozenset()):
        return line_names(tokens(line), edges, width, known)

    assert names("   hackbench   hackbench", [13, 25], 10) == ["hackbench", "hackbench"]
    # two long names printed whole, touching: the names known from elsewhere split them
    assert names("  vanillapatched", [10, 20], 8, frozenset({"vanilla", "patched"})) == [
        "vanilla",
        "patched",
    ]
    # more words than kernels: joined per column
    assert names("          good  good + series", [14, 29], 10) == ["good", "good + series"]
    # a name that fits its field ends at its edge; the overflowing one follows unspaced
    line = " " * 13 + "vanilla" + "sched-moveforward-v1r1-long"
    assert names(line, [20, 40], 18) == ["vanilla", "sched-moveforward-v1r1-long"]
    # a word filling its field and more: cutting it would be a guess
    assert names("abcdefghijklmnopqrstuv", [10, 22], 8) is None


def test_join_lines():
    assert join_lines("hackbench", "default") == "hackbench-default"
    assert join_lines("nouclam", "nouclamp") == "nouclamp"  # printed less its last letter
    assert join_lines("6.4.0", "rc2-revert") == "6.4.0-rc2-revert"


def test_names_too_long_for_their_field_are_split():
    # Duration's narrow fields print both names whole, touching: the table above names them.
    result = _parse("lkml-2023-autonumabench-overflowed-header.txt")
    duration = _record(
        result, table="autonumabench", label="6.5.0-rc6-sched-forcescan-v1r5", section="duration"
    )
    assert _values(duration) == {"user": 10264.25, "system": 13.59, "elapsed": 156.30}
    amean = next(
        m
        for m in _record(
            result,
            table="autonumabench",
            label="6.5.0-rc6-sched-pidclear-v1r5",
            param="elsp-NUMA02",
        ).measurements
        if m.metric == "amean"
    )
    assert (amean.value, amean.summary) == (12.93, Summary(sd=0.18, sd_pct=1.38))
    # The second autonumabench table repeats the heading; its Duration block has no header
    # and takes the labels of the table above it.
    assert _values(
        _record(result, table="autonumabench #2", label="patched", section="duration")
    ) == {"user": 1377.57, "system": 7.99, "elapsed": 26.49}
    # vanilla fits its field, so the name after it starts at the column's edge.
    dbench = _parse("lkml-2021-dbench4-overflowed-name.txt")
    assert sorted({r.keys["label"] for r in dbench.records}) == [
        "5.15.0-rc1-sched-moveforward-v1r1",
        "5.15.0-rc1-sched-scalewakegran-v2r5",
        "5.15.0-rc1-vanilla",
    ]
    assert _values(
        _record(
            dbench,
            table="dbench4 Loadfile Execution Time",
            label="5.15.0-rc1-sched-moveforward-v1r1",
            param="64",
        )
    ) == {"amean": 433.64}
    assert _values(
        _record(dbench, table="table 1", label="5.15.0-rc1-sched-moveforward-v1r1", param="4")
    ) == {"amean": 45.86}


def test_hand_made_headers_keep_names_with_spaces():
    result = _parse("lkml-2022-netperf-hand-edited-header.txt")
    assert _values(_record(result, label="good + series", param="send-2048")) == {"hmean": 9996.26}
    assert _values(_record(result, label="good", param="recv-128")) == {"hmean": 688.39}
    assert result.metadata == {"workload": "netperf-udp"}
    perfpipe = _parse("lkml-2022-perfpipe-psi-three-kernels.txt")
    only = _record(perfpipe, label="patched-only groupc->tasks[]", param="Time")
    assert _values(only)["max-99"] == 8.57
    assert _values(_record(perfpipe, label="tip-psi=off", param="Time"))["1st-qrtle"] == 8.11
    assert perfpipe.metadata == {"workload": "perfpipe", "config": "config-scheduler-perfpipe"}

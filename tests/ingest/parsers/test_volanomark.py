from pathlib import Path

import pytest

from ingest.parsers import ParseError, get_parser
from ingest.parsers.base import group_records

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "volanomark"
parse = get_parser("volanomark")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def values(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


@pytest.mark.parametrize(
    ("name", "expected", "version"),
    [
        (
            "benchkit-docstring-volanomark-2.9.0-summary.txt",
            {
                "throughput": 652666,
                "elapsed": 3.095,
                "messages_sent": 101000,
                "messages_received": 1919000,
                "messages_total": 2020000,
            },
            "2.9.0",
        ),
        (
            "client-2.13-full.txt",
            {
                "throughput": 13199,
                "elapsed": 6.061,
                "messages_sent": 4000,
                "messages_received": 76000,
                "messages_total": 80000,
            },
            "2.13.4",
        ),
        ("exponent.txt", {"messages_total": 1.0e7, "throughput": 16000}, "2.13.4"),
    ],
)
def test_summary_values(name, expected, version):
    result = parse(read(name), {})
    for metric, value in expected.items():
        assert values(result)[metric] == pytest.approx(value)
    assert result.metadata["volanomark_version"] == version


def test_units_and_directions():
    result = parse(read("client-2.13-full.txt"), {})
    kinds = {m.metric: (m.unit, m.better) for m in result.measurements}
    assert kinds == {
        "throughput": ("msg/s", "higher"),
        "elapsed": ("s", "lower"),
        "messages_sent": ("messages", "none"),
        "messages_received": ("messages", "none"),
        "messages_total": ("messages", "none"),
    }
    assert result.records[0].keys == {"rooms": 2}  # "Creating room number 2 ..."
    assert result.warnings == ()


@pytest.mark.parametrize(
    ("name", "trial_file", "throughput"),
    [("grep-one-trial.txt", "test-3.log", 13183), ("startup-sh-trial.txt", "test-2.log", 13182)],
)
def test_grep_prefix(name, trial_file, throughput):
    result = parse(read(name), {})
    assert values(result)["throughput"] == throughput
    assert result.metadata["trial_file"] == trial_file


def test_grep_of_several_trial_logs_gives_a_record_per_trial():
    result = parse(read("grep-several-trials.txt"), {})
    assert [(r.trial, r.line, values(r)) for r in result.records] == [
        (1, 1, {"throughput": 13005}),
        (2, 2, {"throughput": 13183}),
        (3, 3, {"throughput": 13177}),
    ]
    assert "trial_file" not in result.metadata


def test_pasted_client_outputs_are_separate_runs():
    # Derived: the two client summaries of this folder pasted one after the other.
    text = read("client-2.13-full.txt") + read("benchkit-docstring-volanomark-2.9.0-summary.txt")
    result = parse(text, {})
    assert [values(r)["throughput"] for r in result.records] == [13199, 652666]
    assert [r.trial for r in result.records] == [None, None]
    assert result.records[0].keys == {"rooms": 2}
    assert result.records[1].keys == {}
    assert [g.trials[0][0] for g in group_records(result.records)] == [1, 1]


def test_startup_sh_blocks_keep_their_test_numbers():
    # Derived: the startup.sh block of this folder twice, the second renamed test-3.log.
    block = read("startup-sh-trial.txt")
    result = parse(block + block.replace("test-2.log", "test-3.log"), {})
    assert [(r.trial, values(r)["messages_total"]) for r in result.records] == [
        (2, 200000),
        (3, 200000),
    ]


def test_one_trial_log_with_two_different_values_is_refused():
    text = read("startup-sh-trial.txt")
    text += "test-2.log: Average throughput = 13999 messages per second\n"
    with pytest.raises(ParseError, match="appears twice with different values") as error:
        parse(text, {})
    assert error.value.line == 8


# The first lines of jgneff/www-volano-report docs/articles/volano-report-2001-04-13/loopback.txt
# (commit f2971a53), a published report table: the `table` parser's input, not this one's.
REPORT_TABLE = """Java Platform                                            Results          Score
------------------------------------------------  ----------------------  -----
IBM 1.3.0 Windows                                 2182, 2261, 2266, 2252   2260
"""


def test_published_report_tables_are_sent_to_the_table_parser():
    with pytest.raises(ParseError, match="`table` parser") as error:
        parse(REPORT_TABLE, {})
    assert error.value.line == 1


def test_under_one_second_keeps_message_counts_and_warns():
    result = parse(read("under-one-second.txt"), {})
    assert set(values(result)) == {"messages_sent", "messages_received", "messages_total"}
    assert any("under 1 second" in w and "line 5" in w for w in result.warnings)


def test_total_not_sent_plus_received_warns():
    result = parse(read("inconsistent-total.txt"), {})
    assert any("not sent + received" in w for w in result.warnings)
    assert any("differs from total / elapsed" in w for w in result.warnings)


def test_failed_run_is_rejected_with_line():
    with pytest.raises(ParseError, match="Test failed") as error:
        parse(read("failed.txt"), {})
    assert error.value.line == 4


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        ("Average throughput = 13,183 messages per second\n", "decimal comma", 1),
        ("Average throughput = NaN messages per second\n", "is not a number", 1),
        ("Messages sent = 10\nAverage throughput = 13183 msgs\n", "cannot read throughput", 2),
    ],
)
def test_broken_values(text, fragment, line):
    with pytest.raises(ParseError, match=fragment) as error:
        parse(text, {})
    assert error.value.line == line


@pytest.mark.parametrize("text", ["", "garbage\nmore garbage\n", "VolanoMark version = 2.1.2\n"])
def test_no_summary(text):
    with pytest.raises(ParseError, match="no VolanoMark summary"):
        parse(text, {})


def test_mail_quoted_summary():
    quoted = "".join(f"> {line}\n" for line in read("client-2.13-full.txt").splitlines())
    assert values(parse(quoted, {}))["throughput"] == 13199


def test_repeated_unprefixed_summaries_are_runs_in_order():
    text = (
        "Average throughput = 1 messages per second\nAverage throughput = 2 messages per second\n"
    )
    result = parse(text, {})
    assert [(r.line, values(r)) for r in result.records] == [
        (1, {"throughput": 1}),
        (2, {"throughput": 2}),
    ]

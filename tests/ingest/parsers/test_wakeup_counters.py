from pathlib import Path

import pytest

from ingest.parsers import ParseError, get_parser

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "wakeup"
parse = get_parser("wakeup-counters")


def measured(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


@pytest.mark.parametrize(
    ("name", "calls", "pct"),
    [("percent.txt", 3.49e6, 28.4), ("counts.txt", 3_490_000, 991_160 / 3_490_000 * 100)],
)
def test_fixtures(name, calls, pct):
    result = parse((FIXTURES / name).read_text(), {})
    assert measured(result) == pytest.approx(
        {"wakeup_calls": calls, "priority_preemption_pct": pct}
    )
    assert {(m.metric, m.unit, m.better) for m in result.measurements} == {
        ("wakeup_calls", "calls", "none"),
        ("priority_preemption_pct", "%", "none"),
    }
    assert result.warnings == ()


@pytest.mark.parametrize(
    ("value", "calls"),
    [
        ("3490000", 3_490_000),
        ("3.49 M", 3.49e6),
        ("3.49M", 3.49e6),
        ("3490 K", 3.49e6),
        ("3490K", 3.49e6),
    ],
)
def test_call_count_forms(value, calls):
    result = parse(f"try_to_wake_up calls: {value}\npriority preemptions: 10%\n", {})
    assert measured(result)["wakeup_calls"] == pytest.approx(calls)
    assert measured(result)["priority_preemption_pct"] == 10


def test_missing_preemptions_warns():
    result = parse("try_to_wake_up calls: 5.52 M\n", {})
    assert measured(result) == {"wakeup_calls": 5.52e6}
    assert result.warnings == ("no 'priority preemptions:' line",)


def test_unknown_line_warns():
    result = parse("try_to_wake_up calls: 100\nuptime: 5\n", {})
    assert any(w.startswith("line 2:") for w in result.warnings)


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        ("priority preemptions: 28.4 %\n", "no 'try_to_wake_up calls:' line", None),
        (
            "try_to_wake_up calls: 100\npriority preemptions: 101\n",
            "exceed try_to_wake_up calls",
            2,
        ),
        ("try_to_wake_up calls: 100\npriority preemptions: 120 %\n", "is not a percentage", 2),
        ("try_to_wake_up calls: 3,49 M\n", "decimal comma", 1),
        ("try_to_wake_up calls: NaN\n", "is not a number", 1),
        ("try_to_wake_up calls: 28 %\n", "must be a count", 1),
        ("try_to_wake_up calls: 1\ntry_to_wake_up calls: 2\n", "given twice", 2),
        ("try_to_wake_up calls:\n", "is not a number", 1),
    ],
)
def test_rejected(text, fragment, line):
    with pytest.raises(ParseError, match=fragment) as error:
        parse(text, {})
    assert error.value.line == line

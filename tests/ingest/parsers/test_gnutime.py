from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "time"
parse = get_parser("time")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def values(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "gnu-default-2.4.txt",
            {
                "elapsed_s": 170.73,
                "user_s": 239.24,
                "system_s": 85.80,
                "cpu_pct": 190,
                "major_faults": 1741932,
                "minor_faults": 1948496,
            },
        ),
        (
            "gnu-verbose-hms.txt",
            {
                "elapsed_s": 3600 + 12 * 60 + 36,
                "user_s": 3410.52,
                "system_s": 402.17,
                "cpu_pct": 87,
                "major_faults": 1204,
                "minor_faults": 30431776,
            },
        ),
        (
            "gnu-verbose-mss.txt",
            {
                "elapsed_s": 94.31,
                "user_s": 1210.44,
                "system_s": 130.02,
                "cpu_pct": 1421,
                "max_rss_kb": 251044,
                "major_faults": 3,
                "minor_faults": 21001554,
            },
        ),
        ("bash-builtin.txt", {"elapsed_s": 7.455, "user_s": 6.12, "system_s": 1.01}),
        ("bash-time-p.txt", {"elapsed_s": 7.45, "user_s": 6.12, "system_s": 1.01}),
        ("bash-pasted-spaces.txt", {"elapsed_s": 73.1, "user_s": 7.45, "system_s": 28.83}),
        ("tcsh.txt", {"elapsed_s": 73.1, "user_s": 7.45, "system_s": 28.83, "cpu_pct": 49.6}),
        (
            "lkp-fixture-kbuild-03.txt",
            {"elapsed_s": 300.922, "user_s": 16611.657, "system_s": 1932.173},
        ),
        (
            "lkp-fixture-kernbench-02.txt",
            {
                "elapsed_s": 7.77,
                "user_s": 205.55,
                "system_s": 32.02,
                "cpu_pct": 3054,
                "context_switches": 8621,
                "sleeps": 24101,
            },
        ),
    ],
)
def test_layouts(name, expected):
    found = values(parse(read(name), {}))
    assert found == pytest.approx(expected)


def test_units_and_direction():
    result = parse(read("gnu-verbose-mss.txt"), {})
    units = {m.metric: (m.unit, m.better) for m in result.measurements}
    assert units["elapsed_s"] == ("s", "lower")
    assert units["cpu_pct"] == ("%", "none")
    assert units["max_rss_kb"] == ("KB", "lower")
    assert result.metadata["command"] == "make -j16"


@pytest.mark.parametrize(
    ("name", "line"), [("gnu-default-2.4.txt", 1), ("gnu-verbose-hms.txt", 10)]
)
def test_zero_rss_is_omitted_with_a_warning(name, line):
    result = parse(read(name), {})
    assert "max_rss_kb" not in values(result)
    assert result.warnings == (
        f"line {line}: maximum resident set size is 0 (kernels before 2.6.32 do not report it); "
        "max_rss_kb omitted",
    )


def test_kernbench_std_deviation_goes_to_metadata():
    result = parse(read("lkp-fixture-kernbench-01.txt"), {})
    assert values(result)["elapsed_s"] == pytest.approx(28.094)
    assert result.metadata["elapsed_s_stddev"] == pytest.approx(0.182565)
    assert result.metadata["jobs"] == 8


def test_question_mark_cpu():
    result = parse(read("gnu-default-zero-elapsed.txt"), {})
    assert "cpu_pct" not in values(result)
    assert values(result)["elapsed_s"] == 0
    assert "CPU percentage is '?'" in result.warnings[0]


def test_failed_command_is_an_error_unless_allowed():
    text = read("gnu-default-failed.txt")
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 1
    assert "non-zero status 2" in err.value.message
    result = parse(text, {"allow_failed": True})
    assert values(result)["elapsed_s"] == pytest.approx(16.8)
    assert result.metadata["exit_status"] == 2


KERNBENCH_TWO = """Average Half load -j 4 Run (std deviation):
Elapsed Time 50.1 (0.2)
Average Optimal load -j 8 Run (std deviation):
Elapsed Time 28.0 (0.1)
"""


def test_kernbench_blocks_need_a_choice():
    with pytest.raises(ParseError, match=r"-j 4 \(Half\), -j 8 \(Optimal\)"):
        parse(KERNBENCH_TWO, {})
    assert values(parse(KERNBENCH_TWO, {"jobs": 4})) == {"elapsed_s": 50.1}
    assert values(parse(KERNBENCH_TWO, {"jobs": 8})) == {"elapsed_s": 28.0}


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        (None, "decimal comma (localized output); re-run with LC_ALL=C", 2),
        ("real 7.45\nreal 7.50\n", "second elapsed value (first at line 1)", 2),
        ("make: *** [all] Error 2\n", "no elapsed time found", None),
        ("\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:2:3:4\n", "is not [h:]m:ss", 1),
        ("real\t0mNaNs\n", "not a number", 1),
    ],
)
def test_rejects(text, fragment, line):
    text = text or read("bash-de_DE.txt")
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert fragment in err.value.message
    assert err.value.line == line

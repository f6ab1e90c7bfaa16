"""ingest/parsers/gnutime_lines.py: one line of each timing layout read into its fields.

Expected values are read by hand from the fixtures (see time/SOURCES.md).
"""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError
from ingest.parsers.gnutime_lines import (
    clock_seconds,
    command_line,
    names_verbose_field,
    read_values,
    verbose_prefix,
    verbose_text,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "time"
parse = get_parser("time")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def values(record) -> dict[str, float]:
    return {m.metric: m.value for m in record.measurements}


@pytest.mark.parametrize(
    ("token", "seconds"),
    [("2:50.73", 170.73), ("34:03.06", 2043.06), ("1:12:36", 4356.0), ("0.21", 0.21)],
)
def test_clock_seconds_folds_base_60_exactly(token, seconds):
    assert clock_seconds(token, 1) == seconds


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("1:2:3:4", "elapsed time '1:2:3:4' is not [h:]m:ss"),
        ("0:00,32", "elapsed time '00,32' has a decimal comma"),
        ("1:xx", "elapsed time 'xx' is not a number"),
    ],
)
def test_clock_seconds_refuses_naming_the_line(token, message):
    with pytest.raises(ParseError) as err:
        clock_seconds(token, 6)
    assert message in err.value.message
    assert err.value.line == 6


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("$ time make -j4", ("make -j4", True)),
        ("[root@host ~]# time make bzImage", ("make bzImage", True)),
        ("time ./dbench 16", ("./dbench 16", True)),
        ("/usr/bin/time -v make", ("make", True)),
        ("time make -j30 bzImage:", ("make -j30 bzImage", True)),
        ("make -C /tmp/fx/mk", ("make -C /tmp/fx/mk", False)),  # a bare make: not explicit
        ("time is short", None),  # prose
        ("make: *** [all] Error 2", None),
    ],
)
def test_command_line(line, found):
    assert command_line(line) == found


def test_verbose_markup_and_wrapped_labels():
    label = "Elapsed (wall clock) time (h:mm:ss or m:ss): 34:03.06"
    assert verbose_text(f".. {label}") == label
    assert verbose_text("# User time (seconds): 1.0") == "User time (seconds): 1.0"
    assert verbose_prefix("\tElapsed (wall clock) time")  # the rest wrapped to the next line
    assert not verbose_prefix(label)  # a whole field
    assert not verbose_prefix("User")  # too short to tell
    assert not verbose_prefix("Hello world")
    assert names_verbose_field("Maximum resident set size (kbytes): 2276")
    assert names_verbose_field("User time (seconds): 0.00 System time (seconds): 0.00")
    assert not names_verbose_field("real 0m1s")


@pytest.mark.parametrize(
    ("line", "fields"),
    [
        (
            "0.00user 0.00system 0:00.21elapsed 2%CPU (0avgtext+0avgdata 2276maxresident)k",
            [
                ("user", 0.0, None),
                ("system", 0.0, None),
                ("elapsed", 0.21, None),
                ("cpu", 2.0, None),
                ("max_rss", 2276.0, None),
            ],
        ),
        (
            "0inputs+0outputs (1major+313minor)pagefaults 0swaps",
            [("major_faults", 1.0, None), ("minor_faults", 313.0, None)],
        ),
        ("\tPercent of CPU this job got: 87%", [("cpu", 87.0, None)]),
        ("real\t0m0.207s", [("elapsed", 0.207, None)]),
        ("real 0.20", [("elapsed", 0.2, None)]),
        (
            "18.69u 77.98s 3:35.09 44.9%",
            [("user", 18.69, None), ("system", 77.98, None), ("elapsed", 215.09, None)]
            + [("cpu", 44.9, None)],
        ),
        ("Elapsed Time 650.742 (2.49774)", []),  # kernbench, outside its block
        ("make[1]: Leaving directory", []),
    ],
)
def test_read_values_of_each_layout(line, fields):
    warnings: list[str] = []
    assert read_values(line, 1, False, warnings) == (False, fields)
    assert warnings == []


def test_kernbench_lines_are_read_inside_a_block_with_their_spread():
    assert read_values("Elapsed Time 650.742 (2.49774)", 70, True, []) == (
        True,
        [("elapsed", 650.742, 2.49774)],
    )


@pytest.mark.parametrize(
    ("line", "fields", "warning"),
    [
        (
            "0.00user 0.00system 0:00.00elapsed ?%CPU (0avgtext+0avgdata 0maxresident)k",
            [("user", 0.0, None), ("system", 0.0, None), ("elapsed", 0.0, None)]
            + [("max_rss", 0.0, None)],
            "line 5: CPU percentage is '?' (elapsed 0); cpu_pct omitted",
        ),
        (
            "user\t0m0.003sfoo",
            [("ignored", 0.0, None)],
            "line 5: user time '0m0.003sfoo' is not a time (text glued after it); "
            "user omitted for this run",
        ),
        (
            "real\t1m13.100s (approx)",
            [("elapsed", 73.1, None)],
            "line 5: annotation '(approx)' after real ignored",
        ),
    ],
)
def test_read_values_warns_about_what_it_leaves_out(line, fields, warning):
    warnings: list[str] = []
    assert read_values(line, 5, False, warnings) == (False, fields)
    assert warnings == [warning]


def test_a_real_time_with_text_glued_after_it_is_refused():
    with pytest.raises(ParseError, match="real time '0m0.207sfoo' is not a time") as err:
        read_values("real\t0m0.207sfoo", 9, False, [])
    assert err.value.line == 9


@pytest.mark.parametrize(
    ("name", "expected"),
    [
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
        # hand-written layout samples (see SOURCES.md)
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
                **dict.fromkeys(
                    (
                        "voluntary_context_switches",
                        "involuntary_context_switches",
                        "swaps",
                        "fs_inputs",
                        "fs_outputs",
                        "socket_msgs_sent",
                        "socket_msgs_received",
                        "signals_delivered",
                    ),
                    0,
                ),
                "page_size_bytes": 4096,
            },
        ),
        ("bash-pasted-spaces.txt", {"elapsed_s": 73.1, "user_s": 7.45, "system_s": 28.83}),
    ],
)
def test_single_timing_layouts(name, expected):
    (record,) = parse(read(name), {}).records
    assert values(record) == expected


def test_side_by_side_kernbench_columns_are_refused():
    # Derived from the Bhat mail: the second kernel's value pasted beside the first, as
    # side-by-side comparison tables print them.
    text = read("linux-mm-bhat-kernbench-two-kernels.txt").replace(
        "Elapsed Time 650.742 (2.49774)", "Elapsed Time 650.742 (2.49774)\t591.696 (0.660969)"
    )
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 70
    assert "side-by-side kernbench columns are not supported" in err.value.message


def test_gnu_time_verbose_with_a_markup_prefix_and_minutes_elapsed():
    (record,) = parse(read("nadia-ref-time-v-dotted.txt"), {}).records
    got = values(record)
    assert got["elapsed_s"] == 2043.06  # 34:03.06
    assert got["fs_inputs"] == 156091288 and got["minor_faults"] == 106855140

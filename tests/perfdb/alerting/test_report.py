"""The list-ready report: the kernel test robot's layout, checked against a real mail.

The numbers and lines are from the robot's report "[linus:master] [do_pollfd] 8935989798:
will-it-scale.per_process_ops 11.7% regression" (Oliver Sang, 26 January 2025,
https://lore.kernel.org/oe-lkp/202501261509.b6b4260d-lkp@intel.com), trimmed to four rows:
the same means, changes and spreads must print as the same lines.
"""

from __future__ import annotations

import pytest

from perfdb.alerting.report import (
    PendingRow,
    Report,
    Row,
    Section,
    Side,
    builds_text,
    number,
    report_text,
    row_text,
    spread,
)

AXES = (
    ("compiler", "gcc-12"),
    ("cpufreq_governor", "performance"),
    ("kconfig", "x86_64-rhel-9.4"),
    ("mode", "process"),
    ("nr_task", "100%"),
    ("rootfs", "debian-12-x86_64-20240206.cgz"),
    ("tbox_group", "lkp-skl-fpga01"),
    ("test", "poll2"),
    ("testcase", "will-it-scale"),
)

# (row, the line the robot printed for it)
MAIL_ROWS = [
    (
        Row(
            "numa-meminfo.node0.Shmem",
            Side(21281, 147.4),
            197.5,
            Side(63313, 84.6),
            regression=False,
        ),
        "     21281 ±147%    +197.5%      63313 ± 84%  numa-meminfo.node0.Shmem",
    ),
    (
        Row("will-it-scale.per_process_ops", Side(263173, 0.4), -11.7, Side(232411, 0.3)),
        "    263173           -11.7%     232411        will-it-scale.per_process_ops",
    ),
    (
        Row("perf-stat.i.MPKI", Side(0.01, 2.4), 10.0, Side(0.01, 1.0), regression=False),
        "      0.01 ±  2%     +10.0%       0.01        perf-stat.i.MPKI",
    ),
    (
        Row("perf-stat.ps.instructions", Side(2.891e11), -11.7, Side(2.552e11)),
        " 2.891e+11           -11.7%  2.552e+11        perf-stat.ps.instructions",
    ),
]


@pytest.mark.parametrize("row, line", MAIL_ROWS)
def test_a_row_prints_as_the_robot_prints_it(row, line):
    assert row_text(row) == line


@pytest.mark.parametrize(
    "value, text",
    [
        (0.07, "0.07"),
        (873.333, "873.33"),
        (1053.4, "1053"),
        (24170828, "24170828"),
        (1.145e8, "1.145e+08"),
    ],
)
def test_numbers_keep_lkp_precision(value, text):
    assert number(value) == text


@pytest.mark.parametrize(
    "side, text", [(Side(1, None), "      "), (Side(1, 2.0), "      "), (Side(1, 7.9), " ±  7%")]
)
def test_a_spread_is_shown_above_two_percent_only(side, text):
    assert spread(side) == text


def test_the_whole_report_is_exact():
    section = Section(
        axes=AXES,
        base="d000e073ca2a08ab",
        culprit="89359897983825dbfc08578e7ee",
        rows=tuple(row for row, _ in MAIL_ROWS[:2]),
        pending=(PendingRow("will-it-scale.workload", -11.7, "pending: the next kernel decides"),),
        link="https://perfdb.example/compare/?base=1&new=2",
    )
    report = Report(
        culprit="89359897983825dbfc08578e7ee",
        upload="12 (poll2.tar.gz)",
        sections=(section,),
        link="https://perfdb.example/alerts/summaries/3-4-12/",
    )
    assert report_text(report) == EXPECTED


EXPECTED = """\
perfdb noticed a 11.7% regression of will-it-scale.per_process_ops on:


build: 89359897983825dbfc08578e7ee
upload: 12 (poll2.tar.gz)
https://perfdb.example/alerts/summaries/3-4-12/

=========================================================================================
compiler/cpufreq_governor/kconfig/mode/nr_task/rootfs/tbox_group/test/testcase:
  gcc-12/performance/x86_64-rhel-9.4/process/100%/debian-12-x86_64-20240206.cgz/lkp-skl-fpga01/poll2/will-it-scale

build:
  d000e073ca2a08ab  (base)
  89359897983825dbfc08578e7ee

d000e073ca2a08ab 89359897983825dbfc08578e7ee
---------------- ---------------------------
         %stddev     %change         %stddev
             \\          |                \\
     21281 ±147%    +197.5%      63313 ± 84%  numa-meminfo.node0.Shmem
    263173           -11.7%     232411        will-it-scale.per_process_ops

not confirmed yet:
    -11.7%  will-it-scale.workload
            pending: the next kernel decides

compare: https://perfdb.example/compare/?base=1&new=2

%stddev: the standard deviation of a build's values, as a percent of their mean,
shown when above 2% (blank: 2% or less, or a single value); %change: the step
perfdb detected between the two levels, outliers left out.
"""


def test_the_headline_names_the_first_regression_not_an_improvement():
    up = Row("a", Side(1.0), +40.0, Side(1.4), regression=False)
    small = Row("b", Side(1.0), -5.0, Side(0.95))
    large = Row("c", Side(1.0), -30.0, Side(0.7))
    report = Report(
        "2.5.59", "1", (Section((("workload", "x"),), "2.5.58", "2.5.59", (up, small, large)),)
    )
    # The caller's order says which move leads (the surest), not the size.
    assert report_text(report).startswith("perfdb noticed a 5.0% regression of b on:")


def test_sections_print_in_the_order_given():
    first = Section((("w", "b"),), "b", "c", (Row("m", Side(1), -3.0, Side(1)),))
    second = Section((("w", "a"),), "b", "c", (Row("n", Side(1), +30.0, Side(1)),))
    only_pending = Section((("w", "c"),), "b", "c", (), (PendingRow("m", -50.0, "pending"),))
    text = report_text(Report("2.5.59", "1", (first, second, only_pending)))
    assert text.index("w:\n  b") < text.index("w:\n  a") < text.index("w:\n  c")


@pytest.mark.parametrize(
    "builds, text",
    [
        (["6.8.0-40-generic"], "6.8.0-40-generic"),
        (["2.6.2", "2.6.1", "2.6.2", "2.6.0"], "2.6.2, 2.6.1, 2.6.0"),
        (
            [f"2.6.{n}" for n in range(30, 0, -1)],
            "2.6.30, 2.6.29, … 2.6.1 (30 builds)",
        ),
    ],
)
def test_a_long_baseline_is_written_as_its_ends_and_its_count(builds, text):
    assert builds_text(builds) == text

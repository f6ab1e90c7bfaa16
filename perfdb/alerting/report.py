"""An alert summary as plain text for a kernel mailing list (pure: no Django, no I/O).

Kernel developers read performance reports in the layout of the kernel test robot's mails
(lkp-tests, ``lib/compare.rb``: ``show_group_header``, ``show_perf_header`` and
``show_perf_change``): one block per test set-up, headed by its axes (``key/key:`` then
``value/value``), the base and the culprit build, then a row per metric that moved::

    263173           -11.7%     232411        will-it-scale.per_process_ops
     21281 ±147%    +197.5%      63313 ± 84%  numa-meminfo.node0.Shmem

that is the base's mean (10 wide) and its spread, the change, the culprit's mean and its
spread, the metric. A mean below 1,000 has two decimals, above 10^8 four significant digits,
otherwise none; the spread is the standard deviation as a percent of the mean, printed only
above 2 % (lkp's rule), so a blank means "2 % or less" — or, here, "one value, spread not
known", which the footer says. Following that layout keeps the report readable by people
(and scripts) who read the robot's mails every day.

The change printed is the alert's: the step the detector measured between the two levels
(outliers left out), which can differ slightly from the ratio of the two means shown.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

RULE = "=" * 89
ABS_WIDTH = 10
REL_WIDTH = 10
ERR_WIDTH = 6
FIRST_WIDTH = ABS_WIDTH + ERR_WIDTH  # the base column: mean and spread
WIDTH = FIRST_WIDTH + REL_WIDTH + 1  # a compared column: change, mean and spread
PERF_HEADER = (
    "         %stddev     %change         %stddev",
    "             \\          |                \\",
)
# lkp prints a spread only above this many percent.
SHOWN_SPREAD_PCT = 2.0


@dataclass(frozen=True)
class Side:
    """One side of a row: the mean of a build's values and their spread (percent of the mean,
    None when not known: one value and no spread stated)."""

    mean: float
    spread_pct: float | None = None


@dataclass(frozen=True)
class Row:
    metric: str
    base: Side
    change_pct: float
    culprit: Side
    regression: bool = True  # False: the metric got better


@dataclass(frozen=True)
class PendingRow:
    """A move not confirmed yet: listed apart, with what will confirm or clear it."""

    metric: str
    change_pct: float
    note: str


@dataclass(frozen=True)
class Section:
    """One set-up (workload x hardware x mode x parameters) and the metrics that moved on it."""

    axes: tuple[tuple[str, str], ...]  # (name, value) in print order
    base: str  # the baseline build(s)
    culprit: str
    rows: tuple[Row, ...]
    pending: tuple[PendingRow, ...] = ()
    link: str = ""  # a comparison of the two builds' runs


@dataclass(frozen=True)
class Report:
    """A culprit build's report. Sections and their rows are printed in the order given: the
    caller puts first what the headline should name (``summaries.alert_order``: the
    regression the data is surest of), and set-ups with only pending moves last."""

    culprit: str  # the build: kernel plus patch set
    upload: str  # the upload that brought it, as a reader can find it
    sections: tuple[Section, ...]
    link: str = ""  # the summary's page


# A baseline of more builds than this is written as its first ones, "…", its last.
BUILDS_SHOWN = 3


def builds_text(builds: Iterable[str]) -> str:
    """A baseline's builds in the order given, each once: all of them up to
    ``BUILDS_SHOWN``, else the first two, the last and how many. A long series' baseline
    is a level of up to 30 kernels, which as a list filled an email line and an alert
    row with version numbers nobody reads."""
    unique = list(dict.fromkeys(builds))
    if len(unique) <= BUILDS_SHOWN:
        return ", ".join(unique)
    return f"{unique[0]}, {unique[1]}, … {unique[-1]} ({len(unique)} builds)"


def number(value: float) -> str:
    """A mean as lkp prints it (``show_perf_change``)."""
    if abs(value) < 1000:
        return f"{value:.2f}"
    if abs(value) > 100_000_000:
        return f"{value:.4g}"
    return f"{value:.0f}"


def spread(side: Side) -> str:
    """`` ± 14%`` (the percent cut to a whole number, as lkp's ``%d``), or blank."""
    if side.spread_pct is None or side.spread_pct <= SHOWN_SPREAD_PCT:
        return " " * ERR_WIDTH
    return f" ±{int(side.spread_pct):{ERR_WIDTH - 3}d}%"


def change(pct: float) -> str:
    text = f"{pct:+{REL_WIDTH}.1f}" if abs(pct) < 100_000 else f"{pct:+{REL_WIDTH}.2g}"
    return f"{text}% "


def row_text(row: Row) -> str:
    return (
        f"{number(row.base.mean):>{ABS_WIDTH}}{spread(row.base)}"
        f"{change(row.change_pct)}"
        f"{number(row.culprit.mean):>{ABS_WIDTH}}{spread(row.culprit)}"
        f"  {row.metric}"
    )


def section_lines(section: Section) -> list[str]:
    names = "/".join(name for name, _ in section.axes)
    values = "/".join(value for _, value in section.axes)
    lines = [RULE, f"{names}:", f"  {values}", "", "build:"]
    lines += [f"  {section.base}  (base)", f"  {section.culprit}", ""]
    if section.rows:
        lines.append(
            f"{section.base[:FIRST_WIDTH]:>{FIRST_WIDTH}} {section.culprit[:WIDTH]:>{WIDTH}}"
        )
        lines.append(f"{'-' * FIRST_WIDTH} {'-' * WIDTH}")
        lines += PERF_HEADER
        lines += [row_text(row) for row in section.rows]
        lines.append("")
    if section.pending:
        lines.append("not confirmed yet:")
        for p in section.pending:
            lines.append(f"  {change(p.change_pct).strip():>8}  {p.metric}")
            lines.append(f"            {p.note}")
        lines.append("")
    if section.link:
        lines += [f"compare: {section.link}", ""]
    return lines


def headline(report: Report) -> str:
    """The first line, as the robot's: the first confirmed regression in the report's order
    (else its first move) and its metric."""
    rows = [r for s in report.sections for r in s.rows]
    if not rows:
        pending = [p for s in report.sections for p in s.pending]
        return f"perfdb noticed {len(pending)} move(s) not confirmed yet on:"
    regressions = [r for r in rows if r.regression]
    lead = (regressions or rows)[0]
    kind = "regression" if regressions else "improvement"
    return f"perfdb noticed a {abs(lead.change_pct):.1f}% {kind} of {lead.metric} on:"


def report_text(report: Report) -> str:
    """The whole report: the headline, the build and upload, a block per set-up, the key."""
    lines = [headline(report), "", "", f"build: {report.culprit}", f"upload: {report.upload}"]
    if report.link:
        lines.append(report.link)
    lines.append("")
    for section in report.sections:
        lines += section_lines(section)
    lines += [
        "%stddev: the standard deviation of a build's values, as a percent of their mean,",
        "shown when above 2% (blank: 2% or less, or a single value); %change: the step",
        "perfdb detected between the two levels, outliers left out.",
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"

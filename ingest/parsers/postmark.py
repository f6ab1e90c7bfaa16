"""PostMark 1.5x reports, verbose and terse (docs/parsers/postmark.md).

The verbose report scales data amounts per line (``bytes``, ``kilobytes``, ``megabytes``,
KILOBYTE = 1024 in postmark-1_5.c), so one metric could be printed in two units within a
file. Every data amount is converted exactly (Decimal) to KiB, and terse mode's bytes/s to
KiB/s, so a metric always has one unit. Reports keep the ``set`` parameters typed before them
(``pm>set size 500 500000``) as keys; reports with equal parameters are trials, in order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal

from ingest.parsers.base import KeyValue, Measurement, ParseError, ParseResult, Record, register
from ingest.parsers.iozone import unquote_printable
from ingest.parsers.numbers import parse_number
from ingest.parsers.run_labels import key_by_headings
from ingest.parsers.text import numbered_lines

_N = r"(\d+(?:\.\d+)?)"
_PER = rf"\({_N} per second\)"
_LINES = (
    (re.compile(rf"^{_N} seconds total$"), ("total_time",)),
    (re.compile(rf"^{_N} seconds of transactions {_PER}$"), ("transactions_time", "transactions")),
    (re.compile(rf"^{_N} created {_PER}$"), ("files_created", "files_created_rate")),
    (
        re.compile(rf"^Creation alone: {_N} files {_PER}$"),
        ("creation_alone", "creation_alone_rate"),
    ),
    (re.compile(rf"^{_N} read {_PER}$"), ("files_read", "files_read_rate")),
    (re.compile(rf"^{_N} appended {_PER}$"), ("files_appended", "files_appended_rate")),
    (re.compile(rf"^{_N} deleted {_PER}$"), ("files_deleted", "files_deleted_rate")),
    (
        re.compile(rf"^Deletion alone: {_N} files {_PER}$"),
        ("deletion_alone", "deletion_alone_rate"),
    ),
)
_MIXED = re.compile(rf"^Mixed with transactions: {_N} files {_PER}$")
_DATA = re.compile(
    rf"^{_N} (bytes|kilobytes|megabytes|gigabytes) (read|written) "
    rf"\({_N} (bytes|kilobytes|megabytes|gigabytes) per second\)$"
)
_SCALE = {"bytes": Decimal(1) / 1024, "kilobytes": Decimal(1), "megabytes": Decimal(1024)}
_SCALE["gigabytes"] = Decimal(1024 * 1024)
_TERSE = re.compile(r"^\d+ \d+(?: \d+\.\d+){11}$")
_TERSE_LIKE = re.compile(r"^\d+ \d+(?: \d+\.\d+){5,}")
_TERSE_NAMES = (
    "total_time",
    "transactions_time",
    "transactions",
    "files_created_rate",
    "creation_alone_rate",
    "creation_mixed_rate",
    "files_read_rate",
    "files_appended_rate",
    "files_deleted_rate",
    "deletion_alone_rate",
    "deletion_mixed_rate",
    "data_read_rate",
    "data_written_rate",
)
_SET = re.compile(
    r"(?:^|>)\s*set\s+(size|number|numbers|transactions|subdirectories|read|write|buffering|bias\s+read|bias\s+create|seed)\s+(.+?)\s*$"
)
_VERSION = re.compile(r"PostMark v([\d.]+)")


def _meta(metric: str) -> tuple[str, str]:
    """Unit and direction: times lower, rates higher, counts and amounts neither."""
    if metric in ("total_time", "transactions_time"):
        return "s", "lower"
    if metric == "transactions":
        return "transactions/s", "higher"
    if metric.startswith("data_"):
        return ("KiB/s", "higher") if metric.endswith("_rate") else ("KiB", "none")
    return ("files/s", "higher") if metric.endswith("_rate") else ("files", "none")


def _measure(metric: str, token: str, number: int, scale: Decimal = Decimal(1)) -> Measurement:
    parse_number(token, line=number, what=f"postmark {metric}")  # the shared grammar's checks
    unit, better = _meta(metric)
    return Measurement(metric, float(Decimal(token) * scale), unit, better)  # type: ignore[arg-type]


class _Report:
    """One verbose report from its ``Time:`` line to its second ``Data:`` line."""

    def __init__(self, line: int, keys: dict[str, KeyValue]):
        self.line = line
        self.keys = dict(keys)
        self.found: dict[str, Measurement] = {}
        self.mixed = "creation_mixed"

    def add(self, number: int, text: str) -> bool:
        """Read one line; False when it is not a report line."""
        for pattern, names in _LINES:
            if m := pattern.match(text):
                for name, token in zip(names, m.groups(), strict=True):
                    self._put(number, _measure(name, token, number))
                if names[0] == "files_deleted":
                    self.mixed = "deletion_mixed"
                return True
        if m := _MIXED.match(text):
            self._put(number, _measure(self.mixed, m.group(1), number))
            self._put(number, _measure(f"{self.mixed}_rate", m.group(2), number))
            return True
        if m := _DATA.match(text):
            amount, unit, what, rate, rate_unit = m.groups()
            name = "data_read" if what == "read" else "data_written"
            self._put(number, _measure(name, amount, number, _SCALE[unit]))
            self._put(number, _measure(f"{name}_rate", rate, number, _SCALE[rate_unit]))
            return True
        return False

    def _put(self, number: int, measurement: Measurement) -> None:
        if measurement.metric in self.found:
            raise ParseError(f"second {measurement.metric} line in one postmark report", number)
        self.found[measurement.metric] = measurement

    def record(self) -> Record:
        if len(self.found) != len(_all_verbose()):
            missing = sorted(set(_all_verbose()) - set(self.found))
            raise ParseError(
                f"postmark report is incomplete (truncated?): no {', '.join(missing)}", self.line
            )
        order = {name: i for i, name in enumerate(_all_verbose())}
        values = tuple(sorted(self.found.values(), key=lambda m: order[m.metric]))
        return Record(keys=self.keys, line=self.line, measurements=values)


def _all_verbose() -> list[str]:
    names = [n for _, group in _LINES for n in group]
    names[7:7] = ["creation_mixed", "creation_mixed_rate"]
    names += ["deletion_mixed", "deletion_mixed_rate"]
    names += ["data_read", "data_read_rate", "data_written", "data_written_rate"]
    return names


def _terse(number: int, text: str, keys: dict[str, KeyValue]) -> Record:
    tokens = text.split()
    values = []
    for name, token in zip(_TERSE_NAMES, tokens, strict=True):
        scale = Decimal(1) / 1024 if name.startswith("data_") else Decimal(1)
        values.append(_measure(name, token, number, scale))
    return Record(keys=dict(keys), line=number, measurements=tuple(values))


def _set_key(m: re.Match[str]) -> tuple[str, KeyValue]:
    name = re.sub(r"\s+", "_", m.group(1))
    name = "number" if name == "numbers" else name
    value = m.group(2)
    return name, int(value) if value.isdigit() else value


_SECTIONS = ("Time:", "Files:", "Data:")


@register("postmark")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    keys: dict[str, KeyValue] = {}
    records: list[Record] = []
    report: _Report | None = None
    version = None
    lines = list(unquote_printable(numbered_lines(text)))
    for number, raw in lines:
        line = raw.strip()
        if m := _VERSION.search(line):
            version = m.group(1)
        if m := _SET.search(line):
            name, value = _set_key(m)
            keys[name] = value
        elif line == "Time:":
            if report is not None:
                records.append(report.record())
            report = _Report(number, keys)
        elif _TERSE.match(line):
            records.append(_terse(number, line, keys))
        elif _TERSE_LIKE.match(line):
            raise ParseError(
                f"postmark terse line has {len(line.split())} fields, expected 13", number
            )
        elif report is not None and line and line not in ("Files:", "Data:"):
            if report.add(number, line):
                if len(report.found) == len(_all_verbose()):
                    records.append(report.record())
                    report = None
            elif re.search(r"per second|seconds|created|deleted|megabytes|kilobytes", line):
                raise ParseError(f"postmark report line not understood: {line!r}", number)
    if report is not None:
        records.append(report.record())
    if not records:
        raise ParseError("no postmark report: no 'Time:' section and no terse result line")
    metadata: dict[str, str | int | float] = {"version": version} if version else {}
    # "With atomic_t:" / "With percpu_counter:" above two reports of one configuration: two
    # runs, not trials (run_labels.key_by_headings).
    warnings: list[str] = []
    records = key_by_headings(records, lines, warnings, skip=_own_line)
    return ParseResult(records=tuple(records), metadata=metadata, warnings=tuple(warnings))


def _own_line(line: str) -> bool:
    """postmark's prompts, settings and section titles are never headings."""
    stripped = line.strip()
    return bool(_SET.search(stripped)) or stripped.startswith("pm>") or stripped in _SECTIONS

"""The text output of sar, mpstat and iostat (sysstat 5 to 12), read block by block.

A banner (``Linux 6.1.0 (host) 11/24/26 _x86_64_ (2 CPU)``) starts a run. sar and mpstat
blocks are a header row whose first field is the interval's start time (``15:34:55`` or
``03:34:55 PM``), then rows stamped with their time, then ``Average:`` rows. iostat blocks are
``avg-cpu:`` with one row below it and ``Device`` with a row per device; iostat's first report
is the average since boot. Numbers are read exactly; a localized decimal comma is rejected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ingest.parsers.base import KeyValue, ParseError, ParseResult
from ingest.parsers.numbers import parse_number
from ingest.parsers.sysstat_common import KEY_COLUMNS, Series, report_name, result
from ingest.parsers.text import numbered_lines

_BANNER = re.compile(r"^\s*(Linux\s+\S+)\s+\(([^)]*)\)\s+(\S+)(?:\s+_(\S+)_)?(?:\s+\((\d+) CPU\))?")
_TIME = re.compile(r"^\d{1,2}:\d{2}:\d{2}$")
_IOSTAT_STAMP = re.compile(r"^\s*(\d{2}/\d{2}/\d{2,4}\s+\d{1,2}:\d{2}:\d{2}(?:\s+[AP]M)?)\s*$")
_NUMERIC = re.compile(r"^[+-]?[\d.,]+$|^[+-]?(?:nan|inf)$", re.IGNORECASE)


class _Text:
    """Walks the lines once; ``self.block`` is the header in force, ended by a blank line."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.series: dict[tuple[tuple[str, KeyValue], ...], Series] = {}
        self.done: list[Series] = []
        self.warnings: list[str] = []
        self.metadata: dict[str, str | int | float] = {}
        self.label: str | None = None
        self.block: tuple[str, str | None, tuple[str, ...], bool] | None = None
        self.stamp: str | None = None  # iostat -t
        self.reports = 0  # iostat reports since the banner
        self.banners = 0
        self.cpu_open = False  # an avg-cpu block was the last report start

    def feed(self, number: int, line: str) -> None:
        tokens = line.split()
        if not tokens:
            self.block = None
            return
        if banner := _BANNER.match(line):
            self._banner(banner)
            return
        if stamp := _IOSTAT_STAMP.match(line):
            self.stamp = stamp.group(1)
            return
        if tokens[0] in ("avg-cpu:", "Device:", "Device"):
            self._iostat_header(number, tokens)
            return
        lead, rest = _lead(tokens)
        if lead is not None and rest and not any(_NUMERIC.match(t) for t in rest):
            if "RESTART" in rest:
                self.warnings.append(f"line {number}: {line.strip()!r} (the counters restart)")
                return
            key = KEY_COLUMNS.get(rest[0])
            columns = tuple(rest[1:] if key else rest)
            self.block = (report_name(columns, key), key, columns, lead == "Average:")
            return
        if self.block is not None and not any(_NUMERIC.match(t) for t in tokens):
            self.warnings.append(
                f"line {number}: not a row of {self.source} output; the block ends here"
            )
            self.block = None
        elif self.block is not None:
            self._row(number, lead, rest if lead is not None else tokens)

    def _banner(self, banner: re.Match[str]) -> None:
        self.flush()
        self.banners += 1
        self.label = banner.group(1)
        for key, value in (("host", banner.group(2)), ("date", banner.group(3))):
            self.metadata.setdefault(key, value)
        if banner.group(5):
            self.metadata.setdefault("cpus", int(banner.group(5)))
        self.block, self.reports, self.cpu_open = None, 0, False

    def flush(self) -> None:
        """A new banner is a new run: its series are new records (trials of the old keys)."""
        if self.source == "iostat" and self.banners and self.reports == 1:
            self.warnings.append(
                "iostat printed one report, the average since boot (no interval given)"
            )
        self.done.extend(self.series.values())
        self.series = {}

    def _iostat_header(self, number: int, tokens: list[str]) -> None:
        """``avg-cpu:`` starts a report; ``Device`` does too unless it follows an avg-cpu."""
        if tokens[0] == "avg-cpu:":
            self.reports += 1
            self.cpu_open = True
            self.block = ("cpu", None, tuple(tokens[1:]), False)
            return
        if not self.cpu_open:
            self.reports += 1
        self.cpu_open = False
        self.block = ("device", "device", tuple(tokens[1:]), False)

    def _row(self, number: int, lead: str | None, tokens: list[str]) -> None:
        assert self.block is not None
        report, key, columns, average = self.block
        keys: dict[str, KeyValue] = {"report": report}
        if self.label:
            keys = {"label": self.label, **keys}
        if key is not None:
            if not tokens:
                raise ParseError(f"{self.source} row without its {key} name", number)
            keys[key], tokens = tokens[0], tokens[1:]
        if len(tokens) != len(columns):
            raise ParseError(
                f"{self.source} row has {len(tokens)} values for {len(columns)} columns "
                f"({' '.join(columns)}); a wrapped or cut line?",
                number,
            )
        values = {
            column: parse_number(token, line=number, what=f"{self.source} {column}")
            for column, token in zip(columns, tokens, strict=True)
        }
        identity = tuple(keys.items())
        series = self.series.get(identity)
        if series is None:
            series = self.series[identity] = Series(keys, number)
            series.since_boot = self.source == "iostat" and self.banners > 0 and self.reports == 1
        if lead == "Average:" or average:
            series.average = values
        else:
            stamp = lead if lead is not None else self.stamp
            series.add(stamp, values, number)


def _lead(tokens: list[str]) -> tuple[str | None, list[str]]:
    """A row's time (``15:34:56``, ``03:34:56 PM``) or ``Average:``, and the fields after it."""
    if tokens[0] == "Average:":
        return tokens[0], tokens[1:]
    if _TIME.match(tokens[0]):
        if len(tokens) > 1 and tokens[1] in ("AM", "PM"):
            return f"{tokens[0]} {tokens[1]}", tokens[2:]
        return tokens[0], tokens[1:]
    return None, tokens


def parse_text(text: str, source: str, options: Mapping[str, object]) -> ParseResult:
    reader = _Text(source)
    for number, line in numbered_lines(text):
        if reader.block is None and not _starts_block(line):
            if _BANNER.match(line) or _IOSTAT_STAMP.match(line):
                reader.feed(number, line)
            continue  # prose, prompts and signatures between the blocks
        reader.feed(number, line)
    reader.flush()
    series = reader.done
    if source == "iostat" and not reader.banners:
        reader.warnings.append(
            "no iostat banner: the excerpt may not start at iostat's first report, so no row "
            "is flagged as the since-boot average"
        )
    if not bool(options.get("first_report_since_boot", True)):
        for s in series:
            s.since_boot = False
    if reader.label:
        reader.metadata.setdefault("label", reader.label)
    return result(series, source, reader.warnings, reader.metadata)


def _starts_block(line: str) -> bool:
    tokens = line.split()
    if not tokens:
        return False
    if tokens[0] in ("avg-cpu:", "Device:", "Device"):
        return True
    lead, rest = _lead(tokens)
    return lead is not None and bool(rest) and not any(_NUMERIC.match(t) for t in rest)

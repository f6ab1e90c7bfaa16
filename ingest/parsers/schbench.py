"""schbench latency and RPS percentiles, old and current layouts (docs/parsers/schbench.md).

Current schbench (2023+) prints ``Wakeup Latencies percentiles (usec) runtime 30 (s) (209403
total samples)``, ``Request Latencies ...`` and ``RPS percentiles (requests) ...`` blocks of
``  50.0th: 8   (43672 samples)`` lines (the headline percentile starred: ``* 99.0th``),
then ``min=1, max=8400`` and ``average rps: 6984.77``. The 2016 layout prints ``Latency
percentiles (usec)`` with ``*99.0000th: 2132``. Every printed number is kept: the percentile
values, the samples counted in each bucket, min/max and the totals. A file with several
reports (two configurations in a mail, or schbench's periodic reports) gives a record per
report, told apart by ``runtime_s`` and, when that is not enough, ``listing``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ingest.parsers.base import KeyValue, Measurement, ParseError, ParseResult, Record, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_SECTION = re.compile(
    r"^(?P<name>Wakeup Latencies|Request Latencies|Latency|RPS) percentiles "
    r"\((?P<unit>usec|requests)\)(?:\s+runtime (?P<runtime>\d+) \(s\))?"
    r"(?:\s+\((?P<total>\d+) total samples\))?\s*$"
)
_PERCENTILE = re.compile(
    r"^\*?\s*(?P<pct>\d+(?:\.\d+)?)th:\s*(?P<value>\S+)(?:\s+\((?P<samples>\d+) samples\))?\s*$"
)
_MINMAX = re.compile(r"^min=(?P<min>\S+),\s*max=(?P<max>\S+)\s*$")
_AVERAGE = re.compile(r"^average rps:\s*(?P<value>\S+)\s*$")
_PREFIX = {
    "Wakeup Latencies": "wakeup_lat",
    "Request Latencies": "request_lat",
    "Latency": "lat",
    "RPS": "rps",
}


@dataclass
class _Report:
    line: int
    runtime: int | None
    values: dict[str, tuple[Measurement, int]] = field(default_factory=dict)
    sections: set[str] = field(default_factory=set)

    def add(self, metric: str, token: str, unit: str, better: str, line: int) -> None:
        if metric in self.values:
            raise ParseError(f"second {metric} (first at line {self.values[metric][1]})", line)
        value = parse_number(token, line=line, what=metric)
        self.values[metric] = (Measurement(metric, value, unit, better), line)  # type: ignore[arg-type]


def _pct_name(token: str) -> str:
    """``99.0`` -> ``p99``, ``99.9000`` -> ``p99_9``, ``50.0000`` -> ``p50``."""
    whole, _, frac = token.partition(".")
    frac = frac.rstrip("0")
    return f"p{whole}_{frac}" if frac else f"p{whole}"


def _read(lines: list[tuple[int, str]]) -> list[_Report]:
    reports: list[_Report] = []
    prefix = ""
    for number, line in lines:
        text = line.strip()
        if match := _SECTION.match(text):
            prefix = _PREFIX[match["name"]]
            runtime = int(match["runtime"]) if match["runtime"] else None
            opens = prefix in ("wakeup_lat", "lat")  # schbench prints wakeup latencies first
            if not reports or opens or prefix in reports[-1].sections:
                reports.append(_Report(number, runtime))
            reports[-1].sections.add(prefix)
            if match["total"]:
                reports[-1].add(f"{prefix}_total_samples", match["total"], "count", "none", number)
            continue
        if not prefix:
            continue
        report = reports[-1]
        rps = prefix == "rps"
        unit, better = ("requests/s", "higher") if rps else ("us", "lower")
        if match := _PERCENTILE.match(text):
            name = f"{prefix}_{_pct_name(match['pct'])}"
            report.add(name if rps else f"{name}_us", match["value"], unit, better, number)
            if match["samples"]:
                report.add(f"{name}_samples", match["samples"], "count", "none", number)
        elif match := _MINMAX.match(text):
            for end in ("min", "max"):
                name = f"{prefix}_{end}" if rps else f"{prefix}_{end}_us"
                report.add(name, match[end], unit, "none", number)
        elif match := _AVERAGE.match(text):
            report.add("average_rps", match["value"], "requests/s", "higher", number)
            prefix = ""
        elif text and not text.startswith(("current rps", "sched delay")):
            prefix = "" if not text[0].isdigit() and "th:" not in text else prefix
            if "th:" in text:
                raise ParseError(f"schbench percentile line not understood: {text!r}", number)
    return reports


@register("schbench")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    reports = _read(numbered_lines(text))
    if not reports:
        raise ParseError("no schbench 'Latencies percentiles' / 'RPS percentiles' block")
    runtimes = [r.runtime for r in reports]
    ambiguous = len(set(runtimes)) < len(runtimes)
    records = []
    for index, report in enumerate(reports, start=1):
        if not report.values:
            raise ParseError("schbench percentile block with no values", report.line)
        keys: dict[str, KeyValue] = {}
        if report.runtime is not None:
            keys["runtime_s"] = report.runtime
        if ambiguous:
            keys["listing"] = index
        measurements = tuple(m for m, _ in report.values.values())
        records.append(Record(keys=keys, line=report.line, measurements=measurements))
    return ParseResult(records=tuple(records))

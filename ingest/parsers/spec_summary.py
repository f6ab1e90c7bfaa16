"""SPEC-style result summaries: ``key = value`` / ``key: value`` lines, or the generic CSV.

SPECjAppServer2002, SPECweb99, SPECjbb2000 and Trade results reach the lab as report
summaries typed or pasted from many sources (SPEC kits are licensed, no raw sample exists in
the lab), so the parser knows the headline metric keys and keeps every other key as metadata.
See docs/parsers/spec-summary.md for the accepted keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ingest.parsers.base import Measurement, ParseError, ParseResult, register
from ingest.parsers.generic import MEASUREMENT_HEADER, parse_csv
from ingest.parsers.numbers import parse_number
from ingest.parsers.spec_table import read_tables
from ingest.parsers.text import numbered_lines

# metric -> (unit, better, accepted keys in normalized form)
KNOWN = {
    "tops": ("TOPS", "higher", ("tops", "specjappserver2002 tops", "specjappserver2002")),
    "injection_rate": ("IR", "none", ("injection rate", "ir", "txrate")),
    "conforming_connections": (
        "connections",
        "higher",
        ("conforming connections", "specweb99", "specweb99 conforming connections"),
    ),
    "pages_per_s": ("pages/s", "higher", ("pages per s", "pages per sec", "pages per second")),
    "cpu_pct": ("%", "none", ("cpu pct", "cpu util", "cpu utilization", "cpu utilization pct")),
    "bops": ("ops/s", "higher", ("bops", "specjbb2000", "specjbb2000 ops per s", "ops per s")),
    "max_jops": ("jOPS", "higher", ("max jops",)),
    "critical_jops": ("jOPS", "higher", ("critical jops",)),
    "bbops_per_min": ("BBops/min", "higher", ("bbops per min", "ecperf bbops per min")),
}
_ALIASES = {alias: metric for metric, (_, _, aliases) in KNOWN.items() for alias in aliases}
_KEY_VALUE = re.compile(r"^(?P<key>[^=:]+?)\s*[=:]\s*(?P<value>.*)$")
_VALUE = re.compile(r"^(?P<number>[^\s%@]+)\s*(?P<rest>.*)$")


def normalize_key(key: str) -> str:
    """``CPU %`` -> ``cpu pct``, ``Pages/s`` -> ``pages per s``, ``max-jOPS`` -> ``max jops``."""
    key = key.lower().replace("%", " pct ").replace("/", " per ")
    return " ".join(re.sub(r"[^a-z0-9]+", " ", key).split())


def metric_for(key: str) -> str | None:
    """The whole key, or its last dotted component (``jbb2015.result.metric.max-jOPS``)."""
    return _ALIASES.get(normalize_key(key)) or _ALIASES.get(normalize_key(key.rsplit(".", 1)[-1]))


def _value(metric: str, text: str, line: int, options: Mapping[str, object]) -> tuple[float, str]:
    """The number, and what follows it (unit words, ``@Category``)."""
    match = _VALUE.match(text.strip())
    if not match:
        raise ParseError(f"{metric} has no value", line)
    number = parse_number(
        match["number"], line=line, what=metric, thousands=bool(options.get("thousands"))
    )
    return number, (match["rest"] or "").strip()


def _first_data_line(text: str) -> str:
    for _, line in numbered_lines(text):
        if line.strip() and not line.lstrip().startswith("#"):
            return line
    return ""


@register("spec-summary")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    header = [cell.strip().lower() for cell in _first_data_line(text).split(",")]
    if tuple(header[:4]) == MEASUREMENT_HEADER:
        return parse_csv(text, options)
    lines = numbered_lines(text)
    table_warnings: list[str] = []
    table_records = read_tables(lines, options, table_warnings)
    if table_records:
        # A pasted results table: one record per row; the mail's prose is not key = value.
        return ParseResult(records=tuple(table_records), warnings=tuple(table_warnings))
    found: dict[str, tuple[float, int]] = {}
    metadata: dict[str, str | int | float] = {}
    skipped = 0
    for number, line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "!")):
            continue
        match = _KEY_VALUE.match(stripped)
        if not match:
            skipped += 1
            continue
        key, raw = match["key"].strip(), match["value"].strip()
        metric = metric_for(key)
        if metric is None:
            metadata[key] = raw
            continue
        if metric in found:
            raise ParseError(
                f"second value for {metric} (first at line {found[metric][1]})", number
            )
        value, rest = _value(metric, raw, number, options)
        found[metric] = (value, number)
        if "@" in rest:
            metadata[f"{metric}_category"] = rest.split("@", 1)[1].strip()
        elif rest:
            metadata[f"{metric}_label"] = rest
    if not found:
        accepted = ", ".join(sorted(_ALIASES))
        first = next(
            (n for n, line in lines if line.strip() and not line.lstrip().startswith(("#", "!"))),
            None,
        )
        raise ParseError(
            "no SPEC metric found: expected 'key = value' lines with an accepted key, or a "
            "results table whose column names over a rule of '=' or '-' name a SPEC metric "
            f"(conforming connections, ops/sec); accepted keys (normalized): {accepted}",
            first,
        )
    measurements = tuple(
        Measurement(metric, found[metric][0], unit, better)  # type: ignore[arg-type]
        for metric, (unit, better, _) in KNOWN.items()
        if metric in found
    )
    warnings = (f"{skipped} line(s) were not key = value and were ignored",) if skipped else ()
    return ParseResult(measurements=measurements, warnings=warnings, metadata=metadata)

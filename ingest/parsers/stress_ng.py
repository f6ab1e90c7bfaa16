"""stress-ng ``--metrics`` / ``--metrics-brief`` tables and ``--yaml`` reports.

Text: the table header ``stressor  bogo ops real time usr time sys time bogo ops/s bogo
ops/s`` (newer versions add ``CPU used per instance (%)`` and ``RSS Max (KB)``), then one
row per stressor. Lines may carry the ``stress-ng: info:  [pid] `` or ``stress-ng: metrc:
[pid] `` prefix (0.15+ says ``metrc``), no prefix at all (older versions, or pasted), and
mail quoting. A row a mail client wrapped is joined with the next line when the two make
exactly one row, and refused otherwise. The columns come from the header, never from the
row length. YAML: the ``metrics:`` list, one entry per stressor. One record per stressor
(key ``stressor``); a file with two tables (before/after a patch) gives two trials.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import yaml

from ingest.parsers.base import Better, Measurement, ParseError, ParseResult, Record, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_PREFIX = re.compile(r"^\s*stress-ng:(?:\s+\w+:)?\s+(?:\[\d+\]\s?)?")
Column = tuple[str, str, Better]  # metric, unit, better

_BASE: tuple[Column, ...] = (
    ("bogo_ops", "count", "higher"),
    ("real_time_s", "s", "none"),
    ("usr_time_s", "s", "none"),
    ("sys_time_s", "s", "none"),
    ("bogo_ops_per_s_real", "bogo ops/s", "higher"),
    ("bogo_ops_per_s_usr_sys", "bogo ops/s", "higher"),
)
_CPU: Column = ("cpu_used_per_instance_pct", "%", "none")
_RSS: Column = ("rss_max_kb", "KB", "lower")
_YAML: dict[str, Column] = {
    "bogo-ops": _BASE[0],
    "wall-clock-time": _BASE[1],
    "user-time": _BASE[2],
    "system-time": _BASE[3],
    "bogo-ops-per-second-real-time": _BASE[4],
    "bogo-ops-per-second-usr-sys-time": _BASE[5],
    "cpu-usage-per-instance": _CPU,
    "max-rss": _RSS,
}
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")


def _columns(header: str) -> tuple[Column, ...]:
    columns = list(_BASE)
    if "CPU used per" in header:
        columns.append(_CPU)
    if "RSS Max" in header:
        columns.append(_RSS)
    return tuple(columns)


def _row(name: str, cells: list[str], columns: tuple[Column, ...], number: int) -> Record:
    values = [
        Measurement(metric, parse_number(cell, line=number, what=f"{name} {metric}"), unit, better)
        for cell, (metric, unit, better) in zip(cells, columns, strict=True)
    ]
    return Record(keys={"stressor": name}, line=number, measurements=tuple(values))


def _table(lines: list[tuple[int, str]], i: int, records: list[Record], warnings: list[str]) -> int:
    """Rows after the header at ``i - 1``; return the index after the table."""
    columns = _columns(lines[i - 1][1] + " " + (lines[i][1] if i < len(lines) else ""))
    if i < len(lines) and "(secs)" in lines[i][1]:
        i += 1
    while i < len(lines):
        number, text = lines[i]
        tokens = text.split()
        if len(tokens) < 2 or not _NUMBER.match(tokens[1]) or tokens[0][0].isdigit():
            if tokens[-2:] == ["miscellaneous", "metrics:"]:
                warnings.append(f"line {number}: stress-ng miscellaneous metrics not stored")
            return i
        cells = tokens[1:]
        if len(cells) < len(columns) and i + 1 < len(lines):
            rest = lines[i + 1][1].split()
            if (
                rest
                and all(_NUMBER.match(t) for t in rest)
                and len(cells) + len(rest) == len(columns)
            ):
                cells += rest
                i += 1
        if len(cells) != len(columns):
            raise ParseError(
                f"stress-ng row {tokens[0]!r} has {len(cells)} values; the header has "
                f"{len(columns)} columns (a mail-wrapped row?)",
                number,
            )
        records.append(_row(tokens[0], cells, columns, number))
        i += 1
    return i


def _text(text: str) -> tuple[list[Record], list[str]]:
    lines = [(n, _PREFIX.sub("", line).rstrip()) for n, line in numbered_lines(text)]
    records: list[Record] = []
    warnings: list[str] = []
    i = 0
    while i < len(lines):
        if re.match(r"^\s*stressor\s+bogo ops", lines[i][1]):
            i = _table(lines, i + 1, records, warnings)
        else:
            i += 1
    return records, warnings


def _yaml(text: str) -> tuple[list[Record], dict[str, str | int | float]]:
    try:
        data = yaml.load(text, Loader=yaml.BaseLoader)  # every scalar a string: exact numbers
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise ParseError(
            f"stress-ng YAML is malformed: {err}", mark.line + 1 if mark else None
        ) from None
    lines = [n for n, line in numbered_lines(text) if line.strip().startswith("- stressor:")]
    records = []
    for index, entry in enumerate(data.get("metrics") or []):
        line = lines[index] if index < len(lines) else None
        name = entry.get("stressor")
        if not name:
            raise ParseError("stress-ng YAML metrics entry without 'stressor'", line)
        values = [
            Measurement(
                metric, parse_number(str(entry[key]), line=line, what=f"{name} {key}"), unit, better
            )
            for key, (metric, unit, better) in _YAML.items()
            if key in entry
        ]
        records.append(Record(keys={"stressor": name}, line=line, measurements=tuple(values)))
    info = data.get("system-info") or {}
    metadata: dict[str, str | int | float] = {"format": "yaml"}
    for key in ("stress-ng-version", "release", "machine", "hostname", "cpus"):
        if key in info:
            metadata[key.replace("-", "_")] = str(info[key])
    return records, metadata


@register("stress-ng", "stress_ng")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    if re.search(r"^metrics:\s*$", text, re.MULTILINE) and "- stressor:" in text:
        records, metadata = _yaml(text)
        warnings: list[str] = []
    else:
        records, warnings = _text(text)
        metadata = {"format": "text"}
    if not records:
        raise ParseError(
            "no stress-ng metrics: no 'stressor  bogo ops ...' table (run with --metrics or "
            "--metrics-brief) and no YAML 'metrics:' list"
        )
    return ParseResult(records=tuple(records), warnings=tuple(warnings), metadata=metadata)

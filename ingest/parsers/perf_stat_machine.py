"""``perf stat -x,`` (CSV) and ``perf stat -j`` (JSON lines) for the ``perf-stat`` parser.

CSV field order (tools/perf/Documentation/perf-stat.txt, "CSV FORMAT"): [interval,] [CPU,]
value, unit, event, [variance%,] run time, enabled %, metric value, metric unit. The optional
leading fields are recognised by what they hold (``CPU<n>``, a time with decimals), the
variance by its ``%``. JSON lines carry the same facts by name. The derived metric columns
(``metric-value``/``metric-unit``, e.g. "CPUs utilized") are ratios perf computes from the
counts in the same output and are not stored; ``event-runtime`` is not stored either.
"""

from __future__ import annotations

import json
import re

from ingest.parsers.base import ParseError
from ingest.parsers.perf_stat_common import NOT_MEASURED, Reading, store_counter

_TIME = re.compile(r"^\s*\d+\.\d+\s*$")
_VALUE = re.compile(r"^\s*(?:\d[\d.]*|<not supported>|<not counted>)\s*$")


def sniff_machine(lines: list[tuple[int, str]]) -> str | None:
    """``json`` or ``csv`` when the first data line is one, else None (human output)."""
    for _, line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("{") and '"counter-value"' in stripped:
            return "json"
        if "Performance counter stats" in stripped:
            return None
        fields = stripped.split(",")
        if len(fields) >= 3 and (_VALUE.match(fields[0]) or fields[0].startswith("CPU")):
            return "csv"
        return None
    return None


def _csv_parts(fields: list[str], line: int) -> dict[str, str | None]:
    parts: dict[str, str | None] = {"time": None, "cpu": None}
    rest = list(fields)
    if len(rest) > 3 and _TIME.match(rest[0]):
        second = rest[1].strip()
        if second.startswith("CPU") or _VALUE.match(second):  # a unit is never a number
            parts["time"] = rest.pop(0).strip()
    if rest and rest[0].strip().startswith("CPU"):
        parts["cpu"] = rest.pop(0).strip()
    if len(rest) < 3:
        raise ParseError(
            f"perf stat CSV row has {len(fields)} fields; value, unit, event needed", line
        )
    parts["value"], parts["unit"], parts["event"] = (f.strip() for f in rest[:3])
    tail = rest[3:]
    if tail and tail[0].strip().endswith("%"):
        parts["spread"] = tail.pop(0).strip()[:-1]
    if len(tail) >= 2 and tail[1].strip():
        parts["running"] = tail[1].strip()
    if not parts["event"]:
        raise ParseError("perf stat CSV row has no event name (third field)", line)
    if not _VALUE.match(parts["value"] or ""):
        raise ParseError(f"perf stat CSV value {parts['value']!r} is not a count", line)
    return parts


def _json_parts(line_text: str, line: int) -> dict[str, str | None]:
    try:
        item = json.loads(line_text, parse_float=str, parse_int=str)  # numbers as printed
    except json.JSONDecodeError as err:
        raise ParseError(f"perf stat JSON line is not JSON ({err.msg})", line) from None
    if not isinstance(item, dict) or "counter-value" not in item or "event" not in item:
        raise ParseError("perf stat JSON line has no counter-value/event", line)
    value = str(item["counter-value"]).strip()
    if value not in NOT_MEASURED and not re.match(r"^\d+(?:\.\d+)?$", value):
        raise ParseError(f"perf stat JSON counter-value {value!r} is not a count", line)
    parts: dict[str, str | None] = {
        "value": value,
        "unit": str(item.get("unit", "")),
        "event": str(item["event"]),
        "cpu": str(item["cpu"]) if "cpu" in item else None,
        "time": _json_number(item.get("interval")),
        "spread": _json_number(item.get("variance")),
        "running": _json_number(item.get("pcnt-running")),
    }
    return parts


def _json_number(value: object) -> str | None:
    """JSON numbers are read as the text perf printed (``0.100172360`` keeps its digits)."""
    if value is None or isinstance(value, bool):
        return None
    return str(value)


def read_machine(reading: Reading, lines: list[tuple[int, str]], kind: str, separator: str) -> None:
    """Every CSV row or JSON line is one counter of the one output the file holds."""
    for number, line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if kind == "json":
            parts = _json_parts(stripped, number)
        else:
            parts = _csv_parts(stripped.split(separator), number)
        store_counter(reading, reading.current(number), parts, number)

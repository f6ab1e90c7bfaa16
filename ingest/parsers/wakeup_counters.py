"""Output of the try_to_wake_up() counter reader (seed 001, prestat.c).

prestat.c's real output was never published, so this format is ours (docs/parsers/
wakeup-counters.md): two ``key: value`` lines as Hartner's tables print them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ingest.parsers.base import Measurement, ParseError, ParseResult, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_LINE = re.compile(
    r"^\s*(?P<key>try_to_wake_up calls|priority preemptions)\s*[:=]\s*(?P<value>.*?)\s*$",
    re.IGNORECASE,
)
_VALUE = re.compile(r"^(?P<number>\S+?)\s*(?P<suffix>[KM%]?)$")


def _read(value: str, number: int, what: str) -> tuple[float, bool]:
    """The value, and whether it was a percentage."""
    match = _VALUE.match(value)
    if not match or not value:
        raise ParseError(f"{what} {value!r} is not a number", number)
    suffix = match.group("suffix")
    token = match.group("number") + (suffix if suffix in ("K", "M") else "")
    return parse_number(token, line=number, what=what, suffixes=True), suffix == "%"


def _collect(text: str) -> tuple[dict[str, tuple[float, bool, int]], list[str]]:
    found: dict[str, tuple[float, bool, int]] = {}
    warnings: list[str] = []
    for number, line in numbered_lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.match(line)
        if not match:
            warnings.append(f"line {number}: not a counter line, skipped: {stripped!r}")
            continue
        key = match.group("key").lower()
        if key in found:
            raise ParseError(f"{key!r} given twice (first on line {found[key][2]})", number)
        found[key] = (*_read(match.group("value"), number, key), number)
    return found, warnings


@register("wakeup-counters")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """wakeup_calls and priority_preemption_pct; a count of preemptions becomes a share."""
    found, warnings = _collect(text)
    if "try_to_wake_up calls" not in found:
        raise ParseError("no 'try_to_wake_up calls:' line")
    calls, calls_pct, line = found["try_to_wake_up calls"]
    if calls_pct:
        raise ParseError("try_to_wake_up calls must be a count, not a percentage", line)
    measurements = [Measurement("wakeup_calls", calls, "calls", "none")]
    if "priority preemptions" in found:
        value, is_pct, line = found["priority preemptions"]
        if not is_pct:
            if value > calls:
                raise ParseError(
                    f"priority preemptions {value:g} exceed try_to_wake_up calls {calls:g}", line
                )
            value = value / calls * 100 if calls else 0.0
        elif not 0 <= value <= 100:
            raise ParseError(f"priority preemptions {value:g} % is not a percentage", line)
        measurements.append(Measurement("priority_preemption_pct", value, "%", "none"))
    else:
        warnings.append("no 'priority preemptions:' line")
    return ParseResult(measurements=tuple(measurements), warnings=tuple(warnings))

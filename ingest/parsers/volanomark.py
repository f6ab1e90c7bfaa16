"""VolanoMark client summary (Mark.java printResults), raw or grep'd by a harness.

One file is one trial. Harness scripts grep the per-trial logs, so a line may carry a
``test-1.log:`` prefix; lines from several different prefixes mean several trials were pasted
into one file, which we refuse rather than silently merge.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ingest.parsers.base import Measurement, ParseError, ParseResult, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_KEYS = {
    "volanomark version": "version",
    "messages sent": "messages_sent",
    "messages received": "messages_received",
    "total messages": "messages_total",
    "elapsed time": "elapsed",
    "average throughput": "throughput",
}
_LINE = re.compile(
    r"^\s*(?:(?P<prefix>[^\s:=]+):\s*)?(?P<key>" + "|".join(_KEYS) + r")\s*(?P<op>[=<])\s*"
    r"(?P<rest>.*?)\s*$",
    re.IGNORECASE,
)
_BANNER = re.compile(r"Chat Server Benchmark Version (\S+)")
_ROOM = re.compile(r"Creating room number (\d+)")
_FAILED = re.compile(r"\bTest failed\b")
_UNITS = {
    "elapsed": re.compile(r"^(\S+)\s+seconds?$"),
    "throughput": re.compile(r"^(\S+)\s+messages per second$"),
}
_METRICS = {
    "throughput": ("msg/s", "higher"),
    "elapsed": ("s", "lower"),
    "messages_sent": ("messages", "none"),
    "messages_received": ("messages", "none"),
    "messages_total": ("messages", "none"),
}


@dataclass(frozen=True)
class _Found:
    name: str
    prefix: str
    op: str
    rest: str
    line: int


def _value(found: _Found) -> float:
    pattern = _UNITS.get(found.name)
    token = found.rest
    if pattern:
        match = pattern.match(found.rest)
        if not match:
            raise ParseError(f"cannot read {found.name} from {found.rest!r}", found.line)
        token = match.group(1)
    return parse_number(token, line=found.line, what=found.name)


def _collect(text: str) -> tuple[list[_Found], dict[str, str | int | float], list[str]]:
    found: list[_Found] = []
    metadata: dict[str, str | int | float] = {}
    warnings: list[str] = []
    for number, line in numbered_lines(text):
        if _FAILED.search(line):
            raise ParseError("the run failed ('Test failed.'): no result to record", number)
        match = _LINE.match(line)
        if match:
            name = _KEYS[" ".join(match.group("key").lower().split())]
            prefix = match.group("prefix") or ""
            found.append(_Found(name, prefix, match.group("op"), match.group("rest"), number))
            continue
        if banner := _BANNER.search(line):
            metadata.setdefault("volanomark_version", banner.group(1))
        if room := _ROOM.search(line):
            metadata["rooms"] = max(int(room.group(1)), int(metadata.get("rooms", 0)))
        if line.lstrip().startswith("Error "):
            warnings.append(f"line {number}: {line.strip()}")
    return found, metadata, warnings


def _one_trial(found: list[_Found]) -> dict[str, _Found]:
    prefixes = sorted({f.prefix for f in found if f.prefix})
    if len(prefixes) > 1:
        raise ParseError(
            f"lines from {len(prefixes)} trials ({', '.join(prefixes)}); give one file per trial",
            found[0].line,
        )
    by_name: dict[str, _Found] = {}
    for item in found:
        earlier = by_name.get(item.name)
        if earlier and (earlier.rest, earlier.op) != (item.rest, item.op):
            raise ParseError(
                f"{item.name} appears twice with different values (line {earlier.line}); "
                "give one file per trial",
                item.line,
            )
        by_name.setdefault(item.name, item)
    return by_name


def _checks(values: dict[str, float]) -> list[str]:
    warnings = []
    parts = ("messages_sent", "messages_received", "messages_total")
    if all(p in values for p in parts):
        sent, received, total = (values[p] for p in parts)
        if sent + received != total:
            warnings.append(
                f"total messages {total:g} is not sent + received ({sent:g} + {received:g})"
            )
    if all(k in values for k in ("messages_total", "elapsed", "throughput")) and values["elapsed"]:
        expected = values["messages_total"] / values["elapsed"]
        if abs(values["throughput"] - expected) > max(1.0, 0.01 * expected):
            warnings.append(
                f"throughput {values['throughput']:g} differs from total / elapsed "
                f"({expected:.0f}) by more than 1%"
            )
    return warnings


@register("volanomark")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """Read one trial's six summary lines; warn on what is missing or inconsistent."""
    found, metadata, warnings = _collect(text)
    if not found or all(f.name == "version" for f in found):
        raise ParseError("no VolanoMark summary found (no 'Average throughput =' line)")
    by_name = _one_trial(found)
    values: dict[str, float] = {}
    for name, item in by_name.items():
        if name == "version":
            metadata["volanomark_version"] = item.rest
        elif name == "elapsed" and item.op == "<":
            warnings.append(
                f"line {item.line}: elapsed time under 1 second; VolanoMark prints no throughput"
            )
        else:
            values[name] = _value(item)
    if "throughput" not in values and "elapsed" in values:
        warnings.append("no 'Average throughput' line")
    prefix = next((f.prefix for f in found if f.prefix), None)
    if prefix:
        metadata["trial_file"] = prefix
    warnings.extend(_checks(values))
    measurements = tuple(
        Measurement(name, values[name], *_METRICS[name])  # type: ignore[arg-type]
        for name in _METRICS
        if name in values
    )
    return ParseResult(measurements=measurements, warnings=tuple(warnings), metadata=metadata)

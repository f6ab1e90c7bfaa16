"""hackbench: rt-tests hackbench and the old hackbench.c (docs/parsers/hackbench.md).

Each ``Time:`` line is one run. Its keys are what the banner before it states: rt-tests
prints ``Running in process mode with 10 groups using 40 file descriptors each (== 400
tasks)`` and ``Each sender will pass 100 messages of 100 bytes``; the old hackbench.c prints
``Running with 10*40 (== 400) tasks.``. Runs with equal keys are trials (numbered by order by
the base module), never averaged; a mail's ``Giving an average of ...`` line is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ingest.parsers.base import KeyValue, Measurement, ParseError, ParseResult, Record, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_RT_BANNER = re.compile(
    r"^Running in (?P<mode>process|threaded) mode with (?P<groups>\d+) groups using "
    r"(?P<fds>\d+) file descriptors each \(== (?P<tasks>\d+) tasks\)"
)
_OLD_BANNER = re.compile(r"^Running with (?P<groups>\d+)\*(?P<fds>\d+) \(== (?P<tasks>\d+)\) tasks")
_MESSAGES = re.compile(r"^Each sender will pass (?P<loops>\d+) messages of (?P<size>\d+) bytes")
_TIME = re.compile(r"^Time:\s*(?P<value>\S+)\s*$")


def _banner(text: str) -> dict[str, KeyValue] | None:
    match = _RT_BANNER.match(text) or _OLD_BANNER.match(text)
    if not match:
        return None
    found = match.groupdict()
    keys: dict[str, KeyValue] = {"groups": int(found["groups"]), "fds": int(found["fds"])}
    if found.get("mode"):
        keys["mode"] = found["mode"]
    return keys


@register("hackbench")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    records: list[Record] = []
    keys: dict[str, KeyValue] | None = None
    banner_line: int | None = None
    for number, line in numbered_lines(text):
        stripped = line.strip()
        if (found := _banner(stripped)) is not None:
            if keys is not None:
                raise ParseError(
                    "hackbench run has no 'Time:' line before the next run", banner_line
                )
            keys, banner_line = found, number
            continue
        if (match := _MESSAGES.match(stripped)) and keys is not None:
            keys["loops"] = int(match["loops"])
            keys["message_size"] = int(match["size"])
            continue
        if match := _TIME.match(stripped):
            if keys is None:
                raise ParseError(
                    "hackbench Time: line without a 'Running ...' banner before it", number
                )
            value = parse_number(match["value"], line=number, what="hackbench time")
            records.append(
                Record(
                    keys=dict(keys),
                    line=banner_line,
                    measurements=(Measurement("time_s", value, "s", "lower"),),
                )
            )
            keys = None  # the next run prints its own banner
            continue
        if stripped.startswith(("Error", "hackbench: ", "Killed")):
            raise ParseError(f"hackbench failed: {stripped!r}", number)
    if keys is not None:
        raise ParseError("hackbench run has no 'Time:' line (output cut short?)", banner_line)
    if not records:
        raise ParseError("no hackbench 'Time:' line")
    return ParseResult(records=tuple(records))

"""fio results: JSON / JSON+, terse (v3-v5) and normal text output (docs/parsers/fio.md).

One parser name, three layouts: the layout is recognised from the file (a ``{`` line starts
JSON, a ``3;fio-...`` line is terse, ``IOPS=`` lines are normal output). Every layout gives
the same records, keyed ``job`` and ``direction`` (``host`` too for client/server runs), with
one unit per metric whatever fio printed: bandwidth in KiB/s, latencies in microseconds. The
conversions are Decimal-exact, so ``clat_ns`` mean 83205.880149 is exactly 83.205880149 us.
This module recognises the layout; each layout has its own module, and what they share is
in fio_common.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ingest.parsers.base import ParseError, ParseResult, register


def detect(text: str) -> str:
    """Which layout a file is: 'json', 'terse' or 'normal'."""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("{"):
            return "json"
        if re.match(r"^[2-5];(?:fio-[^;]*;)?", line) and line.count(";") > 40:
            return "terse"
        if re.search(r"\b(?:read|write|trim|mixed)\s*: (?:IOPS|io)=", line):
            return "normal"
    raise ParseError(
        "not fio output: no JSON object, no terse line and no 'read: IOPS=' / 'write: IOPS=' line"
    )


@register("fio")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    layout = detect(text)
    if layout == "json":
        from ingest.parsers.fio_json import parse_json

        return parse_json(text)
    if layout == "terse":
        from ingest.parsers.fio_terse import parse_terse

        return parse_terse(text)
    from ingest.parsers.fio_normal import parse_normal

    return parse_normal(text)

"""sysstat's sar, iostat and mpstat (text) and ``sadf -j`` (JSON), see docs/parsers/sysstat.md.

All three tools print time series in blocks: a header row naming the columns, a row per
interval (and per CPU, device or interface), ``Average:`` rows at the end. A record is one
(report, CPU/device/interface) series, so the same thing measured twice (two sar runs in one
mail) groups as trials. This module registers the parsers and picks the reader; what the
text and JSON readers share is in sysstat_common.py.
"""

from __future__ import annotations

from collections.abc import Mapping

from ingest.parsers import sysstat_json, sysstat_text
from ingest.parsers.base import ParseResult, register


def _dispatch(source: str, text: str, options: Mapping[str, object]) -> ParseResult:
    if text.lstrip().startswith("{"):
        return sysstat_json.parse_json(text, source)
    return sysstat_text.parse_text(text, source, options)


@register("sar", "sadf")
def parse_sar(text: str, options: Mapping[str, object]) -> ParseResult:
    """sar text output, or the JSON document of ``sadf -j``."""
    return _dispatch("sar", text, options)


@register("iostat")
def parse_iostat(text: str, options: Mapping[str, object]) -> ParseResult:
    """iostat text output; the first report after the banner is flagged as since boot."""
    return _dispatch("iostat", text, options)


@register("mpstat")
def parse_mpstat(text: str, options: Mapping[str, object]) -> ParseResult:
    return _dispatch("mpstat", text, options)

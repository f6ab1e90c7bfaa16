"""Pre-normalization of pasted text before any parser reads it (REPORT.md section 9)."""

from __future__ import annotations

import re

_QUOTE = re.compile(r"^(?:[A-Za-z]{0,3}>\s?)+")


def strip_mail_quotes(line: str) -> str:
    """Remove mail quoting such as ``> ``, ``>> `` or ``KP> `` from the start of a line."""
    if ">" not in line:  # no quote possible: skip the regex (a 1M-sample vmstat has 60k lines)
        return line
    return _QUOTE.sub("", line, count=1)


def numbered_lines(text: str, *, unquote: bool = True) -> list[tuple[int, str]]:
    """Split text into (1-based line number, line) pairs, CRs removed, mail quotes stripped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        out.append((number, strip_mail_quotes(line) if unquote else line))
    return out


_MAIL_HEADER = re.compile(r"^(?:From |[A-Za-z][A-Za-z0-9-]*: |\s+\S)")


def skip_mail_header(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Drop a mail's header block (``Received:``, ``Subject:`` ...) up to its blank line."""
    if not lines or not re.match(r"^(?:From |[A-Za-z][A-Za-z0-9-]*: )", lines[0][1]):
        return lines
    for i, (_, text) in enumerate(lines):
        if not text.strip():
            return lines[i:]
        if not _MAIL_HEADER.match(text):
            return lines
    return lines

"""Pre-normalization of pasted text before any parser reads it (REPORT.md section 9)."""

from __future__ import annotations

import re

_QUOTE = re.compile(r"^(?:[A-Za-z]{0,3}>\s?)+")


def strip_mail_quotes(line: str) -> str:
    """Remove mail quoting such as ``> ``, ``>> `` or ``KP> `` from the start of a line."""
    return _QUOTE.sub("", line, count=1)


def numbered_lines(text: str, *, unquote: bool = True) -> list[tuple[int, str]]:
    """Split text into (1-based line number, line) pairs, CRs removed, mail quotes stripped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        out.append((number, strip_mail_quotes(line) if unquote else line))
    return out

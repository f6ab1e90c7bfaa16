"""Kernel labels that logs and mails state before their runs (dbench, time, kernbench).

Shared by ``dbench.py`` and ``gnutime.py``; not a parser. A label is only ever read from a
line whose whole shape says "this is the kernel the next runs used", in the shapes seen in
real samples (tests/fixtures/formats/{dbench,time}): ``Kernel: 3.7.0-rc3-vanilla-default``
(also ``kernel 2.6.0-test9``), ``2.4.0-prerelease-ac4: average 11.4729 MB/sec`` (a label
and a colon; the rest is ignored with a warning) and a bare ``uname -r`` line
(``2.6.23-rc2-mm2-mem-v6``). Prose that merely mentions a version is never a label.
``Linux version ...``, ``uname -a`` and ``==> file <==`` banners are not read: no sample of
them before results was found, and a guessed shape could mislabel runs.

A label's scope ends at the next label, where the mail quote depth changes (a quoted
paragraph is another author's text: LKML replies quote an earlier result list with ``>>``
before their own runs), and, for parsers that ask (time), at a new prose paragraph once the
label has labelled a run (a mail moving on to "ebizzy on top of rc2-mm2 ... gave this").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.parsers.base import Record, group_records

# 2.4.7-ac3, 2.6.0-test9-mm2, 3.7.0-rc3-vanilla-default, 2.5.70, v6.1-rc2; three components
# or a suffix, so that "1.00" or "10.5" in a table is never taken for a kernel.
KERNEL = r"v?\d{1,2}\.\d{1,3}(?:\.\d{1,3})+(?:-[\w.+~-]+)?|v?\d{1,2}\.\d{1,3}-[\w.+~-]+"
_WITH_REST = (
    re.compile(rf"^kernel\s*:?\s+(?P<label>{KERNEL})(?P<rest>.*)$", re.IGNORECASE),
    re.compile(rf"^(?P<label>{KERNEL}):(?P<rest>.*)$"),
)
_EXACT = (re.compile(rf"^(?P<label>{KERNEL})$"),)
_QUOTE = re.compile(r"^(?:[A-Za-z]{0,3}>\s?)+")
_WORD = re.compile(r"\b[A-Za-z]{2,}\b")


def kernel_label(line: str) -> tuple[str, str] | None:
    """(label, ignored rest of the line) when the line states a kernel label, else None."""
    stripped = line.strip()
    for pattern in _WITH_REST:
        if match := pattern.match(stripped):
            return match["label"], match["rest"].strip()
    for pattern in _EXACT:
        if match := pattern.match(stripped):
            return match["label"], ""
    return None


def quote_depth(raw_line: str) -> int:
    """How many mail quote levels (``>``) start the unstripped line."""
    match = _QUOTE.match(raw_line)
    return match.group(0).count(">") if match else 0


@dataclass
class LabelScope:
    """The label in force at each line; call :meth:`read` on every line in order."""

    label: str | None = None
    depth: int = 0
    seen_any: bool = False
    used: bool = False  # a record was taken under the current label

    def read(self, raw_line: str, line: str, number: int, warnings: list[str]) -> bool:
        """Track quote depth and label lines; True when this line was a label line."""
        depth = quote_depth(raw_line)
        if depth != self.depth and line.strip():
            self.depth = depth
            self.label = None
        found = kernel_label(line)
        if found is None:
            return False
        self.label, rest = found
        self.seen_any = True
        self.used = False
        if rest:
            warnings.append(f"line {number}: text after the label {self.label!r} ignored: {rest!r}")
        return True

    def prose_break(self, line: str, after_blank: bool) -> bool:
        """End a used label at a new prose paragraph (``ebizzy on top of rc2-mm2 gave this``).

        Mails move on to other tests under headings and prose; a label that already labelled
        its runs must not reach runs described only in the prose below it. True when the
        label was dropped here.
        """
        if self.label is None or not self.used or not after_blank:
            return False
        if len(_WORD.findall(line)) < 4:
            return False
        self.label = None
        return True

    def changed_depth(self, raw_line: str, line: str) -> bool:
        """True when this line starts another quote level (a new author's text)."""
        return bool(line.strip()) and quote_depth(raw_line) != self.depth


def warn_unlabelled_repeats(records: list[Record], scope: LabelScope, warnings: list[str]) -> None:
    """Repeats are trials; say so when nothing in the file tells kernels apart."""
    if scope.seen_any:
        return
    repeats = [
        f"{group.describe()} (lines {', '.join(str(r.line) for _, r in group.trials)})"
        for group in group_records(records)
        if len(group.trials) > 1
    ]
    if repeats:
        warnings.append(
            "runs with equal keys are stored as trials of one run: "
            + "; ".join(repeats)
            + ". The file states no kernel label: if they ran on different kernels, split it"
        )

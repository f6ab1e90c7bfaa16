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
from collections.abc import Callable
from dataclasses import dataclass, replace

from ingest.parsers.base import Record, group_records

# 2.4.7-ac3, 2.6.0-test9-mm2, 3.7.0-rc3-vanilla-default, 2.5.70, v6.1-rc2; three components
# or a suffix, so that "1.00" or "10.5" in a table is never taken for a kernel.
KERNEL = r"v?\d{1,2}\.\d{1,3}(?:\.\d{1,3})+(?:-[\w.+~-]+)?|v?\d{1,2}\.\d{1,3}-[\w.+~-]+"
_WITH_REST = (
    re.compile(rf"^kernel\s*:?\s+(?P<label>{KERNEL})(?P<rest>.*)$", re.IGNORECASE),
    re.compile(rf"^(?P<label>{KERNEL}):(?P<rest>.*)$"),
)
# ``kernel: staircase6.2`` (OSDL STP reports) names a build that is no version number.
_EXACT = (re.compile(rf"^(?P<label>{KERNEL})$"), re.compile(r"^kernel:\s+(?P<label>[\w.+~-]+)$"))
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


# --- Headings: prose lines that name what a block measured -------------------------------
# Mails put a line such as "With atomic_t:", "before:", "vmstat (2.4.20aa1)", "Container
# limited to 800 MB" (over a dashed rule) or an attachment's file name right above a block;
# two blocks distinguished only by it must never be merged as trials of one run.

_RULE = re.compile(r"^\s*[-=_*~]{3,}\s*$")
_ATTRIBUTION = re.compile(
    r"(?:\bwrote|\bwrites|\bsaid)\s*:\s*$|^quoting\b|^on .*,.*\bwrote\b", re.IGNORECASE
)
_MIME_NAME = re.compile(r'^\s*(?:file)?name="(?P<name>[^"]+)"\s*;?\s*$')
_KEY_VALUE = re.compile(r":\s*\S")
_HEADING_WORDS = 8
_TITLE_WORDS = 12  # a line ending with ":" or over a rule
_DIRECT_WORDS = 6  # a line right above the block ("before", "dbench 32 + renice artsd -20")
_DECORATION = re.compile(r"^[*=#~]{2,}\s*|\s*[*=#~]{2,}$")
_SENTENCE = re.compile(r"[.!?]$|[:;]-?\)")
_HEADING_CHARS = 72


@dataclass(frozen=True)
class Heading:
    """A heading line in force for a block: its text, line, and the section above it."""

    text: str
    line: int
    parent: str | None = None
    kernel: str | None = None  # a kernel label line nearer the block than ``text``


def is_kernel(text: str) -> bool:
    """True when the whole text is a kernel label (``2.4.24``, ``2.6.0-test9-mm2``)."""
    found = kernel_label(text)
    return found is not None and not found[1]


def _clean(text: str) -> str:
    return text.strip().rstrip(":-–— \t").strip()


def _blank(lines: list[tuple[int, str]], i: int) -> bool:
    return i < 0 or i >= len(lines) or not lines[i][1].strip()


def _unwrapped(lines: list[tuple[int, str]], i: int, raw: str) -> str:
    """A title the mail client wrapped: a lower-case start continues the line above."""
    above = lines[i - 1][1].strip() if i > 0 else ""
    if raw[:1].islower() and above and not _RULE.match(above) and above[-1] not in ".!?:":
        return f"{above} {raw}"
    return raw


def _next_text(lines: list[tuple[int, str]], i: int) -> int | None:
    """Index of the next line with text after i, skipping blank lines."""
    j = i + 1
    while j < len(lines) and not lines[j][1].strip():
        j += 1
    return j if j < len(lines) else None


def heading_text(lines: list[tuple[int, str]], i: int, block_start: int) -> str | None:
    """The heading a line states, or None: the shapes of module notes above.

    A heading is short (at most eight words) and is one of: a line ending with a colon (not a
    ``key: value`` line, not a mail attribution), a line over a dashed rule, a MIME part's
    file name, a kernel label line, or a short line standing alone in its paragraph or
    directly above the block. Bullets naming a tool (``- vmstat``) are not headings.
    """
    raw = _DECORATION.sub("", lines[i][1].strip())  # "***** With atomic_long_t"
    if not raw or _RULE.match(lines[i][1]) or _ATTRIBUTION.search(raw):
        return None
    if mime := _MIME_NAME.match(raw):
        return mime["name"]
    if is_kernel(raw):
        return raw
    nxt = _next_text(lines, i)
    ruled = nxt is not None and nxt == i + 1 and bool(_RULE.match(lines[nxt][1]))
    titled = raw.endswith(":") or ruled  # a strong sign: allow a longer title
    words = _TITLE_WORDS if titled else _HEADING_WORDS
    if len(raw.split()) > words or len(raw) > _HEADING_CHARS:
        return None
    if re.match(r"^(?:[-*+] |[$#>|])", raw) and not raw.endswith(":"):
        return None  # a bullet naming the tool ("- vmstat"), a prompt, a quote
    if _KEY_VALUE.search(raw.rstrip(":")):
        return None  # "Host: stp8-002", "make: Leaving directory ...": a statement, not a title
    if raw.endswith(":") or ruled:
        return _clean(_unwrapped(lines, i, raw))
    if _SENTENCE.search(raw):
        return None  # "Good point.", "Writing this during dbench 32 ...:-)))": prose
    if _blank(lines, i - 1) and (_blank(lines, i + 1) or i + 1 == block_start):
        return _clean(raw)
    if i + 1 == block_start and len(raw.split()) <= _DIRECT_WORDS:
        return _clean(raw)
    return None


def _parent(
    lines: list[tuple[int, str]], i: int, skip: Callable[[str], bool] | None
) -> str | None:
    """The section heading above line i: a heading directly followed by another heading."""

    def own(k: int) -> bool:
        return skip is not None and skip(lines[k][1])

    for j in range(i - 1, -1, -1):
        text = None if own(j) else heading_text(lines, j, -1)
        if text is None or is_kernel(text):
            continue
        nxt = _next_text(lines, j)
        while nxt is not None and _RULE.match(lines[nxt][1]):
            nxt = _next_text(lines, nxt)
        if nxt is not None and not own(nxt) and heading_text(lines, nxt, -1) is not None:
            return text
    return None


def block_headings(
    lines: list[tuple[int, str]],
    starts: list[int],
    skip: Callable[[str], bool] | None = None,
) -> dict[int, Heading | None]:
    """The heading in force at each block start (1-based line numbers).

    The nearest heading between the previous block and this one; a block with none there
    continues the heading of the block before it (one listing printed in several parts).
    ``skip`` names the parser's own lines (``Average Half load -j 4 Run:``, section titles),
    which are never headings.
    """
    index = {number: k for k, (number, _) in enumerate(lines)}
    found: dict[int, Heading | None] = {}
    previous, current = -1, None
    for start in sorted(set(starts)):
        at = index.get(start, 0)
        while skip is not None and at - 1 > previous and skip(lines[at - 1][1]):
            at -= 1  # the block's own lines above its first value (a timed program's output)
        kernel, kernel_line = None, 0
        for k in range(at - 1, previous, -1):
            if skip is not None and skip(lines[k][1]):
                continue
            text = heading_text(lines, k, at)
            if text and is_kernel(text) and kernel is None:
                kernel, kernel_line = text, lines[k][0]  # "Kernel 2.6.16" under "***** With
                continue  # atomic_long_t" (both sections say it): the title above tells apart
            if text:
                current = Heading(text, lines[k][0], _parent(lines, k, skip), kernel)
                break
        else:
            if kernel is not None:
                current = Heading(kernel, kernel_line, None, kernel)
        found[start] = current
        previous = index.get(start, 0)
    return found


def key_by_headings(
    records: list[Record],
    lines: list[tuple[int, str]],
    warnings: list[str],
    *,
    starts: list[int] | None = None,
    skip: Callable[[str], bool] | None = None,
    label_always: bool = False,
) -> list[Record]:
    """Tell apart records whose keys are equal but whose blocks sit under other headings.

    Only where records would otherwise be trials of one group (or always for kernel-label
    headings when ``label_always``) is the heading added as a key: ``label`` when it reads
    as a kernel (``2.4.24``), else ``heading`` (``before``, ``With atomic_t``). When two
    blocks share a heading under different sections (``single dd: before`` and ``9 copies:
    before``), the section is prefixed. Never merges, never averages.
    """
    if not records:
        return records
    block_start = starts or [r.line or 0 for r in records]
    at = block_headings(lines, block_start, skip)
    heads = [at.get(s) for s in block_start]
    clash, need_parent = False, False
    position = {id(r): k for k, r in enumerate(records)}
    for group in group_records(records):
        members = [heads[position[id(r)]] for _, r in group.trials]
        leaves = {h.text if h else None for h in members}
        if len(leaves) > 1:
            clash = True
        full = {(h.parent, h.text) if h else None for h in members}
        if len(full) > len(leaves):
            clash = need_parent = True
    out = []
    for record, head in zip(records, heads, strict=True):
        keys = dict(record.keys)
        if head is not None:
            name = head.text
            if need_parent and head.parent:
                name = f"{head.parent}: {head.text}"
            kernel = name if is_kernel(name) else head.kernel
            if kernel and "label" not in keys and (label_always or clash and kernel == name):
                found = kernel_label(kernel)
                keys["label"] = found[0] if found else kernel
            if name == kernel or name == keys.get("label"):
                pass
            elif clash and "heading" not in keys:
                keys["heading"] = name
        out.append(replace(record, keys=keys) if keys != dict(record.keys) else record)
    if clash:
        named = sorted({(h.line, h.text) for h in heads if h is not None})
        warnings.append(
            "runs with equal keys told apart by the heading above each block: "
            + ", ".join(f"line {line} {text!r}" for line, text in named)
        )
    return out

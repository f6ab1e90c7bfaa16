"""The line grammar of mmtests comparison tables, and how a header names its columns.

compare-kernels.sh (through compare-mmtests.pl, bin/lib/MMTests/Compare.pm) prints a table as
a two-line header and one row per statistic and parameter:

    hackbench-process-pipes
                               hackbench              hackbench
                                 default                    pan
    Amean     256     24.4604 (   0.00%)     24.0353 *   1.74%*

Each kernel column is a value and its difference from the first (base) column, ``(x%)``, or
``*x%*`` when the difference is significant. The header prints each test name split at its
first dash (kept whole for ``-rcN``): line one the part before, line two the rest; a name with
no dash prints as itself less its last letter over itself. Monitors print rows of plain
numbers: ``Duration User 25810.02 25158.93`` and ``Ops Minor Faults 1883340576.00 ...``.

This module reads single lines and header lines; :mod:`ingest.parsers.mmtests` builds tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUM = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|-?nan|-?NaN|-?inf"
_PCT = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)|-?nan|-?NaN|-?inf"
# One kernel's cell: its value and the difference from the base, ``( 1.74%)`` or ``*1.74%*``.
CELL = re.compile(rf"(?P<value>{_NUM})\s*(?P<open>[(*])\s*(?P<pct>{_PCT})%\s*(?P<close>[)*])")
_CELLS = rf"(?:(?:{_NUM})\s*[(*]\s*(?:{_PCT})%\s*[)*]\s*)+"
# ``Amean     fault-base-1      605.84 (   0.00%)      599.92 *   0.98%*``
COMPARE_ROW = re.compile(rf"^(?P<stat>\S+)\s+(?P<param>\S(?:.*?\S)??)\s+(?P<cells>{_CELLS})$")
CELLS_ONLY = re.compile(rf"^\s*{_CELLS}$")  # the tail of a row a mail client wrapped
NUMBER = re.compile(rf"(?<!\S)(?:{_NUM})(?!\S)")
NUMBERS_ONLY = re.compile(rf"^\s*(?:{_NUM})(?:\s+(?:{_NUM}))*\s*$")
# ``Duration User  25810.02  25158.93``; older mmtests printed ``User`` alone.
DURATION_ROW = re.compile(
    rf"^(?:Duration\s+)?(?P<name>User|System|Elapsed)\s+(?P<nums>(?:{_NUM})(?:\s+(?:{_NUM}))*)\s*$"
)
# ``Ops NUMA hint local faults %   15371.00   214570.00``
OPS_ROW = re.compile(
    rf"^Ops\s+(?P<name>\S(?:.*?\S)??)\s+(?P<nums>(?:{_NUM})(?:\s+(?:{_NUM}))*)\s*$"
)
OPS_CELL_ROW = re.compile(rf"^Ops\s+(?P<name>\S(?:.*?\S)??)\s+(?P<cells>{_CELLS})$")

# The statistics mmtests names (bin/lib/MMTests/Stat.pm stat_names, older releases' Mean,
# Coeff, Max-90%, Best99%Amean): a line starting with one and holding a ``x%)`` cell is a
# table row, and one that does not read as a row is an error, not prose.
STATISTIC = re.compile(
    r"^(?:Min|Max|Amean|Hmean|Gmean|Mean|Stddev|HStddev|CoeffVar|HCoeffVar|Coeff"
    r"|B[AHG]mean|[AH]meanCI|Sub[AH]mean|Pctile|Samples|Percentage|Best\d+%?[AHG]mean"
    r"|\d(?:st|nd|rd|th)-qrtle)(?:[-.]?[\w.%-]*)$"
)
# Ratio tables (compare-mmtests.pl --print-ratio) print ratios and geometric means of ratios:
# derived from other tables, and their ``( +0.00s)`` cells are no kernel's value.
RATIO_PREFIX = ("Ratio", "Dmean", "Dmin", "Dmax")
NAN = {"nan", "-nan", "NaN", "-NaN", "inf", "-inf"}


def is_statistic(token: str) -> bool:
    return bool(STATISTIC.match(token))


def looks_like_row(text: str) -> bool:
    """A line a reader would take for a comparison row: a statistic, a parameter, cells."""
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    return is_statistic(first) and bool(re.search(r"%\s*[)*]", text))


@dataclass(frozen=True, slots=True)
class Token:
    start: int
    end: int
    text: str


def tokens(text: str) -> list[Token]:
    return [Token(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", text)]


def cell_edges(text: str) -> list[int]:
    """Where each kernel's cell of a printed row ends: the header prints each kernel's name
    right-aligned in a field of the same width, so a name that fits ends there too."""
    return [m.end() for m in CELL.finditer(text)]


def number_edges(text: str) -> list[int]:
    return [m.end() for m in NUMBER.finditer(text)]


def is_underline(text: str) -> bool:
    return bool(re.fullmatch(r"\s*[-=~_*#]{3,}\s*", text))


def is_header_like(text: str) -> bool:
    """A header line is indented (its left part is over the row labels) or spaced like
    columns; a heading (``netperf-udp``, ``2-socket CascadeLake``) starts at the margin."""
    return text[:1].isspace() or bool(re.search(r"\S {3,}\S", text.rstrip()))


def split_known(text: str, known: frozenset[str]) -> list[list[str]]:
    """Every way to read ``text`` as names of ``known`` printed one after another: mmtests
    prints a name wider than its field in full, so two long names can touch."""
    ways: list[list[str]] = []

    def walk(rest: str, taken: list[str]) -> None:
        if len(ways) > 1:
            return  # two readings: ambiguous, no need for more
        if not rest:
            ways.append(taken)
            return
        for name in known:
            if rest.startswith(name):
                walk(rest[len(name) :], [*taken, name])

    walk(text, [])
    return ways


def _by_known_names(line: list[Token], n: int, known: frozenset[str]) -> list[str] | None:
    names: list[str] = []
    for token in line:
        if token.text in known:
            names.append(token.text)
            continue
        ways = split_known(token.text, known)
        if len(ways) != 1:
            return None
        names.extend(ways[0])
    return names if len(names) == n else None


def _by_position(line: list[Token], edges: list[int], width: int, cut: bool) -> list[str] | None:
    """Names placed under the columns whose field they end in.

    More words than kernels (``good + series``, a word over the row labels) are joined per
    column. With fewer words than kernels (``cut``), a word running over a column's edge is cut
    there when its left part is shorter than the field: it was printed right-aligned and ends
    at the edge, and the next name, too long for its field, follows without a space. A name
    that filled its field may itself have overflowed, and cutting it would be a guess.
    """
    n = len(edges)
    first = edges[0] - width
    pieces: list[Token] = []
    for token in line:
        start = token.start
        for edge in edges[:-1] if cut else ():
            if start < edge < token.end:
                if edge - start >= width:
                    return None
                pieces.append(
                    Token(start, edge, token.text[start - token.start : edge - token.start])
                )
                start = edge
                break  # the rest overflowed its field: its own end is no edge
        pieces.append(Token(start, token.end, token.text[start - token.start :]))
    if cut:  # names pushed right by an overflow no longer end at their edges: count them
        named = [p.text for p in pieces if p.end > first]
        return named if len(named) == n else None
    columns: list[list[str]] = [[] for _ in range(n)]
    last = -1
    for piece in pieces:
        if piece.end <= first:
            continue  # over the statistic and parameter: a word such as ``kernel``
        column = next((j for j, edge in enumerate(edges) if piece.end <= edge), n - 1)
        if column < last:
            return None
        last = column
        columns[column].append(piece.text)
    if not all(columns):
        return None
    return [" ".join(words) for words in columns]


def line_names(
    line: list[Token], edges: list[int], width: int, known: frozenset[str]
) -> list[str] | None:
    """The column names one header line prints, or None when they cannot be told apart."""
    n = len(edges)
    if len(line) == n:
        return [t.text for t in line]
    if len(line) < n:
        return _by_known_names(line, n, known) or _by_position(line, edges, width, cut=True)
    return _by_position(line, edges, width, cut=False)


def join_lines(first: str, second: str) -> str:
    """A test name from its two header lines: mmtests split it at its first dash, or printed
    a dashless name less its last letter over the whole name."""
    if second.startswith(first) and len(second) == len(first) + 1:
        return second
    return f"{first}-{second}"

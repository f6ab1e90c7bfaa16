"""Runs of plain numeric rows found and read in C code (numpy), not token by token in Python.

A million-sample vmstat log is 62,500 lines of nothing but digit counts; splitting each line
and calling ``float`` on each token was most of its parse. This module looks at the whole
text at once (numpy over its bytes) and marks the lines that are provably plain: only ASCII
digits, spaces and tabs, every token at most 15 digits. Such a token is an integer below
10**15 < 2**53, which every correct decimal reader turns into the same double, exactly, so
reading a run of such lines with ``numpy.loadtxt`` stores what ``float(token)`` stores, bit
for bit. Anything else (a sign, a dot, an exponent, a longer count, a comma, a non-ASCII
digit, any other whitespace, a ``>`` quote) is not plain: the parser's exact per-token path
reads that line, so the number grammar is the parser's own and never wider.
"""

from __future__ import annotations

import numpy as np

# Tokens of at most this many digits are below 2**53: exact as doubles, whatever reads them.
MAX_DIGITS = 15


def split_lines(text: str) -> list[str]:
    """The lines as ingest.parsers.text.numbered_lines cuts them (CR LF and lone CR end a
    line), before any mail quote is stripped."""
    if "\r" not in text:  # the usual file: no need for two passes copying it
        return text.split("\n")
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


# Lines looked at per numpy pass: each pass's arrays stay small (~40 kB of vmstat text), so
# they are the allocator's reused memory, not fresh pages mapped and faulted in for every
# upload (a 100k-sample log looked at whole made a dozen 363 kB arrays and one of 1.6 MB:
# 1,000 page faults, more CPU than the passes themselves). Lines are independent: the same
# counts whatever the chunking.
CHUNK_LINES = 512


class PlainRows:
    """For each line of ``"\\n".join(lines)``: its token count if it is a plain row, else 0,
    and where the run of lines with that same count ends."""

    def __init__(self, lines: list[str]) -> None:
        counts = np.concatenate(
            [_counts(lines[i : i + CHUNK_LINES]) for i in range(0, len(lines), CHUNK_LINES)]
        )
        changes = np.flatnonzero(counts[1:] != counts[:-1]) + 1
        run_ends = np.append(changes, len(lines))
        self.counts: list[int] = counts.tolist()
        self.run_end: list[int] = np.repeat(run_ends, np.diff(run_ends, prepend=0)).tolist()

    def block_end(self, i: int, width: int) -> int:
        """The end (exclusive) of the plain rows of ``width`` tokens starting at line index
        ``i``; ``i`` itself when line ``i`` is not one."""
        if width <= 0 or self.counts[i] != width:
            return i
        return self.run_end[i]


def _counts(lines: list[str]) -> np.ndarray:
    """Each line's token count if it is a plain row, else 0 (see PlainRows)."""
    data = np.frombuffer("\n".join(lines).encode("utf-8", "replace"), dtype=np.uint8)
    newlines = np.flatnonzero(data == ord("\n"))
    digit = (data - np.uint8(ord("0"))) < 10
    edge = np.diff(digit.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    bounds = np.flatnonzero(edge)  # each run's start (+1), then its end (-1), in turn
    starts, ends = bounds[0::2], bounds[1::2]
    other = ~(digit | (data == ord(" ")) | (data == ord("\t")) | (data == ord("\n")))

    def per_line(positions: np.ndarray) -> np.ndarray:
        """How many of these (sorted) byte positions each line holds."""
        return np.diff(np.searchsorted(positions, newlines), prepend=0, append=len(positions))

    counts = per_line(starts)
    counts[(per_line(np.flatnonzero(other)) > 0)] = 0
    counts[(per_line(starts[(ends - starts) > MAX_DIGITS]) > 0)] = 0
    return counts


def read_block(lines: list[str], start: int, end: int, width: int) -> np.ndarray:
    """Lines ``start:end`` (plain rows of ``width`` tokens, see PlainRows) as a rows x width
    array of integers, each below 2**53: as a double (``astype(np.float64)``) exactly the
    double float(token) gives. Left as integers here: numpy's integer reader is the cheaper
    one, and the caller converts each column as it takes it (no whole second array)."""
    values = np.loadtxt(lines[start:end], dtype=np.int64, ndmin=2, comments=None)
    if values.shape != (end - start, width):  # cannot happen for rows PlainRows marked
        raise AssertionError(f"plain rows read as {values.shape}, not {(end - start, width)}")
    return values

"""The vmstat parser reading plain rows in blocks (ingest/parsers/plain_rows.py) stores what the
parser before it stored (tests/ingest/parsers/vmstat_reference.py), bit for bit, and refuses
what it refused with the same message on the same line: over every file of the format
fixtures and the corpus, the bench's generated log, and generated awkward inputs."""

from __future__ import annotations

import dataclasses
import random
import struct
from pathlib import Path

import numpy as np
import pytest

from ingest.parsers import ParseError, get_parser
from ingest.parsers.base import finite_only
from ingest.parsers.plain_rows import MAX_DIGITS, PlainRows, read_block, split_lines
from tests.ingest.parsers import vmstat_reference

TESTS = Path(__file__).resolve().parents[2]
FILES = sorted(
    p
    for p in [
        *(TESTS / "fixtures" / "formats").rglob("*"),
        *(TESTS / "ingest" / "corpus").rglob("*"),
    ]
    if p.is_file() and p.suffix not in {".py", ".pyc"}  # every data file, not only vmstat's
)
OPTIONS = ({}, {"first_row_since_boot": False})
parse = get_parser("vmstat")


def exact(value: object) -> object:
    """A parse's outcome with every float as its 8 bytes (so -0.0 != 0.0, and nan == nan)."""
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (type(value).__name__, tuple(exact(getattr(value, f.name)) for f in fields))
    if isinstance(value, tuple | list):
        return tuple(exact(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, exact(v)) for k, v in value.items()))
    return value


def outcome(parser, text: str, options: dict) -> object:
    try:
        return exact(parser(text, options))
    except ParseError as exc:
        return ("refused", exc.message, exc.line)


# The parser before the block reader, behind the same rule every registered parser now is
# (no number that is not finite is handed on: ``base.finite_only``).
reference = finite_only(vmstat_reference.parse)


def assert_same(text: str) -> None:
    for options in OPTIONS:
        assert outcome(parse, text, options) == outcome(reference, text, options)


def test_the_fixtures_and_the_corpus_are_read_as_before():
    assert len(FILES) > 250
    for path in FILES:
        assert_same(path.read_bytes().decode("utf-8", "replace"))


def test_a_long_log_is_read_as_before_and_in_one_block():
    """100,000 samples as bench/ingest_speed.py writes them: every data row in one block."""
    rows = [
        f"2 0 0 {250000 - i % 997} 40000 {300000 + i % 89} 0 0 20 {80 + i % 7} {1200 + i % 13} "
        f"{45000 + i % 101} 40 45 15 0"
        for i in range(6250)
    ]
    text = "\n".join([GROUP, HEADERS[1], *rows]) + "\n"
    assert_same(text)
    assert PlainRows(split_lines(text)).block_end(2, 16) == len(rows) + 2


# --- generated awkward inputs ---------------------------------------------------------------

HEADERS = [
    "r b w swpd free buff cache si so bi bo in cs us sy id",
    "r  b   swpd   free   buff  cache   si   so    bi    bo   in    cs us sy id wa",
    "r b swpd free buff cache si so bi bo in cs us sy id wa st",
    "r b swpd free inact active si so bi bo in cs us sy id wa st gu",
    "r b swpd free buff cache si so bi bo in cs us sy id wa st UTC",
    "r in cs us sy id",
]
GROUP = "procs -----------memory---------- ---swap-- -----io---- --system-- ----cpu----"
HUGE = [
    "9007199254740993",  # 2**53 + 1: rounds
    "18446744073709551617",  # beyond 2**64
    "1" * 400,  # beyond a double: inf
    "999999999999999",  # the longest plain token
    "0000000000000001",  # 16 digits: leading zeros
]
ODD = [
    "-",
    "+5",
    "-3",
    "-0",
    "1.5",
    "115.",
    ".5",
    "1e5",
    "1E+3",
    "2e-3",
    "1,5",
    "1,234",
    "nan",
    "inf",
    "007",
    "\u0661\u0662",  # Arabic-Indic digits
    "\uff11\uff12",  # full-width digits
    "\u00b2",  # superscript two: isdigit, not a decimal
    "12a",
    "0x10",
]
SEPARATORS = [" ", " ", "  ", "\t", " \t ", "\xa0", "\x0b", "\x0c", "\u2003"]
ENDINGS = ["\n", "\n", "\n", "\r\n", "\r"]


def plain_cell(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.8:
        return str(rng.randrange(0, 10 ** rng.randrange(1, 8)))
    if kind < 0.9:
        return "0" * rng.randrange(1, 5) + str(rng.randrange(100))
    return str(rng.randrange(10 ** (MAX_DIGITS - 1), 10**MAX_DIGITS))


def data_row(rng: random.Random, width: int, odd: float) -> list[str]:
    cells = [plain_cell(rng) for _ in range(width)]
    if rng.random() < odd:
        cells[rng.randrange(width)] = rng.choice(ODD + HUGE)
    return cells


def joined(rng: random.Random, cells: list[str], plain_spacing: bool) -> str:
    if plain_spacing:
        sep = rng.choice([" ", "  ", "\t"])
        return rng.choice(["", " ", "  "]) + sep.join(cells) + rng.choice(["", " ", "\t"])
    return "".join(c + rng.choice(SEPARATORS) for c in cells)


def generated(seed: int) -> str:
    """A vmstat-like log mixing long runs of plain rows with every trap at random."""
    rng = random.Random(seed)
    lines: list[str] = []
    header = rng.choice(HEADERS)
    width = len(header.split()) - (1 if header.endswith("UTC") else 0)
    if rng.random() < 0.2:
        lines += [" ".join(plain_cell(rng) for _ in range(width))] * rng.randrange(1, 6)
    odd = rng.choice([0.0, 0.01, 0.1, 0.5])
    for _ in range(rng.randrange(1, 6)):
        if rng.random() < 0.7:
            lines.append(GROUP)
        lines.append(header)
        for _ in range(rng.randrange(0, 40)):
            trap = rng.random()
            cells = data_row(rng, width, odd)
            if trap < 0.03:
                lines += [" ".join(cells[: width // 2]), " ".join(cells[width // 2 :])]  # wrapped
            elif trap < 0.06:
                lines.append(" ".join(cells[: rng.randrange(1, width)]))  # short
            elif trap < 0.08:
                lines.append(" ".join(cells + ["7"]))  # long
            elif trap < 0.10:
                lines.append(header)  # repeated right under the rows
            elif trap < 0.12:
                lines.append("")
            elif trap < 0.13:
                lines.append(
                    rng.choice(["^^^^^^^^^", "$ vmstat 1", "Killed", "vmstat (2.4.20aa1)"])
                )
            elif trap < 0.15:
                lines.append(" ".join(cells) + " 2026-11-24 23:40:01")  # a timestamp
            elif trap < 0.17:
                lines.append("> " + " ".join(cells))  # quoted
            else:
                lines.append(joined(rng, cells, plain_spacing=rng.random() < 0.9))
        if rng.random() < 0.3:
            lines += ["", "vmstat (2.6.0-test" + str(rng.randrange(10)) + ")"]
    if rng.random() < 0.1:
        lines = ["> " + line for line in lines]
    return "".join(line + rng.choice(ENDINGS) for line in lines)


@pytest.mark.parametrize("seed", range(400))
def test_generated_awkward_logs_are_read_as_before(seed):
    assert_same(generated(seed))


def test_generated_logs_reach_the_block_path_and_the_refusals():
    """The generated inputs exercise what they are meant to: blocks and rejections."""
    blocks = refused = 0
    for seed in range(400):
        text = generated(seed)
        lines = split_lines(text)
        plain = PlainRows(lines)
        blocks += any(plain.block_end(i, n) - i >= 4 for i in range(len(lines)) for n in (6, 16))
        refused += outcome(parse, text, {})[0] == "refused"
    assert blocks > 100
    assert refused > 20


@pytest.mark.parametrize(
    ("line", "plain"),
    [
        ("1 2 3", True),
        ("\t1\t 2  3 ", True),
        ("007 0 999999999999999", True),
        ("1 2 0000000000000001", False),  # 16 digits: read by float() token by token
        ("1 2 9007199254740993", False),
        ("1 2 +3", False),
        ("1 2 -3", False),
        ("1 2 3.0", False),
        ("1 2 3e0", False),
        ("1 2\xa03", False),
        ("1 2\x0b3", False),
        ("1 2 \u0663", False),
        ("> 1 2 3", False),
        ("", False),
    ],
)
def test_which_lines_are_plain(line, plain):
    lines = ["r b id", line, line, line, line]
    assert (PlainRows(lines).block_end(1, 3) == 5) is plain


def test_split_lines_cuts_lines_as_numbered_lines_does():
    assert split_lines("1 2\n3 4") == ["1 2", "3 4"]
    assert split_lines("a\r\nb\rc\n") == ["a", "b", "c", ""]


def test_a_block_reads_the_doubles_float_reads():
    lines = ["0 1 999999999999999", "007 123456789012345 42", "4 5 6", "7\t8 9"]
    values = read_block(lines, 0, 4, 3)  # integers, each exactly its double
    expected = np.array([[float(t) for t in line.split()] for line in lines])
    assert values.astype(np.float64).tobytes() == expected.tobytes()


def test_a_refusal_after_a_block_names_its_line():
    text = "r b id\n" + "1 2 3\n" * 10 + "1 2 3,5\n" + "1 2 3\n" * 10
    with pytest.raises(ParseError) as caught:
        parse(text, {})
    assert caught.value.line == 12
    assert_same(text)


def test_the_plain_lines_are_the_same_whatever_the_chunking(monkeypatch):
    """PlainRows looks at CHUNK_LINES lines per numpy pass: a run of plain rows across a
    chunk's edge, and every trap on either side of one, count as when looked at whole."""
    from ingest.parsers import plain_rows

    lines = split_lines("".join(generated(seed) for seed in range(60)))
    assert len(lines) > 3 * plain_rows.CHUNK_LINES
    seen = []
    for chunk in (1, 7, plain_rows.CHUNK_LINES, len(lines) + 1):
        monkeypatch.setattr(plain_rows, "CHUNK_LINES", chunk)
        plain = PlainRows(lines)
        seen.append((plain.counts, plain.run_end))
    assert all(s == seen[-1] for s in seen)
    assert sum(count > 0 for count in seen[-1][0]) > 1000

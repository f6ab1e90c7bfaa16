"""The docs stay design documents: short enough to read, and free of lab-notebook history.

A doc over 400 lines had become a log of experiments; a comment citing "session 12" or
"the fourth pass" means nothing to the next reader of the code. The history is in git;
the docs and comments say what is and why (CONTRIBUTING.md, "Docs and comments").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MAX_DOC_LINES = 400

# Docs written by a program rather than by hand may be longer; none is, today.
GENERATED_DOCS: frozenset[str] = frozenset()

# A reference to a numbered or ordinal round of past work, or to the tracker's issue that
# asked for it (the code says what it does and why; the issue is history). Loop rounds in
# code (``--rounds 10``), Linux's "pass 100 messages" and a database "session" are not.
ROUND_REFERENCE = re.compile(
    r"""(?ix)
        \bsessions?\ \#?\d+
      | (?<![-\w])rounds?\ \#?\d+\b
      | \bpass(?:es)?\ \#?\d+\b(?!\s+[a-z])
      | \b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|previous
            |earlier)\ session\b
      | \b(?:third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)\ (?:pass|round)\b
      | \b(?:this|that|last|previous|earlier)\ (?:pass|round)\b
      | \bengineer\ ["\u201c]
      | \bv\d\ of\ the\b
      | \bissues?\ \#?\d+\b
    """
)

# Where the project's own text lives (not vendored code, not real sample files).
SCANNED = (
    "README.md",
    "CONTRIBUTING.md",
    "docs",
    "bench",
    "perfdb",
    "ingest",
    "dashboards",
    "config",
    "templates",
    "scripts",
    "tests",
    "demo",
)
SKIPPED_PARTS = {"node_modules", "__pycache__", "fixtures", "corpus", "vendor"}
SUFFIXES = {".md", ".py", ".html", ".sh", ".toml", ".js", ".css", ".yml", ".txt"}

# Lines in files other engineers are editing, to be rewritten by them; each entry is the
# exact text allowed, so nothing else in those files may cite a round. Delete an entry once
# its line is gone.
PENDING: dict[str, str] = {}


def project_files() -> list[Path]:
    found: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            found.append(path)
            continue
        for file in sorted(path.rglob("*")):
            parts = set(file.relative_to(ROOT).parts)
            if file.is_file() and file.suffix in SUFFIXES and not parts & SKIPPED_PARTS:
                found.append(file)
    return [f for f in found if f != Path(__file__).resolve()]


@pytest.mark.parametrize("doc", sorted(DOCS.rglob("*.md")), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_doc_is_short_enough_to_read(doc: Path) -> None:
    if str(doc.relative_to(ROOT)) in GENERATED_DOCS:
        pytest.skip("generated")
    lines = len(doc.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_DOC_LINES, f"{doc.relative_to(ROOT)}: {lines} lines"


def test_no_text_cites_a_round_of_past_work() -> None:
    cited = []
    for file in project_files():
        rel = str(file.relative_to(ROOT))
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            allowed = PENDING.get(rel)
            if allowed and allowed in line:
                continue
            if ROUND_REFERENCE.search(line):
                cited.append(f"{rel}:{number}: {line.strip()}")
    assert not cited, "say why, not which round:\n" + "\n".join(cited)


@pytest.mark.parametrize(
    "text",
    [
        "measured in session 12",
        'the fourth pass (engineer "onerun2")',
        "as in round 3",
        "Session 11's figures",
        "after the last pass",
        "v2 of the parser",
        "the hardening of issue 14",
        "Issue 13's pages",
    ],
)
def test_the_pattern_finds_round_references(text: str) -> None:
    assert ROUND_REFERENCE.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "python bench/codespeed_compare.py --rounds 10",
        "Each sender will pass 100 messages of 100 bytes",
        "Lock the upload for this session",
        "kernels of the first pass after an event",
        "a second round trip",
        "an issue with the 2.6 scheduler",
    ],
)
def test_the_pattern_leaves_ordinary_words(text: str) -> None:
    assert not ROUND_REFERENCE.search(text)

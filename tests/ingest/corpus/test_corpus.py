"""Every corpus file through the parser a user would pick, against values read by hand.

See corpus.py for the rules; README.md for where each mail came from.
"""

from __future__ import annotations

import pytest

from tests.ingest.corpus.corpus import expected_files, outcomes, summary


@pytest.mark.parametrize("name", [p.stem for p in expected_files()])
def test_file(name: str) -> None:
    failed = [o for o in outcomes() if o.file == name and not o.ok]
    assert not failed, "\n".join(f"{o.parser}: {o.what}: {o.detail}" for o in failed)


def test_corpus_size_and_summary() -> None:
    print(summary())
    assert len(expected_files()) >= 25
    every_file_has_a_txt = all(
        (p.parent.parent / "files" / f"{p.stem}.txt").exists() for p in expected_files()
    )
    assert every_file_has_a_txt

"""run_labels.key_by_headings: blocks told apart only by the prose line above them.

Texts are real mails from tests/ingest/corpus/files (see its README.md); variants are derived
here and say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import group_records
from ingest.parsers.run_labels import heading_text
from ingest.parsers.text import numbered_lines

CORPUS = Path(__file__).parents[1] / "corpus" / "files"


def read(name: str) -> str:
    return (CORPUS / name).read_text()


def keys(result: object) -> list[dict[str, object]]:
    return [dict(g.keys) for g in group_records(result.records)]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("before:\n\treal    2m2.623s\n", "before"),  # colon heading
        ("Container not limited\n----------------------\n", "Container not limited"),  # rule
        ("\nvmstat (2.4.20aa1)\n\n", "vmstat (2.4.20aa1)"),  # a paragraph of its own
        (' filename="tiobench-2.6.6-hackedup"\n', "tiobench-2.6.6-hackedup"),  # MIME part
        ("\n2.4.24\n\n", "2.4.24"),  # kernel label line
        ("Andrew Morton wrote:\n", None),  # attribution
        ("Host: stp8-002\n", None),  # a statement
        ("\nGood point.\n\n", None),  # a sentence
        ("- vmstat\n", None),  # a bullet naming the tool
    ],
)
def test_heading_shapes(text: str, expected: str | None) -> None:
    lines = numbered_lines(text)
    first = next(k for k, (_, line) in enumerate(lines) if line.strip())
    assert heading_text(lines, first, first + 1) == expected


def test_before_after_sections_are_not_trials() -> None:
    # Alex Tomas, LKML 2004: "single dd writes 2GB:" / "9 copies of dd ...:" each with
    # "before:" and "after:" timings; and dbench runs under "before" / "after:".
    text = read("lkml-2004-04-13-tomas-time-dbench-before-after.txt")
    timed = keys(get_parser("time")(text, {}))
    assert {"heading": "single dd writes 2GB: before"} in timed
    assert {"heading": "9 copies of dd, each writes 20MB: after"} in timed
    assert len(timed) == 4
    dbench = get_parser("dbench")(text, {})
    groups = group_records(dbench.records)
    assert {len(g.trials) for g in groups} == {4}  # the four runs of one client count
    assert {g.keys["heading"] for g in groups} == {"before", "after"}


def test_without_headings_repeats_stay_trials_with_a_warning() -> None:
    # Derived from the Tomas mail: the "before"/"after:" lines removed, the two dbench blocks
    # can no longer be told apart: trials, and a warning says so.
    text = read("lkml-2004-04-13-tomas-time-dbench-before-after.txt")
    text = text.replace("before\n\tThroughput", "\n\tThroughput").replace(
        "after:\n\tThr", "\n\tThr"
    )
    result = get_parser("dbench")(text, {})
    assert {len(g.trials) for g in group_records(result.records)} == {8}
    assert any("stored as trials" in w for w in result.warnings)


def test_attachments_with_one_identifier() -> None:
    # Rene Herman, LKML 2004: two tiobench attachments whose rows both say "2.6.6".
    result = get_parser("tiobench")(
        read("lkml-2004-05-12-herman-tiobench-two-attachments-2.6.6.txt"), {}
    )
    headings = {g.keys["heading"] for g in group_records(result.records)}
    assert headings == {"tiobench-2.6.6", "tiobench-2.6.6-hackedup"}
    assert all(len(g.trials) == 1 for g in group_records(result.records))


def test_vmstat_runs_under_headings_are_separate_records() -> None:
    # Dejan Muhamedagic, LKML 2003: "vmstat (2.4.20aa1)" then "vmstat (2.4.20rmap)".
    result = get_parser("vmstat")(read("lkml-2003-02-19-muhamedagic-vmstat-two-kernels.txt"), {})
    assert keys(result) == [{"heading": "vmstat (2.4.20aa1)"}, {"heading": "vmstat (2.4.20rmap)"}]


def test_kernel_label_heading_labels_a_profile_listing() -> None:
    # Philip Martin, LKML 2004: "2.4.24" / "2.6.1" above a GNU time line and a listing.
    text = read("lkml-2004-02-03-martin-readprofile-time-2.4.24-2.6.1.txt")
    assert keys(get_parser("readprofile")(text, {})) == [{"label": "2.4.24"}, {"label": "2.6.1"}]


def test_two_lmbench_summaries_of_one_host_under_headings() -> None:
    # Derived from Aniruddha Marathe's mail (LKML 2003, tests/ingest/corpus): its five-run
    # summary pasted twice under "before:" and "after:" — same host, same OS cell.
    text = read("lkml-2003-01-03-marathe-lmbench-2.5.54-mm2.txt")
    start = text.index("L M B E N C H")
    summary = text[start : text.index("Aniruddha Marathe\n")]
    derived = f"before:\n\n{summary}\nafter:\n\n{summary}"
    groups = group_records(get_parser("lmbench")(derived, {}).records)
    assert [(g.keys["heading"], len(g.trials)) for g in groups] == [("before", 5), ("after", 5)]

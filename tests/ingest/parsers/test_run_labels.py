"""ingest/parsers/run_labels.py: kernel labels, and blocks told apart by the line above them.

Whole texts are real mails from tests/ingest/corpus/files (see its README.md); variants are
derived here and say so. The short texts of the direct tests show one shape each.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import Record, group_records
from ingest.parsers.run_labels import (
    Heading,
    LabelScope,
    block_headings,
    heading_text,
    is_kernel,
    kernel_label,
    key_by_headings,
    quote_depth,
    warn_unlabelled_repeats,
)
from ingest.parsers.text import numbered_lines

CORPUS = Path(__file__).parents[1] / "corpus" / "files"


def read(name: str) -> str:
    return (CORPUS / name).read_text()


def keys(result: object) -> list[dict[str, object]]:
    return [dict(g.keys) for g in group_records(result.records)]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("Kernel: 3.7.0-rc3-vanilla-default", ("3.7.0-rc3-vanilla-default", "")),
        ("kernel 2.6.0-test9", ("2.6.0-test9", "")),
        ("kernel: staircase6.2", ("staircase6.2", "")),  # a build name after "kernel:"
        ("  2.6.23-rc2-mm2-mem-v6  ", ("2.6.23-rc2-mm2-mem-v6", "")),  # a bare uname -r
        ("v6.1-rc2", ("v6.1-rc2", "")),
        (
            "2.4.0-prerelease-ac4: average 11.4729 MB/sec",
            ("2.4.0-prerelease-ac4", "average 11.4729 MB/sec"),
        ),
        ("I tested 2.6.0 today", None),  # prose mentioning a version
        ("1.00", None),  # a number in a table
        ("10.5", None),
    ],
)
def test_kernel_label(line, found):
    assert kernel_label(line) == found


def test_is_kernel_and_quote_depth():
    assert is_kernel("2.6.0-test9-mm2")
    assert not is_kernel("2.4.0-ac4: average 11.47 MB/sec")  # a label with more after it
    assert not is_kernel("hello")
    assert [quote_depth(line) for line in (">> > text", "KP> text", "text", "")] == [3, 1, 0, 0]


def test_a_label_is_in_force_until_the_quote_depth_changes():
    scope, warnings = LabelScope(), []
    line = "2.4.0-prerelease-ac4: average 11.4729 MB/sec"
    assert scope.read(line, line, 3, warnings)
    assert (scope.label, scope.seen_any) == ("2.4.0-prerelease-ac4", True)
    assert warnings == [
        "line 3: text after the label '2.4.0-prerelease-ac4' ignored: 'average 11.4729 MB/sec'"
    ]
    assert not scope.read("Throughput 11 MB/sec", "Throughput 11 MB/sec", 4, warnings)
    assert scope.label == "2.4.0-prerelease-ac4"
    assert scope.changed_depth("> Throughput 9 MB/sec", "Throughput 9 MB/sec")
    assert not scope.read("> Throughput 9 MB/sec", "Throughput 9 MB/sec", 5, warnings)
    assert (scope.label, scope.depth) == (None, 1)  # another author's quoted text


def test_a_used_label_ends_at_a_new_prose_paragraph():
    scope = LabelScope(label="2.6.23-rc2-mm2", used=True)
    assert not scope.prose_break("ebizzy on top of rc2-mm2 gave this", after_blank=False)
    assert not scope.prose_break("before", after_blank=True)  # too short for prose
    assert scope.label == "2.6.23-rc2-mm2"
    assert scope.prose_break("ebizzy on top of rc2-mm2 gave this", after_blank=True)
    assert scope.label is None
    unused = LabelScope(label="2.6.1")
    assert not unused.prose_break("ebizzy on top of rc2-mm2 gave this", after_blank=True)


def test_repeats_are_named_when_no_label_tells_them_apart():
    records = [
        Record(keys={"clients": 4}, line=3),
        Record(keys={"clients": 4.0}, line=9),
        Record(keys={"clients": 8}, line=12),
    ]
    warnings: list[str] = []
    warn_unlabelled_repeats(records, LabelScope(), warnings)
    assert warnings == [
        "runs with equal keys are stored as trials of one run: clients=4 (lines 3, 9). The "
        "file states no kernel label: if they ran on different kernels, split it"
    ]
    warnings = []
    warn_unlabelled_repeats(records, LabelScope(seen_any=True), warnings)
    assert warnings == []


def test_block_headings_and_keys_from_them():
    lines = numbered_lines("before:\n  real 1\n\nafter:\n  real 2\n")
    assert block_headings(lines, [2, 5]) == {2: Heading("before", 1), 5: Heading("after", 4)}
    records = [Record(keys={"command": "dd"}, line=2), Record(keys={"command": "dd"}, line=5)]
    warnings: list[str] = []
    keyed = key_by_headings(records, lines, warnings)
    assert [r.keys for r in keyed] == [
        {"command": "dd", "heading": "before"},
        {"command": "dd", "heading": "after"},
    ]
    assert warnings == [
        "runs with equal keys told apart by the heading above each block: "
        "line 1 'before', line 4 'after'"
    ]
    kernels = numbered_lines("2.4.24\n  real 1\n\n2.6.1\n  real 2\n")
    assert [r.keys for r in key_by_headings(records, kernels, [])] == [
        {"command": "dd", "label": "2.4.24"},
        {"command": "dd", "label": "2.6.1"},
    ]


def test_records_already_apart_keep_their_keys():
    records = [Record(keys={"command": "dd"}, line=2), Record(keys={"command": "cp"}, line=5)]
    lines = numbered_lines("before:\n  real 1\n\nafter:\n  real 2\n")
    warnings: list[str] = []
    assert key_by_headings(records, lines, warnings) == records
    assert warnings == []


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

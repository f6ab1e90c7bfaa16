"""One report file as an upload (ingest/report_bundle.py): the manifest its text implies."""

from __future__ import annotations

import json

import pytest

from ingest.bundle import BundleError, read_bundle
from ingest.manifest import parse_manifest
from ingest.parsers.base import Measurement, ParseResult, Record, Summary
from ingest.plan import file_key, plan_runs
from ingest.report_bundle import ReportError, recognised, report_manifest


def record(line: int, value: float, **keys: object) -> Record:
    return Record(
        keys=keys,  # type: ignore[arg-type]
        line=line,
        measurements=(Measurement("ops", value, "ops/s", "higher", summary=Summary(sd_pct=2.0)),),
    )


def planned(result: ParseResult, text: str):
    manifest = parse_manifest(text, filename="manifest.json", available_files=["report.txt"])
    (block,) = manifest.runs_from
    return manifest, plan_runs(manifest, {file_key("report.txt", block.parser, {}): result})


def test_a_report_of_two_builds_becomes_two_runs_of_one_setup():
    result = ParseResult(
        records=(
            record(10, 1000.0, label="6.8.0-rc3", nr_task=16),
            record(10, 550.0, label="6.8.0-rc3-00045-g5ef2dccfcc", nr_task=16),
        ),
        metadata={"workload": "will-it-scale", "hardware": "lkp-csl-2sp7", "machine": "2 sockets"},
    )
    text = report_manifest("hackbench", result, "report.txt", "ab" * 32)
    manifest, plan = planned(result, text)
    assert manifest.hardware["lkp-csl-2sp7"].notes == "2 sockets"
    assert [(p.spec.kernel, p.spec.workload, p.spec.hardware) for p in plan] == [
        ("6.8.0-rc3", "will-it-scale", "lkp-csl-2sp7"),
        ("6.8.0-rc3-00045-g5ef2dccfcc", "will-it-scale", "lkp-csl-2sp7"),
    ]
    assert all(p.spec.params == {"nr_task": 16} for p in plan)


def test_a_patch_tree_label_is_the_tree_on_its_base_kernel():
    result = ParseResult(records=(record(3, 1.0, label="2.6.0-mm1"), record(4, 2.0, label="2.6.0")))
    _, plan = planned(result, report_manifest("tbench", result, "report.txt", "cd" * 32))
    assert [(p.spec.kernel, tuple(p.spec.patches)) for p in plan] == [
        ("2.6.0", ("mm1",)),
        ("2.6.0", ()),
    ]


def test_a_report_without_a_machine_gets_one_of_its_own():
    result = ParseResult(records=(record(1, 1.0, label="6.1.0"),))
    first = json.loads(report_manifest("mmtests", result, "a.txt", "0123456789abcdef" * 4))
    other = json.loads(report_manifest("mmtests", result, "a.txt", "fedcba9876543210" * 4))
    assert first["runs_from"][0]["hardware"] == "unstated-0123456789"
    assert other["runs_from"][0]["hardware"] != first["runs_from"][0]["hardware"]
    assert first["runs_from"][0]["workload"] == "mmtests"  # the parser, when no workload is stated


def test_a_build_that_is_no_kernel_name_is_refused_naming_its_line():
    result = ParseResult(records=(record(7, 1.0, label="6.1.0"), record(9, 2.0, label="vanilla")))
    with pytest.raises(ReportError, match=r"line 9: .*'vanilla', which is not a kernel name"):
        report_manifest("mmtests", result, "report.txt", "ef" * 32)


def test_a_record_without_a_build_is_refused():
    result = ParseResult(records=(record(5, 1.0, nr_task=4),))
    with pytest.raises(ReportError, match="line 5: .* gives no build"):
        report_manifest("mmtests", result, "report.txt", "ef" * 32)


def test_text_no_parser_recognises_is_refused_naming_what_was_tried():
    with pytest.raises(ReportError, match=r"not a report this server reads .*tried: "):
        recognised("Dear list,\nthe numbers are 1 2 3.\n")


def test_an_unrecognised_text_upload_is_a_bundle_error(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("Dear list,\nthe numbers are 1 2 3.\n")
    with pytest.raises(BundleError, match=r"not a \.tar\.gz or \.zip archive, and not a report"):
        read_bundle(path)


def test_binary_that_is_no_archive_is_refused_as_such(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(BundleError, match="not UTF-8 text either"):
        read_bundle(path)

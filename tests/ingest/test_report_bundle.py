"""One report file as an upload (ingest/report_bundle.py): the manifest its text implies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.bundle import BundleError, read_bundle
from ingest.manifest import parse_manifest
from ingest.parsers.base import Measurement, ParseResult, Record, Summary
from ingest.plan import file_key, plan_runs
from ingest.report_bundle import ReportError, recognised, report_manifest
from perfdb.kernels import parse_kernel


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


# --- real reports, uploaded as they are, through the ingest -----------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def upload_as_is(path: Path):
    from ingest.services import upload_create, upload_ingest

    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name, source="cli")
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    return upload


@pytest.mark.django_db
def test_a_robot_mail_becomes_two_builds_in_order_with_its_spreads(client):
    from perfdb.models import Kernel, ResultSummary, Run

    upload = upload_as_is(FIXTURES / "lkp" / "will-it-scale-poll2-2025-regression.txt")
    assert upload.status == "done", upload.error
    runs = list(Run.objects.filter(upload=upload).order_by("kernel__sort_key"))
    assert [r.kernel.version for r in runs] == ["d000e073ca2a", "893598979838"]  # base first
    tested = Kernel.objects.get(version="893598979838")
    assert tested.base is not None and tested.base.version == "d000e073ca2a"
    assert tested.subject == "do_pollfd(): convert to CLASS(fd)"
    assert {r.setup_id for r in runs} == {runs[0].setup_id}  # one setup: two builds of it
    assert runs[0].setup.hardware.name == "lkp-skl-fpga01"
    # The headline row, as the mail prints it: "263173  -11.7%  232411 ..." (no spread shown)
    # and rows with "± N%" keep the N as the run's spread.
    spreads = ResultSummary.objects.filter(run__in=runs)
    assert spreads.exists() and all(s.sd_pct is not None and s.runs is None for s in spreads)
    page = client.get(f"/compare/?base={runs[0].pk}&new={runs[1].pk}")
    assert page.status_code == 200
    text = page.content.decode()
    assert "will-it-scale.per_process_ops" in text
    assert "-11.6 %" in text or "-11.7 %" in text  # the report's %change, from its means
    assert "(report)" in text  # a mean with its stated spread, not one trial


@pytest.mark.django_db
def test_an_mmtests_table_of_three_kernels_is_one_series_across_them():
    from perfdb.models import Run

    upload = upload_as_is(FIXTURES / "mmtests" / "lkml-2022-highpcp-cascadelake.txt")
    assert upload.status == "done", upload.error
    runs = Run.objects.filter(upload=upload).order_by("kernel__sort_key")
    kernels = [r.kernel.version for r in runs]
    assert kernels == sorted(kernels, key=lambda k: parse_kernel(k).sort_key)
    assert len({r.kernel_id for r in runs}) == 3
    assert len({r.setup_id for r in runs}) == 1  # one setup charted across three kernels

"""One bundle holding a run for every parser, through the HTTP API, Redis and a real worker."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ingest.parsers import get_parser, parser_names
from ingest.parsers.base import group_records, normalize_key_value
from perfdb.models import ProfileEntry, Result, Run, Sample
from tests.bundles import make_bundle

FORMATS = Path(__file__).resolve().parent.parent / "fixtures" / "formats"

# parser -> sample file: a real output of each format the lab sends, several runs per file
# where the tool prints them.
SAMPLES = {
    "volanomark": "volanomark/client-2.13-full.txt",
    "readprofile": "readprofile/readprofile-2.4-unsorted.txt",
    "kerneltop": "readprofile/kerneltop-2.5.txt",
    "oprofile": "readprofile/opreport.txt",
    "vmstat": "vmstat/procps3-2.6-wa.txt",
    "lmbench": "lmbench/lmbench3-raw-2.4.20.txt",
    "wakeup-counters": "wakeup/percent.txt",
    "sched-histogram": "sched/bryant-style.txt",
    "tiobench": "tiobench/tiobench-0.3.3-full.txt",
    "dbench": "dbench/lkp-fixture-dbench-01.txt",
    "tbench": "tbench/lkp-fixture-tbench-01.txt",
    "netperf": "netperf/lkp-fixture-netperf.txt",
    "time": "time/gnu-verbose-hms.txt",
    "schedstat": "schedstat/v15-two-snapshots.txt",
    "spec-summary": "spec/specjappserver2002-summary.txt",
    "csv": "generic/measurements.csv",
    "json": "generic/result.json",
    "table": "table/linux-mm-2002-09-17-hartner-volanomark-rmap.txt",
    "iozone": "iozone/debian-3.489-auto.txt",
    "postmark": "postmark/debian-1.53-terse-two-runs.txt",
    "lockmeter": "lockmeter/lkml-2002-linder-three-kernels.txt",
    "lockstat": "lockmeter/lkml-2003-linder-2.5.67-mm1.txt",
    "sar": "sysstat/sar-n-dev.txt",
    "sadf": "sysstat/sadf-j-mixed.json",
    "iostat": "sysstat/iostat-x.txt",
    "mpstat": "sysstat/mpstat-p-all.txt",
    "perf-stat": "perf-stat/stat-csv-per-cpu.txt",
    "perf-report": "perf-report/report-children-n-limit2.txt",
    "perf-bench": "perf-bench/bench-memcpy.txt",
    "hackbench": "hackbench/lkml-old-hackbench-10-runs.txt",
    "schbench": "schbench/lkml-delay-dequeue-two-runs.txt",
    "fio": "fio/fio-3.33-randrw-json.json",
    "sysbench": "sysbench/sysbench-1.0.20-cpu.txt",
    "cyclictest": "cyclictest/cyclictest-2.4-q-h50.txt",
    "stress-ng": "stress-ng/stress-ng-0.15.06-cpu-vm-metrics.txt",
    "stress_ng": "stress-ng/stress-ng-0.15.06-cpu-metrics-brief.txt",
    "mmtests": "mmtests/lkml-2022-pan-hackbench-tbench.txt",
    "lkp": "lkp/sockperf-netperf-2025-two-tests.txt",
}


def test_every_registered_parser_has_a_sample_here():
    assert set(SAMPLES) == set(parser_names())


def _labels(parser: str, data: bytes) -> dict[str, str]:
    """Each build label the file prints -> a kernel of this test (plain versions map to one)."""
    result = get_parser(parser)(data.decode("utf-8", "replace"), {})
    printed = {normalize_key_value(r.keys["label"]) for r in result.records if "label" in r.keys}
    return {label: f"2.6.{i}" for i, label in enumerate(sorted(printed), start=1)}


def _bundle(tmp_path: Path) -> tuple[Path, int]:
    """One [[runs_from]] block per parser: every record of every sample becomes a run."""
    blocks, files, expected = [], {}, 0
    for index, (parser, sample) in enumerate(sorted(SAMPLES.items())):
        name = f"raw/{index}-{Path(sample).name}"
        files[name] = (FORMATS / sample).read_bytes()
        labels = _labels(parser, files[name])
        mapped = ", ".join(f'{json.dumps(k)} = {{ kernel = "{v}" }}' for k, v in labels.items())
        blocks.append(
            f"""
[[runs_from]]
workload = "e2e-{parser}"
kernel = "2.5.{index + 1}"
hardware = "lab1"
mode = "SMP"
path = "{name}"
parser = "{parser}"
labels = {{ {mapped} }}
"""
        )
        result = get_parser(parser)(files[name].decode("utf-8", "replace"), {})
        expected += len(group_records(result.records))
    files["manifest.toml"] = "format = 2\n[hardware.lab1]\ncpus = 4\n" + "".join(blocks)
    return make_bundle(tmp_path / "every-parser.tar.gz", files), expected


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_bundle_of_every_format_ingests_through_the_worker(
    tmp_path, celery_worker, client, token
):
    path, expected_runs = _bundle(tmp_path)
    with open(path, "rb") as f:
        response = client.post("/api/uploads/", {"bundle": f}, HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 202
    url = f"/api/uploads/{response.json()['id']}/"
    for _ in range(240):
        body = client.get(url).json()
        if body["status"] in ("done", "failed"):
            break
        time.sleep(0.25)
    assert body["status"] == "done", body["error"]
    assert body["progress"]["files_done"] == body["progress"]["files_total"] == len(SAMPLES)
    assert len(body["runs"]) == expected_runs > len(SAMPLES)
    for parser in SAMPLES:
        runs = Run.objects.filter(setup__workload__name=f"e2e-{parser}")
        assert runs.exists(), f"{parser}: no run"
        for run in runs:
            stored = (
                Result.objects.filter(run=run).count()
                + Sample.objects.filter(run=run).count()
                + ProfileEntry.objects.filter(run=run).count()
            )
            assert stored > 0, f"{parser}: run {run.pk} stored nothing"
            assert run.raw_files.get().parser == parser

"""Metric rows as bundles name them (ingest/keys.py ``MetricCache``): two tools naming one
metric with different directions, at ingest and at preview alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.preview import bundle_preview
from perfdb.models import Metric
from tests.bundles import ingest_bundle, make_bundle, manifest_toml
from tests.factories import MetricFactory

pytestmark = pytest.mark.django_db

FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def bundle(tmp_path: Path, name: str, parser: str, fixture: str, select: str = "") -> Path:
    picked = f", select = {{ {select} }}" if select else ""
    run = f"""
[[run]]
workload = "{name}"
kernel = "6.1.0"
hardware = "P8"
mode = "SMP"
files = [{{ path = "out.txt", parser = "{parser}"{picked} }}]
"""
    manifest = manifest_toml(run).replace("format = 1", "format = 2")  # select needs format 2
    files = {"manifest.toml": manifest, "out.txt": (FORMATS / fixture).read_text()}
    return make_bundle(tmp_path / f"{name}.tar.gz", files)


def test_a_direction_where_the_stored_metric_has_none_is_stored_with_a_warning(tmp_path):
    """sysbench's total_time_s is a fixed run length (no direction); perf bench's is the
    result (lower is better). The second upload used to fail after its preview passed."""
    sysbench = bundle(tmp_path, "sysbench-cpu", "sysbench", "sysbench/sysbench-1.0.20-cpu.txt")
    assert ingest_bundle(sysbench).status == "done"
    perf = bundle(
        tmp_path,
        "perf-bench",
        "perf-bench",
        "perf-bench/bench-sched-all.txt",
        select='benchmark = "sched/pipe"',
    )
    with open(perf, "rb") as stream:
        preview = bundle_preview(stream=stream)
    assert preview.problems == []
    assert any("'total_time_s' (s) is 'lower'-is-better here" in w for w in preview.warnings)
    upload = ingest_bundle(perf)
    assert upload.status == "done", upload.error
    assert any("no direction in the stored data" in w for w in upload.warnings)
    assert Metric.objects.get(name="total_time_s", unit="s").better == "none"  # kept


def test_opposite_directions_are_refused_by_the_preview_as_by_the_ingest(tmp_path):
    perf = bundle(
        tmp_path,
        "perf-bench",
        "perf-bench",
        "perf-bench/bench-sched-all.txt",
        select='benchmark = "sched/pipe"',
    )
    MetricFactory(name="total_time_s", unit="s", better="higher")
    with open(perf, "rb") as stream:
        preview = bundle_preview(stream=stream)
    (problem,) = preview.problems
    assert "'total_time_s' (s) is 'lower'-is-better here but 'higher' in the stored data" in problem
    upload = ingest_bundle(perf)
    assert upload.status == "failed" and "'higher' in the stored data" in upload.error

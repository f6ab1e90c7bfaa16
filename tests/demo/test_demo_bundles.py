"""The demo bundles carry exactly the seed papers' numbers: all of them, and nothing else.

Pure: each demo/<bundle>/manifest.toml goes through the real manifest parser and each raw file
through the real parser it names; no database. The expected numbers are typed by hand in
paper_values.py. Values a parser *computes* from the paper's numbers (means of vmstat columns,
readprofile shares and ratios) are left out of the "nothing else" check: they are not stored
numbers of the paper, and the parsers' own tests cover them.
"""

from __future__ import annotations

import functools
import os
import tarfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from ingest.bundle import read_bundle
from ingest.manifest import Manifest, RunSpec, parse_manifest
from ingest.parsers import get_parser
from tests.demo.paper_values import DOCS, PAPER_VALUES, PaperValue, Run

DEMO = Path(__file__).resolve().parents[2] / "demo"
SEEDS = Path(os.environ.get("PERFDB_SEEDS_DIR", "/work/shared/seeds"))
BUNDLES = sorted(path.name for path in DEMO.iterdir() if (path / "manifest.toml").is_file())

# Measurements a parser derives rather than reads; see the module docstring.
DERIVED_MEASUREMENTS = {"kernel_busy_pct", "scheduler_pct"}
DERIVED_PREFIXES = ("vmstat_",)


@dataclass(frozen=True)
class Observation:
    metric: str
    value: float
    unit: str | None
    better: str | None


def _load(bundle: str) -> Manifest:
    folder = DEMO / bundle
    files = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
    text = (folder / "manifest.toml").read_text()
    return parse_manifest(text, filename="manifest.toml", available_files=files)


def _is_derived(metric: str) -> bool:
    return metric in DERIVED_MEASUREMENTS or metric.startswith(DERIVED_PREFIXES)


def _observations(bundle: str, manifest: Manifest, run: RunSpec) -> list[Observation]:
    """Everything the pipeline would store for ``run``, as flat (metric, value) facts."""
    found = []
    for name, values in run.metrics.items():
        spec = manifest.metrics[name]
        found += [Observation(name, value, spec.unit, spec.better) for value in values]
    for file in run.files:
        text = (DEMO / bundle / file.path).read_text()
        result = get_parser(file.parser)(text, file.options)
        assert result.warnings == (), f"{bundle}/{file.path}: {result.warnings}"
        # The papers' vmstat rows are excerpts: none is the since-boot average to be dropped.
        assert not any(sample.since_boot for sample in result.all_samples()), file.path
        found += [
            Observation(m.metric, m.value, m.unit, m.better)
            for m in result.measurements
            if not _is_derived(m.metric)
        ]
        found += [
            Observation(f"{s.source}:{s.column}[{s.index}]", s.value, None, None)
            for s in result.all_samples()
        ]
        for entry in result.profile:
            found.append(Observation(f"profile:{entry.function}:ticks", entry.ticks, None, None))
            if entry.load is not None:
                found.append(Observation(f"profile:{entry.function}:load", entry.load, None, None))
    return found


def _matches(key: Run, run: RunSpec) -> bool:
    return (
        key.kernel == run.kernel
        and key.patches == run.patches
        and key.hardware == run.hardware
        and all(run.params.get(name) == value for name, value in key.params)
    )


@functools.cache
def _stored(bundle: str) -> list[tuple[RunSpec, list[Observation]]]:
    manifest = _load(bundle)
    return [(run, _observations(bundle, manifest, run)) for run in manifest.runs]


def _expected(bundle: str) -> list[PaperValue]:
    return [value for value in PAPER_VALUES if value.bundle == bundle]


def _value_case(value: PaperValue):
    return pytest.param(value, id=f"{value.source}:{value.metric}")


@pytest.mark.parametrize("expected", [_value_case(value) for value in PAPER_VALUES])
def test_every_paper_value_is_stored_exactly(expected):
    hits = [
        obs
        for run, observations in _stored(expected.bundle)
        if _matches(expected.run, run)
        for obs in observations
        if obs.metric == expected.metric
    ]
    want = Observation(expected.metric, expected.value, expected.unit, expected.better)
    assert hits == [want], f"{expected.source} {expected.run}"


@pytest.mark.parametrize("bundle", BUNDLES)
def test_no_run_carries_a_value_the_papers_do_not_give(bundle):
    """Every stored fact has its paper value; the test above checks that the two are equal."""
    expected = _expected(bundle)
    for run, observations in _stored(bundle):
        assert observations, f"run {run.index} stores nothing"
        for obs in observations:
            known = [
                (v.unit, v.better)
                for v in expected
                if v.metric == obs.metric and _matches(v.run, run)
            ]
            where = f"run {run.index} ({run.kernel} {'+'.join(run.patches)})"
            assert known == [(obs.unit, obs.better)], f"{where}: {obs} is not a paper value"


@pytest.mark.parametrize("bundle", BUNDLES)
def test_every_run_cites_its_source(bundle):
    document = bundle.split("-", 1)[0]
    for run in _load(bundle).runs:
        assert run.notes.startswith(f"{document} "), f"run {run.index}: {run.notes[:40]!r}"


@pytest.mark.parametrize("bundle", BUNDLES)
def test_folder_reads_as_an_uploaded_archive(bundle, tmp_path):
    """The demo loader tars each folder: the archive must pass the upload's safety checks."""
    archive = tmp_path / f"{bundle}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(DEMO / bundle, arcname=bundle)
    read = read_bundle(archive)
    manifest = parse_manifest(
        read.manifest_text, filename=read.manifest_name, available_files=read.files.keys()
    )
    named = {file.path for run in manifest.runs for file in run.files}
    assert named == set(read.files), "every raw file is named by a run, and only those"


def test_every_bundle_has_paper_values_and_every_paper_value_a_bundle():
    assert sorted({value.bundle for value in PAPER_VALUES}) == BUNDLES


def test_shared_hardware_and_metric_declarations_agree():
    """The server rejects a hardware name re-stated with other values; same for metrics."""
    hardware: dict[str, set] = defaultdict(set)
    metrics: dict[str, set] = defaultdict(set)
    for bundle in BUNDLES:
        manifest = _load(bundle)
        for name, spec in manifest.hardware.items():
            hardware[name].add(spec)
        for name, spec in manifest.metrics.items():
            metrics[name].add(spec)
    assert {name: len(specs) for name, specs in hardware.items() if len(specs) > 1} == {}
    assert {name: len(specs) for name, specs in metrics.items() if len(specs) > 1} == {}


def test_every_run_hardware_is_defined_in_its_bundle():
    for bundle in BUNDLES:
        manifest = _load(bundle)
        for run in manifest.runs:
            assert run.hardware in manifest.hardware, f"{bundle} run {run.index}"


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"seed documents not found at {SEEDS}")
@pytest.mark.parametrize("value", PAPER_VALUES, ids=lambda v: f"{v.source}:{v.metric}")
def test_printed_text_occurs_in_the_cited_document(value):
    text = (SEEDS / DOCS[value.source[:3]]).read_text()
    assert value.printed and value.printed in text


# --- the figures the dashboard shows (from the issue) ------------------------------------------


def _value(bundle: str, key: Run, metric: str) -> float:
    (hit,) = [
        obs.value
        for run, observations in _stored(bundle)
        if _matches(key, run)
        for obs in observations
        if obs.metric == metric
    ]
    return hit


def _change_pct(new: float, old: float) -> float:
    return round((new - old) / old * 100, 1)


def test_compare_view_nice_0_minus_19_threshold_40_against_default():
    def key(client_nice, threshold):
        params = (("server_nice", 0), ("client_nice", client_nice))
        params += (("preempt_threshold", threshold),)
        return Run("2.5.25", ("pri_preempt_cntr",), "001-8way-p3-700", params)

    bundle = "001-hartner-2002-volanomark-pri-preempt"
    tuned = _value(bundle, key(-19, 40), "throughput")
    default = _value(bundle, key(0, 0), "throughput")
    assert (tuned, default) == (18740, 13183)
    assert _change_pct(tuned, default) == 42.2


def test_lmbench_spans_three_kernels():
    runs = _load("004-vianney-2003-lmbench").runs
    assert [run.kernel for run in runs] == ["2.2.23", "2.4.20", "2.5.59"]
    assert {(run.workload, run.workload_version) for run in runs} == {("LMBench", "3.0")}


@pytest.mark.parametrize(("kernel", "change"), [("2.5.59", -3.8), ("2.5.66", 11.6)])
def test_sjas_4way_against_2_4_20_stock(kernel, change):
    bundle = "002-anand-2003-specjappserver"
    base = _value(bundle, Run("2.4.20", (), "002-B"), "tops_rel_base1")
    assert _change_pct(_value(bundle, Run(kernel, (), "002-B"), "tops_rel_base1"), base) == change
    base_runs = [run for run in _load(bundle).runs if run.label == "Base1"]
    assert [(run.kernel, run.hardware) for run in base_runs] == [("2.4.20", "002-B")]

"""One bundle holding a run for every parser, through the HTTP API, Redis and a real worker."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ingest.parsers import parser_names
from perfdb.models import ProfileEntry, Result, Run, Sample
from tests.bundles import make_bundle

FORMATS = Path(__file__).resolve().parent.parent / "fixtures" / "formats"

# parser -> (sample file, options): a realistic sample of each format the lab sends.
SAMPLES = {
    "volanomark": ("volanomark/client-2.13-full.txt", ""),
    "readprofile": ("readprofile/readprofile-2.4-unsorted.txt", ""),
    "kerneltop": ("readprofile/kerneltop-2.5.txt", ""),
    "oprofile": ("readprofile/opreport.txt", ""),
    "vmstat": ("vmstat/procps3-2.6-wa.txt", ""),
    "lmbench": ("lmbench/lmbench3-raw-2.4.20.txt", ""),
    "wakeup-counters": ("wakeup/percent.txt", ""),
    "sched-histogram": ("sched/bryant-style.txt", ""),
    "tiobench": ("tiobench/tiobench-0.3.3-full.txt", ""),
    "dbench": ("dbench/lkp-fixture-dbench-01.txt", ""),
    "tbench": ("tbench/lkp-fixture-tbench-01.txt", ""),
    "netperf": ("netperf/lkp-fixture-netperf.txt", ""),
    "time": ("time/gnu-verbose-hms.txt", ""),
    "schedstat": ("schedstat/v15-two-snapshots.txt", ""),
    "spec-summary": ("spec/specjappserver2002-summary.txt", ""),
    "csv": ("generic/measurements.csv", ""),
    "json": ("generic/result.json", ""),
}


def test_every_registered_parser_has_a_sample_here():
    assert set(SAMPLES) == set(parser_names())


def _bundle(tmp_path: Path) -> Path:
    runs, files = [], {}
    for index, (parser, (sample, options)) in enumerate(sorted(SAMPLES.items())):
        name = f"raw/{index}-{Path(sample).name}"
        files[name] = (FORMATS / sample).read_bytes()
        runs.append(
            f"""
[[run]]
workload = "e2e-{parser}"
kernel = "2.5.{index + 1}"
hardware = "lab1"
mode = "SMP"
files = [{{ path = "{name}", parser = "{parser}"{options} }}]
"""
        )
    files["manifest.toml"] = "format = 1\n[hardware.lab1]\ncpus = 4\n" + "".join(runs)
    return make_bundle(tmp_path / "every-parser.tar.gz", files)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_bundle_of_every_format_ingests_through_the_worker(
    tmp_path, celery_worker, client, token
):
    with open(_bundle(tmp_path), "rb") as f:
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
    assert len(body["runs"]) == len(SAMPLES)
    for parser in SAMPLES:
        run = Run.objects.get(setup__workload__name=f"e2e-{parser}")
        stored = (
            Result.objects.filter(run=run).count()
            + Sample.objects.filter(run=run).count()
            + ProfileEntry.objects.filter(run=run).count()
        )
        assert stored > 0, f"{parser}: nothing stored"
        assert run.raw_files.get().parser == parser

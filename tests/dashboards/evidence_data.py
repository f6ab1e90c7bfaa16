"""Bundles for the evidence pages (profile diff, attribution, reference, claims): a patch
stack on one kernel with direct metrics (trials as values), and a reference build beside a
regression, stored through the real ingest pipeline."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from django.utils import timezone

from perfdb.alerting.regressions import regressions_check_upload
from perfdb.models import Alert, ReferenceBuild, Result, Run
from tests.bundles import make_bundle
from tests.dashboards.data import ingest

HEAD = """format = 1
[hardware.S8]
cpus = 8
cpu = "Pentium III"
mhz = 900

[metric.tops]
unit = "TOPS"
better = "higher"
"""

# (kernel, patches, trials of tops): p2 costs ~10 %; p1 and p3 do nothing.
STACK = (
    ("2.5.66", (), (100.0, 101.0, 99.0, 100.5)),
    ("2.5.66", ("p1",), (100.5, 99.5, 100.0, 101.0)),
    ("2.5.66", ("p1", "p2"), (90.0, 91.0, 89.5, 90.5)),
    ("2.5.66", ("p1", "p2", "p3"), (90.5, 90.0, 89.0, 91.0)),
)


def run_toml(kernel, patches, tops, hardware="S8", workload="SJAS", extra="") -> str:
    patch_list = ", ".join(f'"{p}"' for p in patches)
    values = ", ".join(str(v) for v in tops)
    return f"""
[[run]]
workload = "{workload}"
kernel = "{kernel}"
patches = [{patch_list}]
hardware = "{hardware}"
mode = "SMP"
metrics = {{ tops = [{values}] }}
{extra}
"""


def stack_bundle(path: Path, runs=STACK, tail: str = "") -> Path:
    manifest = HEAD + "".join(run_toml(*r) for r in runs) + tail
    return make_bundle(path, {"manifest.toml": manifest})


def load_stack(tmp_path: Path, runs=STACK, tail: str = "", name: str = "stack.tar.gz"):
    return ingest(stack_bundle(tmp_path / name, runs, tail))


# --- a reference build on the hardware (perfdb/features/reference.py) -------------------------

REFERENCE_HW = HEAD.replace(
    "mhz = 900\n", 'mhz = 900\nreference = { kernel = "2.4.20", patches = [] }\n'
)


def _reference_bundle(tmp_path, name, runs):
    return ingest(make_bundle(tmp_path / name, {"manifest.toml": REFERENCE_HW + "".join(runs)}))


def _reference_run(tops):
    return run_toml("2.4.20", (), tops, workload="refbench")


def reference_series(upload):
    return sorted(
        set(Result.objects.filter(run__upload=upload).values_list("setup_id", "metric_id"))
    )


def reference_history(tmp_path):
    """A month-old upload: the reference build (2.4.20 on S8) three times and 2.5.66 stock."""
    old = _reference_bundle(
        tmp_path,
        "old.tar.gz",
        [
            _reference_run((100.0, 100.5)),
            _reference_run((99.5, 100.0)),
            _reference_run((100.2, 100.8)),
            run_toml("2.5.66", (), (100.0, 101.0, 99.0, 100.5)),
        ],
    )
    Run.objects.filter(upload=old).update(created_at=timezone.now() - timedelta(days=30))
    assert ReferenceBuild.objects.filter(hardware__name="S8", kernel__version="2.4.20").exists()


def reference_candidate(tmp_path, ref_tops):
    """An upload of 2.5.66+p1 10 % down beside the reference at ``ref_tops``, checked; its
    regression alert."""
    new = _reference_bundle(
        tmp_path,
        "new.tar.gz",
        [_reference_run(ref_tops), run_toml("2.5.66", ("p1",), (90.0, 91.0, 89.5, 90.5))],
    )
    regressions_check_upload(upload_id=new.pk, series=reference_series(new))
    return Alert.objects.get(candidate_run__patch_set__name="p1", direction="regression")

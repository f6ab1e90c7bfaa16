"""Bundles for issue 13's pages: a patch stack on one kernel with direct metrics (trials as
values), stored through the real ingest pipeline."""

from __future__ import annotations

from pathlib import Path

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

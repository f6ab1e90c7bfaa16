"""A second profiled setup for the kernel-time and profile-diff tests, on top of
``tests.dashboards.data``: the scope then has two setups with kernel time (rooms=10 there,
rooms=5 here), so the page draws two panels.

The profiles are real readprofile listings: 002 (Anand 2003) Tables 5 and 6, as
demo/002-anand-2003-trade27/readprofile/ holds them (2.4-distro and 2.5.59), here under the
builds this bundle's setup runs. The throughputs are tests.bundles' VolanoMark log.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from tests.bundles import make_bundle, volano_log
from tests.dashboards.data import _file, _run, ingest

DEMO = Path(settings.BASE_DIR) / "demo" / "002-anand-2003-trade27" / "readprofile"
# (kernel, patches, listing)
ROOMS_5 = (
    ("2.4.20", (), "table5-2.4-distro.txt"),
    ("2.5.25", ("pri_preempt",), "table6-2.5.59.txt"),
)


def add_rooms_5(tmp_path: Path) -> list[int]:
    """Upload the rooms=5 setup's two profiled runs; their ids."""
    files: dict[str, str | bytes] = {}
    runs = []
    for i, (kernel, patches, listing) in enumerate(ROOMS_5):
        files[f"r{i}.log"] = volano_log(12000 + 500 * i)
        files[f"r{i}.txt"] = (DEMO / listing).read_text()
        names = [_file(f"r{i}.log", "volanomark"), _file(f"r{i}.txt", "readprofile")]
        runs.append(_run(kernel, patches, "rooms = 5, messages = 1000", names))
    files["manifest.toml"] = (
        'format = 1\n[hardware.P8]\ncpus = 8\ncpu = "Pentium III"\nmhz = 700\n' + "\n".join(runs)
    )
    return list(ingest(make_bundle(tmp_path / "rooms5.tar.gz", files)).run_ids)

"""VolanoMark builds at several room counts for the scaling page, and the builds its figure
draws (a fixture and helpers, not tests)."""

from __future__ import annotations

import json

import pytest

from ingest.services import upload_create, upload_ingest
from tests.bundles import make_bundle, manifest_toml, volano_log


def volano_upload(tmp_path, kernels: list[str], rooms: tuple[int, ...] = (5, 10, 25)) -> None:
    """VolanoMark at each number of rooms (one setup each, one scope) on each kernel."""
    runs, files = [], {}
    for kernel in kernels:
        for n in rooms:
            name = f"{kernel}-{n}.log"
            files[name] = volano_log(10000 + 7 * n + len(kernel))
            runs.append(f"""
[[run]]
workload = "VolanoMark"
kernel = "{kernel}"
hardware = "P8"
mode = "UP"
params = {{ rooms = {n} }}
files = [{{ path = "{name}", parser = "volanomark" }}]
""")
    files["manifest.toml"] = manifest_toml(*runs)
    path = make_bundle(tmp_path / f"{kernels[0]}.tar.gz", files)
    with open(path, "rb") as f:
        upload, _ = upload_create(stream=f, filename=path.name)
    upload_ingest(upload_id=upload.pk)


@pytest.fixture
def scaling_runs(tmp_path):
    volano_upload(tmp_path, ["2.4.17", "2.4.20", "2.5.59", "2.5.66"])


def figure_builds(response) -> list[str]:
    page = response.content.decode()
    start = page.index('<script id="fig-scaling"')
    figure = json.loads(page[page.index(">", start) + 1 : page.index("</script>", start)])
    return [trace["name"].split(" ")[0].rstrip(":") for trace in figure["data"]]

"""The scaling page draws the newest builds by default and lets you pick others (URL)."""

from __future__ import annotations

import json

import pytest

from dashboards import pages
from ingest.services import upload_create, upload_ingest
from tests.bundles import make_bundle, manifest_toml, volano_log

pytestmark = pytest.mark.django_db


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


def test_default_is_the_newest_builds_and_a_choice_is_kept_in_the_url(
    client, scaling_runs, monkeypatch
):
    monkeypatch.setattr(pages, "SCALING_MAX_BUILDS", 2)
    default = client.get("/scaling/")
    assert default.status_code == 200
    assert figure_builds(default) == ["2.5.59", "2.5.66"]
    chosen = client.get("/scaling/?builds=2.4.17&builds=2.5.66")
    assert figure_builds(chosen) == ["2.4.17", "2.5.66"]
    assert "builds=2.4.17&amp;builds=2.5.66" in chosen.content.decode()  # the permalink


def test_an_unknown_build_is_a_400(client, scaling_runs):
    response = client.get("/scaling/?builds=9.9.9")
    assert response.status_code == 400 and "builds" in response.content.decode()

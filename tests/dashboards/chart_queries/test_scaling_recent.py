"""dashboards/chart_queries/scaling_recent.py: a scaling chart of the scope's newest builds
drawn from pieces cut to each setup's newest builds is the chart drawn from every point,
whatever builds each setup has; any other view is drawn from every point."""

from __future__ import annotations

import json
import random

import pytest

from dashboards import chart_queries as cq
from dashboards.chart_queries.scaling_recent import build_order
from dashboards.page_data import scaling as scaling_data
from tests.dashboards.scaling_builds import figure_builds, volano_upload

METRIC = {"id": 1, "name": "throughput", "unit": "msg/s", "better": "higher"}
KERNELS = ["2.4.17", "2.4.20", "2.5.59", "2.5.66", "2.6.0", "2.6.1", "2.6.3", "2.6.10"]
PATCHES = [(), ("o1",), ("o1", "preempt"), ("task", "sched")]


def _point(setup: int, run_id: int, kernel: str, patches: tuple[str, ...], x: float):
    """A PiecePoint as cq.scaling_pieces makes it (kernel order, build, x, value, sd, RunInfo)."""
    build = "+".join((kernel, *patches))
    info = (run_id, kernel, patches, "P8", "UP", 1, (("rooms", str(x)),), "")
    return ((kernel, patches, run_id), build, x, float(run_id % 97), None, info)


def _random_pieces(rng: random.Random) -> dict[int, tuple]:
    """Setups of one scope, each on a random subset of builds, a run or two per build."""
    builds = [(k, p) for k in KERNELS for p in PATCHES]
    pieces, run_id = {}, 0
    for setup in range(rng.randint(1, 8)):
        points = []
        for kernel, patches in rng.sample(builds, rng.randint(0, len(builds))):
            for _ in range(rng.randint(1, 2)):
                run_id += 1
                points.append(_point(setup, run_id, kernel, patches, float(setup + 1)))
        rng.shuffle(points)
        pieces[setup] = tuple(points)
    return pieces


def _xs(response) -> dict[str, list[float]]:
    """Each drawn build's x values (rooms), from the page's figure."""
    page = response.content.decode()
    start = page.index('<script id="fig-scaling"')
    figure = json.loads(page[page.index(">", start) + 1 : page.index("</script>", start)])
    return {t["name"].split(":")[0]: t["x"] for t in figure["data"]}


def _chart(pieces, shown: set[str]):
    return cq.scaling_chart(pieces, metric=METRIC, param="rooms", title="t", builds=shown)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("newest", [1, 3, 12])
def test_views_of_the_newest_builds_from_recent_pieces_are_the_whole_chart(seed, newest):
    rng = random.Random(seed)
    whole = _random_pieces(rng)
    recent = [cq.recent_piece(points, newest) for points in whole.values()]
    builds = cq.scaling_builds(whole.values())
    assert cq.builds_of(recent) == builds
    assert cq.newest_builds(recent, newest) == set(builds[-newest:])
    top = builds[-newest:]
    for shown in (set(top), set(rng.sample(top, min(2, len(top))))):
        cut = [points for _, points in recent]
        assert _chart(cut, shown) == _chart(whole.values(), shown)


def test_builds_are_in_kernel_order_stock_first_then_by_name():
    builds = [("2.6.10", "2.6.10", ()), ("2.6.3+o1", "2.6.3", ("o1",)), ("2.6.3", "2.6.3", ())]
    assert [b[0] for b in sorted(builds, key=build_order)] == ["2.6.3", "2.6.3+o1", "2.6.10"]


@pytest.mark.django_db
def test_the_page_draws_old_builds_from_every_point_and_new_ones_from_recent_pieces(
    client, tmp_path, monkeypatch
):
    """Rooms 25 was not measured on the newest kernels, so the newest two builds of rooms 5
    and 10 are the scope's: a view of older builds needs their other points all the same."""
    monkeypatch.setattr(scaling_data, "SCALING_MAX_BUILDS", 2)
    volano_upload(tmp_path, ["2.4.17", "2.4.20", "2.5.59"])
    volano_upload(tmp_path, ["2.5.66", "2.6.0"], rooms=(5, 10))
    default = client.get("/scaling/")
    assert figure_builds(default) == ["2.5.66", "2.6.0"]
    older = client.get("/scaling/?builds=2.4.20&builds=2.5.59&builds=2.6.0")
    assert figure_builds(older) == ["2.4.20", "2.5.59", "2.6.0"]
    assert _xs(older) == {"2.4.20": [5, 10, 25], "2.5.59": [5, 10, 25], "2.6.0": [5, 10]}
    csv = client.get("/scaling/?builds=2.4.17&builds=2.5.59&format=csv").content.decode()
    assert csv.count("2.4.17") == 3 and csv.count("2.5.59") == 3  # every room count

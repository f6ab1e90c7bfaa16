"""The scaling chart's data (dashboards/page_data/scaling.py): a scope's chart made of
per-setup pieces, cached per setup version: after an upload only the pieces of the setups it
wrote to are read again, and the chart is the one read at once; after a new build the
default chart is served as it was and drawn anew in the background, never by a request."""

from __future__ import annotations

import pytest

from dashboards import chart_queries as cq
from dashboards.page_cache import warm
from perfdb import cache as page_cache
from perfdb.cache import cached_per_setup
from perfdb.models import Metric, Run, Setup
from tests.dashboards.scaling_builds import figure_builds, volano_upload

pytestmark = pytest.mark.django_db


def scope_and_metric() -> tuple[list[int], dict]:
    setup_ids = list(Setup.objects.order_by("id").values_list("id", flat=True))
    metric = Metric.objects.filter(results__setup_id__in=setup_ids).values().first()
    return setup_ids, metric


def test_the_chart_from_pieces_is_the_chart_read_at_once(tmp_path):
    volano_upload(tmp_path, ["2.4.17", "2.5.59", "2.4.20"])
    setup_ids, metric = scope_and_metric()
    pieces = cq.scaling_pieces(setup_ids=setup_ids, metric=metric, param="rooms")
    assert sorted(pieces) == setup_ids
    assert all(len(piece) == 3 for piece in pieces.values())  # a run per kernel
    whole = cq.scaling_points(setup_ids=setup_ids, metric=metric, param="rooms", title="t")
    # any order of the pieces gives the chart in kernel order
    shuffled = cq.scaling_chart(
        reversed(list(pieces.values())), metric=metric, param="rooms", title="t"
    )
    assert shuffled == whole
    assert [p.run.kernel for p in whole.points[::3]] == ["2.4.17", "2.4.20", "2.5.59"]


def test_only_the_setups_written_to_are_computed_again():
    asked: list[list[int]] = []

    def compute(setup_ids):
        asked.append(list(setup_ids))
        return {s: f"piece of {s}" for s in setup_ids}

    assert cached_per_setup("t:pieces", [1, 2, 3], compute) == {
        1: "piece of 1",
        2: "piece of 2",
        3: "piece of 3",
    }
    page_cache.runs_added(["9-9-UP"], [2])
    assert cached_per_setup("t:pieces", [1, 2, 3], compute)[2] == "piece of 2"
    page_cache.runs_added(["9-9-UP"])  # its scope only: its setups' pieces stay current
    cached_per_setup("t:pieces", [1, 2, 3], compute)
    page_cache.data_changed()  # runs removed or edited: every piece
    cached_per_setup("t:pieces", [3, 1, 2], compute)
    assert asked == [[1, 2, 3], [2], [3, 1, 2]]


def test_the_page_after_an_upload_shows_it_and_reads_one_setup_again(
    client, tmp_path, django_capture_on_commit_callbacks, monkeypatch
):
    volano_upload(tmp_path, ["2.4.17", "2.4.20"])
    assert figure_builds(client.get("/scaling/")) == ["2.4.17", "2.4.20"]
    asked: list[list[int]] = []
    pieces = cq.scaling_pieces

    def counted(*, setup_ids, **kwargs):
        asked.append(list(setup_ids))
        return pieces(setup_ids=setup_ids, **kwargs)

    with django_capture_on_commit_callbacks(execute=True):
        volano_upload(tmp_path, ["2.5.59"], rooms=(10,))
    (new_run,) = Run.objects.filter(kernel__version="2.5.59")
    monkeypatch.setattr(cq, "scaling_pieces", counted)
    page = client.get("/scaling/")
    assert figure_builds(page) == ["2.4.17", "2.4.20", "2.5.59"]
    assert asked == [[new_run.setup_id]]


def test_the_warm_after_an_upload_leaves_no_runs_for_a_first_visitor_to_read(
    client, tmp_path, monkeypatch
):
    """A scope nobody opened yet: its first scaling page after the warm-up reads no runs."""
    volano_upload(tmp_path, ["2.4.17", "2.4.20"])
    setup = Setup.objects.first()
    warm.pages_after_upload([f"{setup.workload_id}-{setup.hardware_id}-{setup.mode}"])
    asked: list[list[int]] = []
    pieces = cq.scaling_pieces

    def counted(*, setup_ids, **kwargs):
        asked.append(list(setup_ids))
        return pieces(setup_ids=setup_ids, **kwargs)

    monkeypatch.setattr(cq, "scaling_pieces", counted)
    assert figure_builds(client.get("/scaling/")) == ["2.4.17", "2.4.20"]
    assert asked == []


@pytest.mark.django_db(transaction=True)
def test_the_default_scaling_chart_after_a_new_build_is_drawn_in_the_background(
    stale_for_30s, tmp_path, client, monkeypatch
):
    """An upload of a new kernel changes which builds the scaling chart shows by default.
    Its visitors are served the chart as it was (stale like every scope chart: builds and
    figure of one moment) and the chart with the new build is drawn in the background, never
    by a request. Keyed by the builds it shows, the default chart had had no previous value
    once the builds were refreshed: the first visitor after each upload drew it."""
    import tarfile
    import threading

    from dashboards.page_data import scaling, scopes
    from perfdb.cache import refresh
    from tests.bundles import make_bundle
    from tests.dashboards.data import dashboard_bundle, ingest, load

    started, age = stale_for_30s
    drawn_by: list[int] = []
    view = scaling._scaling_view
    monkeypatch.setattr(
        scaling,
        "_scaling_view",
        lambda chart: drawn_by.append(threading.get_ident()) or view(chart),
    )
    load(tmp_path)
    scope = next(s.key for s in scopes.scope_index().scopes if s.has_varying_params)
    url = f"/scaling/?scope={scope}"
    assert "2.6.1" not in client.get(url).content.decode()
    with tarfile.open(dashboard_bundle(tmp_path / "again.tar.gz")) as src:
        files = {m.name: src.extractfile(m).read() for m in src.getmembers()}
    files["manifest.toml"] = files["manifest.toml"].decode().replace('"2.5.25"', '"2.6.1"')
    ingest(make_bundle(tmp_path / "newer.tar.gz", files))  # its commit moves the scope
    drawn_by.clear()
    served = client.get(url)
    assert served.status_code == 200 and "2.6.1" not in served.content.decode()
    assert started, "recomputed in the background"
    refresh.wait_idle()
    age["seconds"] = 31.0  # the page kept whole is too old now: the request makes it
    assert "2.6.1" in client.get(url).content.decode()
    assert drawn_by and threading.get_ident() not in drawn_by, "drawn, but not by a request"

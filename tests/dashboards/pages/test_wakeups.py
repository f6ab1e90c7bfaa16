"""The wakeups page (dashboards/pages/wakeups.py): bars and a heatmap per preemption
threshold, its JSON, and a scope without wakeup counters, over data stored by the real
ingest pipeline."""

from __future__ import annotations

import json

import pytest

from tests.bundles import ingest_bundle, make_bundle, manifest_toml, volano_log, volano_run
from tests.dashboards.page_figures import figure

pytestmark = pytest.mark.django_db


def test_wakeups_has_bars_and_one_heatmap_per_threshold(client, data):
    response = client.get("/wakeups/?value=preempt_pct")
    for chart_id in ("fig-bars", "fig-heatmap_0", "fig-heatmap_40"):
        assert figure(response, chart_id)["data"]
    heat = figure(response, "fig-heatmap_0")["data"][0]
    assert heat["x"] == ["-19", "0"] and heat["y"] == ["-19", "0"]
    assert heat["z"] == [[None, 10.0], [86.6, 28.4]]


def test_wakeups_json(client, data):
    body = json.loads(client.get("/wakeups/?format=json").content)
    row = next(r for r in body["rows"] if r["client_nice"] == -19 and r["preempt_threshold"] == 0)
    assert row["wakeup_calls"] == 4_420_000 and row["throughput_msg_s"] == 13881


def test_wakeups_of_a_setup_without_counters_says_so_and_links_the_ones_with_them(
    client, data, tmp_path
):
    from dashboards.page_data.scopes import scope_index

    run = volano_run("2.6.0", files='{ path = "t.log", parser = "volanomark" }')
    other = manifest_toml(run.replace('hardware = "P8"', 'hardware = "Q4"'), hardware="Q4")
    bundle = make_bundle(tmp_path / "q4.tar.gz", {"manifest.toml": other, "t.log": volano_log(9)})
    assert ingest_bundle(bundle).status == "done"

    scopes = scope_index().scopes
    without = next(s for s in scopes if not s.has_wakeup_params)
    with_them = [s for s in scopes if s.has_wakeup_params]
    response = client.get(f"/wakeups/?scope={without.key}")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="no-wakeups"' in html and "has no wakeup counters" in html
    for scope in with_them:
        assert f'href="?scope={scope.key}"' in html
    # A scope that does not exist at all is still a bad request.
    assert client.get("/wakeups/?scope=999-999-UP").status_code == 400

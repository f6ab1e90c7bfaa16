"""The profile diff page, its downloads and GET /api/profile-diff/, over ingested data."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.http import QueryDict

from dashboards.page_data.profile_diff import diff_from_query
from perfdb.features.profile_diff import IDLE_LINE, SCHEDULER_LINE
from tests.dashboards.page_figures import figure

pytestmark = pytest.mark.django_db


def test_two_runs_rank_functions_and_sum_the_scheduler(client, data):
    base, new = data.run("2.4.20"), data.run("2.5.25")
    response = client.get(f"/profile-diff/?base={base.pk}&new={new.pk}")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Scheduler set" in html and "throughput" in html
    fig = figure(response, "fig-profile-diff")
    labels = [y for trace in fig["data"] for y in trace["y"]]
    assert SCHEDULER_LINE in labels

    api = client.get(f"/api/profile-diff/?base={base.pk}&new={new.pk}").json()
    rows = {r["function"]: r for r in api["rows"]}
    assert api["rows"][0]["function"] == SCHEDULER_LINE
    # schedule: 2000 of the listed ticks on 2.4.20, 2300 on 2.5.25 (tests/dashboards/data.py)
    assert rows["schedule"]["base_ticks"] == 2000 and rows["schedule"]["new_ticks"] == 2300
    movers = [r for r in api["rows"] if r["status"] != "set" and not r["idle"]]
    deltas = [abs(r["delta_share_pp"]) for r in movers]
    assert deltas == sorted(deltas, reverse=True)
    assert [r["function"] for r in api["rows"] if r["idle"]] == [IDLE_LINE, "default_idle"]
    assert api["work_metric"]["name"] == "throughput"
    assert rows["schedule"]["new_ticks_per_work"] is not None


def test_idle_is_listed_apart_and_never_leads_the_busy_functions(client, data):
    """tests/dashboards/data.py's readprofile: default_idle has most ticks on every run."""
    base, new = data.run("2.4.20"), data.run("2.5.25")
    response = client.get(f"/profile-diff/?base={base.pk}&new={new.pk}")
    html = response.content.decode()
    busy = html[html.index('id="profile-diff-rows"') : html.index('id="profile-diff-idle"')]
    idle = html[html.index('id="profile-diff-idle-rows"') :]
    assert "default_idle" not in busy and "<code>default_idle</code>" in idle
    assert 'id="diff-idle"' in html and "of all ticks" in html
    labels = [y for trace in figure(response, "fig-profile-diff")["data"] for y in trace["y"]]
    assert "default_idle" not in labels and IDLE_LINE not in labels
    # Every number is in a cell that never wraps (static/css/site.css: td.num).
    for row in busy.split("<tr")[2:]:
        assert row.count('<td class="num') == row.count("<td") - 2 >= 5, row


def test_builds_of_a_setup_and_the_downloads(client, data):
    base = data.run("2.4.20")
    url = f"/profile-diff/?setup={base.setup_id}&base_build=2.4.20&new_build=2.5.25%2Bpri_preempt"
    page = client.get(url)
    assert page.status_code == 200
    assert "2.5.25+pri_preempt" in page.content.decode()
    text = client.get(url + "&format=csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["function"] == SCHEDULER_LINE and "delta_share_pp" in rows[0]
    assert rows[1]["function"] == IDLE_LINE and rows[1]["idle"] == "True"
    payload = json.loads(client.get(url + "&format=json").content)
    assert payload["columns"][0] == "function" and len(payload["rows"]) == len(rows)


def test_default_page_opens_on_a_profiled_setup(client, data):
    page = client.get("/profile-diff/")
    assert page.status_code == 200
    assert "fig-profile-diff" in page.content.decode()


@pytest.mark.parametrize(
    "query, param",
    [
        ("base=1", "new"),
        ("base=999999&new=999998", "base"),
        ("setup=x", "setup"),
        ("top=99", "top"),
    ],
)
def test_bad_parameters_are_400(client, data, query, param):
    response = client.get(f"/profile-diff/?{query}")
    assert response.status_code == 400
    if param != "top":  # the API has no chart, so no top
        api = client.get(f"/api/profile-diff/?{query}")
        assert api.status_code == 400 and api.json()["param"] == param


def test_reachable_from_compare_run_and_kernel_time(client, data):
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    compare = client.get(f"/compare/?base={base.pk}&new={new.pk}").content.decode()
    assert f"/profile-diff/?base={base.pk}&amp;new={new.pk}" in compare
    run_page = client.get(f"/runs/{new.pk}/").content.decode()
    assert 'id="run-profile-diff"' in run_page
    kernel_time = client.get("/kernel-time/").content.decode()
    assert 'id="profile-diff-link"' in kernel_time


def test_a_diffs_reads_are_pinned(data, django_assert_num_queries):
    """Builds of a setup: the builds (1), each side's runs (2), their keys (1), their ticks
    (2), the shared work metric (1) and each side's work with its trials (4). Runs named:
    the same less the builds and runs."""
    base, new = data.run("2.4.20"), data.run("2.5.25")
    query = QueryDict(f"setup={base.setup_id}&base_build=2.4.20&new_build=2.5.25")
    with django_assert_num_queries(11):
        assert diff_from_query(query) is not None
    with django_assert_num_queries(8):
        assert diff_from_query(QueryDict(f"base={base.pk}&new={new.pk}")) is not None

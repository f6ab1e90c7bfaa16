"""The compare page (dashboards/pages/compare.py): picking sides from a set-up's builds and the
recent runs, builds and set-ups by name, rows in the page's order with alerts linked, over
data stored by the real ingest pipeline (tests/dashboards/data.py).

The compare page's rows and download."""

from __future__ import annotations

import csv
import io
import re
from html import unescape
from statistics import fmean

import pytest

from dashboards.page_data.compare import note_parts
from perfdb.models import Metric, Run
from tests.bundles import ingest_bundle, make_bundle, manifest_toml, volano_log, volano_run
from tests.dashboards.data import (
    SERIES,
    kept,
)
from tests.dashboards.page_figures import figure
from tests.factories import make_alert

pytestmark = pytest.mark.django_db


def rows(html: str) -> list[str]:
    """The metric of each compare row, in page order."""
    return re.findall(r'<tr class="verdict-[^"]*" data-metric="([^"]+)"', html)


def test_the_picker_lists_a_setups_builds_with_their_run_ids(client, data):
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    html = client.get(f"/compare/?setup={base.setup_id}").content.decode()
    builds = re.findall(r'<tr data-text="([^"]+)"><td><code>', html)
    # newest kernel first, stock before patched
    assert builds == ["2.5.25", "2.5.25+pri_preempt", "2.4.20", "2.3.99-pre3"]
    assert f'name="base" value="{base.pk}" class="pick" data-side="base"' in html
    assert f'name="new" value="{new.pk}" class="pick" data-side="new"' in html
    assert 'id="compare-rows"' not in html  # nothing compared yet


def test_ticked_builds_submitted_without_script_are_pooled(client, data):
    """The form without compare.js: each ticked build sends its run ids as one more base=."""
    a, b, c = data.run("2.4.20"), data.run("2.3.99-pre3"), data.run("2.5.25", "pri_preempt")
    html = client.get(f"/compare/?base={a.pk}&base={b.pk}&new={c.pk}").content.decode()
    assert f"#{a.pk} 2.4.20" in html and f"#{b.pk} 2.3.99-pre3" in html
    # the picker opens on the baseline's set-up, the chosen builds ticked on their side
    assert re.search(rf'value="{a.pk}" class="pick" data-side="base" checked', html)
    assert re.search(rf'value="{c.pk}" class="pick" data-side="new" checked', html)


def test_builds_by_name_in_a_setup_by_name(client, data):
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    named = client.get(
        "/compare/?setup=VolanoMark/P8/UP/rooms=10,messages=1000"
        "&base_build=2.5.25&new_build=2.5.25%2Bpri_preempt"
    )
    by_id = client.get(f"/compare/?base={base.pk}&new={new.pk}")
    assert named.status_code == 200
    assert rows(named.content.decode()) == rows(by_id.content.decode())
    api = client.get(
        f"/api/compare/?setup={base.setup_id}&base_build=2.5.25&new_build=2.5.25%2Bpri_preempt"
    ).json()
    assert (api["base"], api["new"]) == ([base.pk], [new.pk])


@pytest.mark.parametrize(
    "query, says",
    [
        # several set-ups (rooms 5, 10, 20 and the wakeup grid) under one workload/hardware/mode
        ("setup=VolanoMark/P8/UP&base_build=2.5.25&new_build=2.4.20", "add the parameters"),
        ("setup=VolanoMark/P8/SMP&base_build=2.5.25&new_build=2.4.20", "no set-up"),
        (
            "setup=VolanoMark/P8/UP/rooms=10,messages=1000&base_build=9.9&new_build=2.4.20",
            "no build '9.9'",
        ),
        ("base_build=2.5.25&new_build=2.4.20", "give the set-up"),
        ("setup=VolanoMark&base_build=2.5.25", "workload/hardware/mode"),
    ],
)
def test_a_name_that_is_unknown_or_ambiguous_is_a_400_saying_so(client, data, query, says):
    response = client.get(f"/compare/?{query}")
    assert response.status_code == 400
    assert says in unescape(response.content.decode())


def test_one_run_alone_is_compared_with_the_baseline_its_run_page_names(client, data):
    """The upload page links each run as /compare/?new=ID: a patched build against its
    kernel's stock run, a stock kernel against the one before; the first kernel of a series
    has none, which the 400 says."""
    patched, stock = data.run("2.5.25", "pri_preempt"), data.run("2.5.25")
    alone = client.get(f"/compare/?new={patched.pk}")
    assert alone.status_code == 200
    both = client.get(f"/compare/?base={stock.pk}&new={patched.pk}")
    assert rows(alone.content.decode()) == rows(both.content.decode())
    first = min(
        Run.objects.filter(setup_id=stock.setup_id, patch_set__name="").select_related("kernel"),
        key=lambda r: r.kernel.sort_key,
    )
    response = client.get(f"/compare/?new={first.pk}")
    assert response.status_code == 400 and "has no baseline" in unescape(response.content.decode())


def test_rows_lead_with_the_headline_metric_and_vmstat_last(client, data):
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    html = client.get(f"/compare/?base={base.pk}&new={new.pk}").content.decode()
    order = rows(html)
    assert order[0] == "throughput"
    assert re.search(r'<tr class="verdict-[a-z-]+ headline" data-metric="throughput">', html)
    directed = {m.name for m in Metric.objects.exclude(better="none")}
    led = [i for i, name in enumerate(order) if name in directed]
    undirected = [i for i, name in enumerate(order) if name not in directed]
    assert led == list(range(len(led))) and min(undirected) == len(led)
    assert all(order[i].startswith(("vmstat_", "messages_", "kernel_")) for i in undirected)
    assert 'id="rows-filter"' in html
    assert not re.search(r"\d[eE][+-]\d", re.sub(r"<script.*?</script>", "", html, flags=re.S))


def test_an_alert_named_in_a_row_is_a_link(client, data):
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    alert = make_alert(new, Metric.objects.get(name="throughput"), "pending", "improvement", 5)
    html = client.get(f"/compare/?base={base.pk}&new={new.pk}").content.decode()
    assert f'<a href="/alerts/{alert.pk}/">alert {alert.pk}</a>' in html


def test_a_note_names_its_alerts_apart_from_its_text():
    parts = note_parts("cleared <b> (alert 12): runs 3 moved; alert 4")
    assert parts == [
        ("cleared <b> (", None),
        ("alert 12", 12),
        ("): runs 3 moved; ", None),
        ("alert 4", 4),
    ]
    assert note_parts("") == [] and note_parts("no alert here") == [("no alert here", None)]


def test_the_compared_page_reads_a_bounded_number_of_queries(
    client, data, django_assert_max_num_queries
):
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    client.get(f"/compare/?base={base.pk}&new={new.pk}")  # the scope index, cached
    with django_assert_max_num_queries(QUERIES):
        assert client.get(f"/compare/?base={base.pk}&new={new.pk}").status_code == 200


# The compare rows (run infos, values, summaries, the series' contexts and alerts), the
# attribution and profile checks, and the pickers: the baseline's set-up, its scope's set-ups,
# its builds, the recent runs. Pinned so a picker that reads per build or per run shows.
QUERIES = 30


# --- the run page: one profile per trial ---------------------------------------------------------

PROFILE = """ {total} total                                    0.02
  {idle} default_idle                             110.48
  {sched} {name}                                 1.52
"""


def test_the_run_page_keeps_the_profiles_of_two_trials_apart(client, tmp_path):
    files = (
        '{ path = "t1.log", parser = "volanomark", trial = 1 }, '
        '{ path = "t2.log", parser = "volanomark", trial = 2 }, '
        '{ path = "p1.txt", parser = "readprofile", trial = 1 }, '
        '{ path = "p2.txt", parser = "readprofile", trial = 2 }'
    )
    bundle = make_bundle(
        tmp_path / "prof.tar.gz",
        {
            "manifest.toml": manifest_toml(volano_run("2.5.25", files=files)),
            "t1.log": volano_log(13000),
            "t2.log": volano_log(13100),
            "p1.txt": PROFILE.format(total=1000, idle=600, sched=300, name="schedule"),
            "p2.txt": PROFILE.format(total=2000, idle=900, sched=800, name="try_to_wake_up"),
        },
    )
    upload = ingest_bundle(bundle)
    assert upload.status == "done", upload.error
    html = client.get(f"/runs/{upload.run_ids[0]}/").content.decode()
    one = html.index('id="profile-trial-1-readprofile"')
    two = html.index('id="profile-trial-2-readprofile"')
    first, second = html[one:two], html[two:]
    assert '<th class="num">Trial</th>' in first
    assert "<code>schedule</code>" in first and "try_to_wake_up" not in first
    assert "<code>try_to_wake_up</code>" in second and "<code>schedule</code>" not in second
    assert re.search(r'<td class="num">2</td><td><code>try_to_wake_up</code>', second)


# --- /activity/: every stored time series --------------------------------------------------------

SERIES_CSV = (
    "series,column,index,value\n"
    "sar,cswch_s,0,100\nsar,cswch_s,1,250\nsar,proc_s,0,3\nsar,proc_s,1,4\n"
)


def test_activity_shows_any_time_series_source_with_its_own_columns(client, data, tmp_path):
    files = '{ path = "t.log", parser = "volanomark" }, { path = "sar.csv", parser = "csv" }'
    bundle = make_bundle(
        tmp_path / "sar.tar.gz",
        {
            "manifest.toml": manifest_toml(volano_run("2.6.0", files=files)),
            "t.log": volano_log(13000),
            "sar.csv": SERIES_CSV,
        },
    )
    upload = ingest_bundle(bundle)
    assert upload.status == "done", upload.error
    (run_id,) = upload.run_ids
    html = client.get("/activity/").content.decode()
    assert '<option value="sar">sar</option>' in html  # the source picker
    response = client.get(f"/activity/?source=sar&runs={run_id}")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Columns of sar" in html
    assert 'name="groups" value="cswch_s" checked' in html
    fig = figure(response, "fig-vmstat")
    assert {t["name"].split(":")[0] for t in fig["data"]} == {"cswch_s", "proc_s"}
    cs = next(t for t in fig["data"] if t["name"].startswith("cswch_s"))
    assert cs["y"] == [100, 250]
    # The run picker of a source lists only runs that have it.
    assert f'value="{run_id}"' in html
    assert f'value="{data.run("2.4.20").pk}"' not in html
    # vmstat stays the default and keeps its groups.
    assert client.get("/activity/?groups=disk").status_code == 400
    assert client.get("/activity/?source=nope").status_code == 400


def test_compare_page_shows_mean_sd_n_and_change(client, data):
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    response = client.get(f"/compare/?base={base.pk}&new={new.pk}")
    html = response.content.decode()
    base_values, new_values = kept(SERIES[1][3], True), list(SERIES[2][3])
    change = (fmean(new_values) - fmean(base_values)) / fmean(base_values) * 100
    assert f"{change:+.1f} % better" in html
    assert f"({len(base_values)})" in html
    assert figure(response, "fig-compare")["data"]


def test_compare_download(client, data):
    base, new = data.run("2.4.20"), data.run("2.3.99-pre3")
    response = client.get(f"/compare/?base={base.pk}&new={new.pk}&format=csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    row = next(r for r in rows if r["metric"] == "throughput")
    assert row["confidence"] == "single value" and row["more_runs_needed"] == "True"

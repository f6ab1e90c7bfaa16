"""The across-kernels page's alerts (dashboards/pages/kernels.py,
dashboards/page_data/series_data.py): the marks drawn into its figure (/kernels/figure/),
never older than the alerts, and the series a page naming no set-up opens on.

The kernels page's pickers are rendered once and cached as HTML (dashboards/pages/kernels.py):
they reach the page as options, not as escaped text, and what a user typed in them (a run's
label) stays escaped.

The across-kernels page's chart and downloads."""

from __future__ import annotations

import csv
import io
import json
import re
from statistics import fmean

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from perfdb.alerting.triage import alert_triage
from perfdb.cache import runs_added, scope_key
from perfdb.models import Metric, Run
from tests.bundles import make_bundle
from tests.dashboards.data import (
    SERIES,
    base_setup,
    kept,
    load,
    throughput_id,
)
from tests.dashboards.page_figures import figure
from tests.factories import make_alert
from tests.perfdb.alerting.builds import check, ingest_runs

pytestmark = pytest.mark.django_db


def _marks(response) -> list[dict]:
    """The alert traces of a /kernels/figure/ answer (drawn after the series' own)."""
    data = json.loads(response.content)["data"]
    return [t for t in data if t.get("legendgroup") == "alerts"]


def _alert_sql(queries) -> list[str]:
    return [q["sql"] for q in queries if '"perfdb_alert"' in q["sql"]]


def test_the_figure_carries_the_marks_and_shows_every_alert_write_at_once(
    client, data, django_assert_num_queries, django_capture_on_commit_callbacks
):
    """The marks are cached under the series' alerts version: the second read of the figure
    makes no query, and an alert created, triaged or deleted is drawn by the next one."""
    throughput = Metric.objects.get(name="throughput")
    run = data.run("2.5.25")
    alert = make_alert(run, throughput)
    url = f"/kernels/figure/?setup={run.setup_id}&metric={throughput.pk}"
    (trace,) = _marks(client.get(url))
    assert json.loads(client.get(url).content)["data"][-1] == trace, "drawn over the series"
    assert trace["name"] == "alert: open regression"
    assert trace["customdata"] == [f"/alerts/{alert.pk}/"] and trace["x"] == ["2.5.25"]
    with django_assert_num_queries(0):  # figure and marks from the cache
        assert _marks(client.get(url)) == [trace]
    staff = User.objects.create_user("triager", is_staff=True)
    with django_capture_on_commit_callbacks(execute=True):
        alert_triage(alert_id=alert.pk, user=staff, status="fixed")
    (trace,) = _marks(client.get(url))
    assert trace["name"] == "alert: triaged"
    with django_capture_on_commit_callbacks(execute=True):
        pending = make_alert(data.run("2.4.20"), throughput, status="pending")
    assert [t["name"] for t in _marks(client.get(url))] == ["alert: pending", "alert: triaged"]
    with django_capture_on_commit_callbacks(execute=True):
        pending.delete()
    assert [t["name"] for t in _marks(client.get(url))] == ["alert: triaged"]


def test_an_upload_to_the_setup_reads_the_series_again_not_its_alerts(
    client, data, django_capture_on_commit_callbacks
):
    throughput = Metric.objects.get(name="throughput")
    run = data.run("2.5.25")
    make_alert(run, throughput)
    url = f"/kernels/figure/?setup={run.setup_id}&metric={throughput.pk}"
    before = client.get(url).content
    setup = run.setup
    runs_added([scope_key(setup.workload_id, setup.hardware_id, setup.mode)], [setup.pk])
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).content == before
    assert queries.captured_queries, "the figure was not made again"
    assert _alert_sql(queries.captured_queries) == []


def test_a_series_without_alerts_has_no_marks(client, data):
    run = data.run("2.5.25")
    metric = Metric.objects.get(name="throughput")
    response = client.get(f"/kernels/figure/?setup={run.setup_id}&metric={metric.pk}")
    assert response.status_code == 200 and json.loads(response.content)["data"]
    assert _marks(response) == []


def test_the_marks_follow_the_pages_baseline(client, data):
    throughput = Metric.objects.get(name="throughput")
    run, base = data.run("2.5.25"), data.run("2.4.20")
    make_alert(run, throughput)
    query = f"setup={run.setup_id}&metric={throughput.pk}"
    absolute = _marks(client.get(f"/kernels/figure/?{query}"))[0]["y"][0]
    relative = _marks(client.get(f"/kernels/figure/?{query}&baseline={base.pk}"))[0]["y"][0]
    assert relative == pytest.approx(absolute / 12000 * 100)


def test_a_page_naming_no_setup_opens_on_the_newest_open_regression(client, data):
    throughput = Metric.objects.get(name="throughput")
    run = data.run("2.4.20", rooms=20)
    make_alert(run, throughput)
    html = client.get("/kernels/").content.decode()
    query = f"setup={run.setup_id}&amp;metric={throughput.pk}"
    assert f'data-src="/kernels/figure/?{query}"' in html
    assert "data-overlay" not in html, "the marks come with the figure"
    assert "an alert's marker to open the alert" in html
    assert f'<option value="{run.setup_id}" selected>' in html


def test_without_an_open_regression_the_page_opens_on_the_busiest_setup(client, data):
    throughput = Metric.objects.get(name="throughput")
    make_alert(data.run("2.4.20", rooms=20), throughput, status="fixed")
    busiest = data.run("2.4.20").setup_id  # the series of every kernel, rooms = 10
    html = client.get("/kernels/").content.decode()
    assert f'<option value="{busiest}" selected>' in html


def test_a_setup_and_metric_by_name_open_the_same_series(client, data):
    """``setup=workload/hardware/mode/k=v`` as the compare page takes it, and the metric's
    name: the page (and its figure) charts the series the ids name."""
    run = data.run("2.5.25")
    throughput = Metric.objects.get(name="throughput")
    named = client.get("/kernels/?setup=VolanoMark/P8/UP/rooms=10,messages=1000&metric=throughput")
    by_id = client.get(f"/kernels/?setup={run.setup_id}&metric={throughput.pk}")
    assert named.status_code == 200
    src = f"/kernels/figure/?setup={run.setup_id}&amp;metric={throughput.pk}"
    assert src in named.content.decode() and src in by_id.content.decode()
    figure = client.get("/kernels/figure/?setup=VolanoMark/P8/UP/rooms=10,messages=1000")
    assert figure.content == client.get(f"/kernels/figure/?setup={run.setup_id}").content


@pytest.mark.parametrize(
    "query, param, says",
    [
        ("setup=VolanoMark/P8/UP", "setup", "add the parameters"),
        ("setup=VolanoMark/P8/SMP", "setup", "no set-up"),
        ("setup=VolanoMark/P8/UP/rooms=7", "setup", "no set-up"),
        ("setup=VolanoMark", "setup", "workload/hardware/mode"),
        ("setup=VolanoMark/P8/UP/rooms=10,messages=1000&metric=speed", "metric", "no metric"),
    ],
)
def test_a_name_that_is_unknown_or_ambiguous_is_a_400_saying_so(client, data, query, param, says):
    response = client.get(f"/kernels/?{query}")
    assert response.status_code == 400
    text = response.content.decode()
    assert f"parameter <code>{param}</code>" in text and says in text


def test_the_alert_a_check_writes_is_drawn_by_the_next_figure(
    client, tmp_path, django_capture_on_commit_callbacks
):
    """Through the real writers: the regression check's alert moves its series'
    alerts version when it commits, so a figure read before the check is not served after it."""
    with django_capture_on_commit_callbacks(execute=True):
        check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
    run = Run.objects.get()
    throughput = Metric.objects.get(name="throughput")
    url = f"/kernels/figure/?setup={run.setup_id}&metric={throughput.pk}"
    assert _marks(client.get(url)) == []
    with django_capture_on_commit_callbacks(execute=True):
        check(ingest_runs(tmp_path, "b.tar.gz", [("2.4.20", '["O(1)"]', (11000, 11100, 11050))]))
    (trace,) = _marks(client.get(url))
    assert trace["name"] == "alert: open regression"


def _select(html: str, name: str) -> str:
    found = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert found, f"no {name} picker"
    return found.group(1)


@pytest.mark.parametrize("query", ["", "?baseline={base}"])
def test_every_picker_holds_options_not_escaped_text(client, tmp_path, query):
    data = load(tmp_path)
    base = data.run("2.4.20")
    html = client.get(f"/kernels/{query.format(base=base.pk)}").content.decode()
    for name in ("scope", "setup", "metric", "baseline"):
        options = _select(html, name)
        assert "&lt;option" not in options, name
        assert "<option" in options, name
    assert f'<option value="{base.pk}"' in _select(html, "baseline")


def test_a_label_with_markup_stays_text_in_the_baseline_picker(client, tmp_path):
    data = load(tmp_path)
    run = data.run("2.4.20")
    Run.objects.filter(pk=run.pk).update(label='<b onmouseover="x()">lab</b>')
    html = client.get(f"/kernels/?setup={run.setup_id}").content.decode()
    baseline = _select(html, "baseline")
    assert "<b " not in baseline
    assert "&lt;b onmouseover=" in baseline


def test_the_page_after_an_upload_is_the_page_made_from_nothing(
    client, series, tmp_path, django_capture_on_commit_callbacks
):
    """The baseline options are kept per point with the series and joined: after an
    upload the page (its new run's option in its place, the chosen one selected) is the
    page made on an emptied cache."""
    from django.core.cache import cache

    from tests.dashboards.data import ingest
    from tests.dashboards.series_data import NEW_RUN

    setup, metric = series
    base = Run.objects.get(setup=setup, label="Base1")
    url = f"/kernels/?setup={setup.pk}&metric={metric.pk}&baseline={base.pk}"
    assert client.get(url).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        ingest(make_bundle(tmp_path / "new.tar.gz", {"manifest.toml": NEW_RUN}))
    after = client.get(url).content.decode()
    cache.clear()
    assert client.get(url).content.decode() == after
    added = Run.objects.get(setup=setup, kernel__version="2.6.0")
    options = _select(after, "baseline")
    assert options.index(f'<option value="{base.pk}" selected>') < options.index(
        f'<option value="{added.pk}">'
    )
    assert options.count(" selected") == 1


def test_the_setup_picker_counts_the_new_run_and_selects_the_setup_shown(
    client, series, tmp_path, django_capture_on_commit_callbacks
):
    """The setup options are rendered once per scope version and joined, the shown setup's
    rendered again selected: after an upload its run count is the new one, as on a page
    made from nothing, and only it is selected."""
    from django.core.cache import cache

    from tests.dashboards.data import ingest
    from tests.dashboards.series_data import NEW_RUN

    setup, metric = series
    url = f"/kernels/?setup={setup.pk}&metric={metric.pk}"
    runs = Run.objects.filter(setup=setup).count()
    before = _select(client.get(url).content.decode(), "setup")
    assert re.search(rf'<option value="{setup.pk}" selected>[^<]*\({runs} runs\)', before)
    with django_capture_on_commit_callbacks(execute=True):
        ingest(make_bundle(tmp_path / "new.tar.gz", {"manifest.toml": NEW_RUN}))
    after = _select(client.get(url).content.decode(), "setup")
    assert re.search(rf'<option value="{setup.pk}" selected>[^<]*\({runs + 1} runs\)', after)
    assert after.count(" selected") == 1
    cache.clear()
    assert _select(client.get(url).content.decode(), "setup") == after


def test_kernels_are_in_kernel_order_with_stock_and_patched_lines(client, data):
    setup = base_setup()
    fig = figure(client.get(f"/kernels/?setup={setup.pk}&metric={throughput_id()}"), "fig-kernels")
    assert fig["layout"]["xaxis"]["categoryarray"] == ["2.3.99-pre3", "2.4.20", "2.5.25"]
    names = [t["name"] for t in fig["data"]]
    assert names == ["stock kernels", "+pri_preempt"]
    stock = fig["data"][0]
    expected = [fmean(kept(v, d)) for k, p, _, v, d in sorted(SERIES, key=_order) if not p]
    assert stock["y"] == pytest.approx(expected)
    assert stock["customdata"] == [data.run(k).pk for k in ("2.3.99-pre3", "2.4.20", "2.5.25")]


def _order(row):
    return ["2.3.99-pre3", "2.4.20", "2.5.25"].index(row[0])


def test_relative_mode_calls_the_baseline_run_100(client, data):
    setup, base1 = base_setup(), data.run("2.4.20")
    url = f"/kernels/?setup={setup.pk}&metric={throughput_id()}&baseline={base1.pk}"
    response = client.get(url)
    fig = figure(response, "fig-kernels")
    base_value = fmean(SERIES[0][3])
    patched = fig["data"][1]
    assert patched["y"] == pytest.approx([fmean(SERIES[2][3]) / base_value * 100])
    assert "Base1 = 100" in fig["layout"]["yaxis"]["title"]["text"]
    assert f"baseline={base1.pk}" in response.content.decode()  # permalink keeps it


def test_a_metric_of_another_setup_falls_back_with_a_note(client, data):
    other = Metric.objects.get(name="wakeup_calls")
    response = client.get(f"/kernels/?setup={base_setup().pk}&metric={other.pk}")
    assert response.status_code == 200
    assert "has no results here" in response.content.decode()


def test_kernels_csv_download_has_the_means_without_warmup(client, data):
    url = f"/kernels/?setup={base_setup().pk}&metric={throughput_id()}&format=csv"
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    by_build = {(r["kernel"], r["patches"]): r for r in rows}
    warm = SERIES[1]
    row = by_build[("2.5.25", "stock")]
    assert float(row["mean"]) == pytest.approx(fmean(kept(warm[3], warm[4])))
    assert int(row["n"]) == len(warm[3]) - 1
    assert by_build[("2.4.20", "stock")]["params"] == "messages=1000, rooms=10"


def test_kernels_json_download(client, data):
    url = f"/kernels/?setup={base_setup().pk}&metric={throughput_id()}&format=json"
    body = json.loads(client.get(url).content)
    assert body["columns"][:2] == ["run_id", "kernel"]
    assert [r["kernel"] for r in body["rows"]] == ["2.3.99-pre3", "2.4.20", "2.5.25", "2.5.25"]
    assert body["rows"][0]["sd"] is None  # one trial: no sd

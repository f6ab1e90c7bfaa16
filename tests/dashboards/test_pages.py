"""The comparison pages and their downloads, over data stored by the real ingest pipeline."""

from __future__ import annotations

import csv
import io
import json
from statistics import fmean

import pytest
from django.urls import reverse

from perfdb.alerting.email_render import render
from perfdb.models import Alert, Hardware, Metric, Run, Setup
from tests.bundles import ingest_bundle, make_bundle, manifest_toml, volano_log, volano_run
from tests.dashboards.data import HOSTILE, HOSTILE_PATCH, ROOMS, SCALING, SERIES
from tests.dashboards.kernel_time_data import add_rooms_5
from tests.dashboards.page_figures import figure
from tests.factories import AlertFactory, SetupFactory

pytestmark = pytest.mark.django_db

PAGES = ("/kernels/", "/scaling/", "/kernel-time/", "/wakeups/", "/activity/", "/compare/")


def kept(values: tuple[int, ...], discard: bool) -> list[int]:
    return list(values[1:] if discard else values)


def throughput_id() -> int:
    return Metric.objects.get(name="throughput").pk


def base_setup() -> Setup:
    return Setup.objects.get(params={"rooms": 10, "messages": 1000})


# --- every page ------------------------------------------------------------------------


@pytest.mark.parametrize("url", PAGES)
def test_each_page_without_data_says_what_to_upload(client, url):
    response = client.get(url)
    assert response.status_code == 200
    assert "Upload a result bundle" in response.content.decode() or (
        url == "/compare/" and "No runs yet" in response.content.decode()
    )


@pytest.mark.parametrize(
    "url, chart_id",
    [
        ("/kernels/", "fig-kernels"),
        ("/scaling/", "fig-scaling"),
        ("/kernel-time/", "fig-kernel-time"),
        ("/kernel-time/", "fig-functions"),
        ("/wakeups/", "fig-bars"),
        ("/activity/", "fig-vmstat"),
    ],
)
def test_each_page_draws_its_chart_with_the_local_plotly(client, data, url, chart_id):
    response = client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/vendor/plotly/plotly-perfdb.min.js" in html and "cdn" not in html.lower()
    assert figure(response, chart_id)["data"], "the chart has no traces"
    for page in PAGES:  # the shared navigation links every page
        assert f'href="{page}"' in html


def test_navigation_is_on_every_page(client, data):
    html = client.get("/").content.decode()
    assert all(f'href="{page}"' in html for page in PAGES)


# --- bad parameters are a 400 naming the parameter -------------------------------------


@pytest.mark.parametrize(
    "url, param",
    [
        ("/kernels/?setup=abc", "setup"),
        ("/kernels/?setup=999999", "setup"),
        ("/kernels/?metric=-3", "metric"),
        ("/kernels/?baseline=999999", "baseline"),
        ("/kernels/?format=xml", "format"),
        ("/kernels/?format=csv&chart=nope", "chart"),
        ("/scaling/?scope=1-2-XX", "scope"),
        ("/scaling/?param=heap", "param"),
        ("/scaling/?param=rooms&rest=messages%3D1", "rest"),
        ("/kernel-time/?top=0", "top"),
        ("/kernel-time/?top=ten", "top"),
        ("/kernel-time/?param=nope", "param"),
        ("/wakeups/?value=latency", "value"),
        ("/wakeups/?build=9.9.9", "build"),
        ("/activity/?runs=1;2", "runs"),
        ("/activity/?runs=999999", "runs"),
        ("/activity/?groups=disk", "groups"),
        ("/compare/?base=1", "new"),
        ("/compare/?new=1", "base"),
        ("/compare/?base=x&new=1", "base"),
        ("/compare/?base=999998&new=999999", "base"),
        ("/api/compare/?base=1,2", "new"),
    ],
)
def test_a_bad_parameter_is_a_400_that_names_it(client, data, url, param):
    response = client.get(url)
    assert response.status_code == 400
    body = response.content.decode()
    assert (f"<code>{param}</code>" in body) or (json.loads(body)["param"] == param)


def test_the_same_run_on_both_sides_is_refused(client, data):
    run = data.run("2.4.20")
    response = client.get(f"/compare/?base={run.pk}&new={run.pk}")
    assert response.status_code == 400 and "both sides" in response.content.decode()


# --- escaping ----------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/", "/kernels/", "/wakeups/", "/kernel-time/", "/activity/"])
def test_hostile_notes_and_patch_names_never_reach_the_page_as_markup(client, data, url):
    if url == "/activity/":
        url += f"?runs={data.run('2.4.20').pk}"
    html = client.get(url).content.decode()
    assert HOSTILE not in html and HOSTILE_PATCH not in html
    assert "<script>alert" not in html and "<img src=x" not in html


def test_the_hostile_text_is_shown_escaped(client, data):
    html = client.get("/wakeups/").content.decode()
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # the build picker, autoescaped
    fig = figure(client.get("/kernels/"), "fig-kernels")
    hovers = " ".join(h for trace in fig["data"] for h in trace["hovertext"])
    assert "&lt;script&gt;alert(&#x27;pwn&#x27;)" in hovers or "&lt;script&gt;" in hovers


# --- across kernels ------------------------------------------------------------------------


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


def test_csv_cells_that_look_like_formulas_are_defused(client, data):
    from dashboards.web.exports import csv_cell

    assert csv_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)" and csv_cell(-3.5) == -3.5


# --- scaling -----------------------------------------------------------------------------


def test_scaling_draws_one_line_per_build_with_change_first_to_last(client, data):
    response = client.get(f"/scaling/?metric={throughput_id()}&param=rooms")
    fig = figure(response, "fig-scaling")
    by_name = {t["name"].split(":")[0]: t for t in fig["data"]}
    for kernel, values in SCALING.items():
        # rooms = 10 on these kernels is the series run, whose value is its mean
        series_row = next(s for s in SERIES if s[0] == kernel and not s[1])
        expected = list(values)
        expected[ROOMS.index(10)] = fmean(kept(series_row[3], series_row[4]))
        trace = by_name[kernel]
        assert trace["x"] == list(ROOMS) and trace["y"] == pytest.approx(expected)
        change = (expected[-1] - expected[0]) / expected[0] * 100
        assert f"{change:+.1f}%" in trace["name"]


def test_scaling_holds_the_other_parameters_fixed():
    from dashboards.pure.selection import Scope

    def setup(i, **params):
        return {"id": i, "params": params}

    scope = Scope(
        "1-1-UP",
        "x",
        (
            setup(1, rooms=5, nice=0),
            setup(2, rooms=10, nice=0),
            setup(3, rooms=20, nice=0),
            setup(4, rooms=5, nice=-19),
            setup(5, rooms=10, nice=-19),
            setup(6, rooms=10, nice=19),  # one value of rooms: no line
        ),
    )
    assert scope.varying_params() == ["rooms", "nice"]  # the usual x axis first
    assert scope.held_fixed("rooms") == {"nice=0": [1, 2, 3], "nice=-19": [4, 5]}


def test_scaling_csv(client, data):
    response = client.get(f"/scaling/?metric={throughput_id()}&param=rooms&format=csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert {float(r["param_value"]) for r in rows} == {float(r) for r in ROOMS}


# --- kernel time -------------------------------------------------------------------------


@pytest.mark.parametrize("top", [3, 5])
def test_top_n_functions_comes_from_the_url(client, data, top):
    response = client.get(f"/kernel-time/?top={top}")
    fig = figure(response, "fig-functions")
    names = [t["name"] for t in fig["data"]]
    assert len(names) == top + 2 and names[-2:] == ["other", "idle"]  # the top N busy ones
    assert "default_idle" not in names  # most of data.py's ticks, but idle: apart


def test_kernel_time_draws_a_panel_per_setup_labelled_by_build(client, data, tmp_path):
    add_rooms_5(tmp_path)
    response = client.get("/kernel-time/")
    fig = figure(response, "fig-kernel-time")
    panels = [k for k in fig["layout"] if k.startswith("xaxis")]
    drawn = {(t["xaxis"], tuple(t["customdata"])) for t in fig["data"]}
    assert len(panels) == len(fig["layout"]["annotations"]) == len(drawn) == 2
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert titles == ["<b>rooms=5</b> · 2 runs", "<b>rooms=10</b> · 4 runs"]
    labels = {x for t in fig["data"] for x in t["x"]}
    assert "2.5.25+pri_preempt" in labels and not any("rooms" in x for x in labels)


def test_kernel_time_values_come_from_readprofile(client, data):
    body = json.loads(client.get("/kernel-time/?format=json&chart=kernel-time").content)
    row = next(r for r in body["rows"] if r["kernel"] == "2.4.20")
    total, idle, sched = 20000, 8000, 2000  # run 0 of the bundle
    busy = (total - idle) / total * 100
    assert row["kernel_pct"] == pytest.approx(busy)
    assert row["scheduler_pct"] == pytest.approx(sched / (total - idle) * 100 * busy / 100)


def test_kernel_functions_download(client, data):
    response = client.get("/kernel-time/?format=csv&chart=kernel-functions")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    row = next(r for r in rows if r["kernel"] == "2.4.20" and r["function"] == "schedule")
    assert float(row["share_pct"]) == pytest.approx(2000 / 20000 * 100)


# --- wakeups -------------------------------------------------------------------------------


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


# --- activity ----------------------------------------------------------------------------


def test_activity_overlays_the_runs_given(client, data):
    a, b = data.run("2.4.20"), data.run("2.5.25")
    response = client.get(f"/activity/?runs={a.pk},{b.pk}&groups=cpu")
    fig = figure(response, "fig-vmstat")
    assert {t["customdata"][0] for t in fig["data"]} == {a.pk, b.pk}
    assert {t["name"].split(":")[0] for t in fig["data"]} == {"us", "sy", "id", "wa"}


def test_activity_csv_leaves_out_the_since_boot_row(client, data):
    run = data.run("2.4.20")
    response = client.get(f"/activity/?runs={run.pk}&format=csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    cs = [float(r["value"]) for r in rows if r["column"] == "cs"]
    assert cs == [15000 + 100 + i * 50 for i in range(6)]


# --- compare -----------------------------------------------------------------------------


def test_compare_page_shows_mean_sd_n_and_change(client, data):
    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    response = client.get(f"/compare/?base={base.pk}&new={new.pk}")
    html = response.content.decode()
    base_values, new_values = kept(SERIES[1][3], True), list(SERIES[2][3])
    change = (fmean(new_values) - fmean(base_values)) / fmean(base_values) * 100
    assert f"{change:+.1f} % better" in html
    assert f"({len(base_values)})" in html
    assert figure(response, "fig-compare")["data"]


def test_compare_api_rows(client, data):
    from scipy import stats

    base, new = data.run("2.5.25"), data.run("2.5.25", "pri_preempt")
    body = client.get(f"/api/compare/?base={base.pk}&new={new.pk}").json()
    row = next(r for r in body["rows"] if r["metric"] == "throughput")
    base_values, new_values = kept(SERIES[1][3], True), list(SERIES[2][3])
    assert row["base_mean"] == pytest.approx(fmean(base_values))
    assert row["new_n"] == 3 and row["unit"] == "msg/s"
    expected_p = stats.ttest_ind(base_values, new_values, equal_var=False).pvalue
    assert row["p_value"] == pytest.approx(expected_p)
    assert row["better"] is True


def test_compare_download(client, data):
    base, new = data.run("2.4.20"), data.run("2.3.99-pre3")
    response = client.get(f"/compare/?base={base.pk}&new={new.pk}&format=csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    row = next(r for r in rows if r["metric"] == "throughput")
    assert row["confidence"] == "single value" and row["more_runs_needed"] == "True"


def test_compare_api_is_in_the_schema(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").content.decode()
    assert "/api/compare/" in schema


# --- overview and run detail -------------------------------------------------------------


def test_overview_lists_latest_runs_uploads_and_open_alerts(client, data):
    run = data.run("2.5.25")
    metric = Metric.objects.get(name="throughput")
    for status in ("acknowledged", "fixed"):
        AlertFactory(
            metric=metric,
            candidate_run=run,
            change_pct=-12.5 if status == "acknowledged" else 3.0,
            method=f"welch-{status}",
            status=status,
        )
    html = client.get("/").content.decode()
    assert "-12.5 %" in html and "acknowledged" in html
    assert "3.0 %" not in html  # fixed alerts are not open
    latest = Run.objects.get(pk=max(data.upload.run_ids))  # one scope: its newest run
    assert f'href="/kernels/?setup={latest.setup_id}"' in html and "dash.tar.gz" in html
    assert f'href="/runs/{latest.pk}/">#{latest.pk}</a>' in html


def test_overview_without_alerts_says_where_they_will_show(client, data):
    assert "No open regressions" in client.get("/").content.decode()


@pytest.mark.parametrize(
    "kernel, patches, baseline_kernel",
    [("2.5.25", "pri_preempt", "2.5.25"), ("2.5.25", "", "2.4.20")],
)
def test_run_detail_links_to_compare_with_its_baseline(
    client, data, kernel, patches, baseline_kernel
):
    run, baseline = data.run(kernel, patches), data.run(baseline_kernel)
    html = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert f"/compare/?base={baseline.pk}&amp;new={run.pk}" in html


# --- the overview: a patch set's regression, workloads without runs ---------------------------


def test_a_regression_of_a_patch_names_the_patch_on_the_overview_and_in_the_subject(client, data):
    patched = data.run("2.5.25", "pri_preempt")
    alert = AlertFactory(
        candidate_run=patched, upload=patched.upload, change_pct=-20.0, p_value=0.01, method="welch"
    )
    html = client.get("/").content.decode()
    regressed = html.split('id="regressed"', 1)[1].split("</section>", 1)[0]
    assert "<strong>2.5.25+pri_preempt</strong>" in regressed  # the culprit build, patch named
    assert f'href="/alerts/{alert.pk}/"' in regressed
    subject, text, _ = render([Alert.objects.get(pk=alert.pk)], heading="New regressions")
    assert "VolanoMark 2.5.25+pri_preempt -20.0% throughput" in subject


def test_a_workload_without_runs_is_not_listed(client, data):
    SetupFactory(workload__name="probe-experiment", hardware=Hardware.objects.get(name="P8"))
    html = client.get("/").content.decode()
    assert "probe-experiment" not in html
    assert "VolanoMark" in html


# --- wakeups of a set-up without counters -------------------------------------------------------


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

"""Rough edges a new user hit (issue 15, part 3), on the pages and the alert email."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from perfdb.alerting.email_render import render
from perfdb.models import Alert, Hardware, Metric, Run, Setup, Upload, Workload
from tests.bundles import ingest_bundle, make_bundle, manifest_toml, volano_log, volano_run
from tests.dashboards.data import vmstat_text
from tests.dashboards.page_figures import figure

pytestmark = pytest.mark.django_db


# --- the upload page ---------------------------------------------------------------------------


def test_a_long_error_is_shown_whole_one_problem_per_line(client):
    first = "run 1 (dbench 2.6.0): file 'a-very-long-name.log' " + "word " * 60 + "END-OF-ONE"
    second = "run 2 (dbench 2.6.1): field 'kernel': second problem"
    upload = Upload.objects.create(
        filename="b.tar.gz", sha256="0" * 64, size=1, status="failed", error=f"{first}\n{second}"
    )
    html = client.get(f"/uploads/{upload.pk}/").content.decode()
    lines = re.search(r'<ul id="upload-error"[^>]*>(.*?)</ul>', html, re.S)
    assert lines, "the error is a list, one problem per item"
    items = re.findall(r"<li>(.*?)</li>", lines.group(1), re.S)
    assert [i.replace("&#x27;", "'") for i in items] == [first, second]
    assert '<pre id="upload-error"' not in html  # a <pre> scrolls a long line out of view
    css = Path("static/css/site.css").read_text()
    assert ".error-lines li { white-space:pre-wrap; overflow-wrap:anywhere;" in css


def test_the_upload_page_lists_each_run_with_workload_kernel_and_patches(client, data):
    html = client.get(f"/uploads/{data.upload.pk}/").content.decode()
    table = re.search(r'<table id="upload-runs">(.*?)</table>', html, re.S).group(1)
    patched = data.run("2.5.25", "pri_preempt")
    row = re.search(
        rf"<tr><td><a href=\"/runs/{patched.pk}/\">run {patched.pk}</a>(.*?)</tr>", table
    )
    assert row, table[:500]
    cells = re.findall(r"<td>(.*?)</td>", row.group(1))
    assert cells == ["VolanoMark 2.1.2", "2.5.25", "pri_preempt", "P8", "UP"]
    stock = data.run("2.4.20")
    assert re.search(
        rf"run {stock.pk}</a></td><td>VolanoMark 2.1.2</td><td>2.4.20</td><td>stock", table
    )


# --- the patch set on the overview and in the email subject -------------------------------------


def _alert_on(run: Run) -> Alert:
    return Alert.objects.create(
        setup=run.setup,
        metric=Metric.objects.get(name="throughput"),
        candidate_run=run,
        upload=run.upload,
        direction="regression",
        change_pct=-20.0,
        p_value=0.01,
        confidence=0.99,
        method="welch",
    )


def test_a_regression_of_a_patch_names_the_patch_on_the_overview_and_in_the_subject(client, data):
    patched = data.run("2.5.25", "pri_preempt")
    alert = _alert_on(patched)
    html = client.get("/").content.decode()
    regressed = html.split('id="regressed"', 1)[1].split("</section>", 1)[0]
    assert "<strong>2.5.25+pri_preempt</strong>" in regressed  # the culprit build, patch named
    assert f'href="/alerts/{alert.pk}/"' in regressed
    subject, text, _ = render([Alert.objects.get(pk=alert.pk)], heading="New regressions")
    assert "VolanoMark 2.5.25+pri_preempt -20.0% throughput" in subject


# --- /wakeups/ for a workload without wakeup counters -----------------------------------------


def test_wakeups_of_a_setup_without_counters_says_so_and_links_the_ones_with_them(
    client, data, tmp_path
):
    from dashboards.pages import scope_index

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


# --- vmstat directions: set by staff, honoured by detection and later uploads --------------------


def _vmstat_bundle(tmp_path, kernel: str, cs_base: int, name: str):
    files = '{ path = "t.log", parser = "volanomark" }, { path = "vmstat.txt", parser = "vmstat" }'
    text = vmstat_text(1).replace(" 15100 ", f" {cs_base} ")
    rows = text.splitlines()
    # every sample's cs column set to cs_base (+ a little noise)
    head, body = rows[:3], rows[3:]
    body = [
        " ".join(row.split()[:11] + [str(cs_base + 7 * i)] + row.split()[12:])
        for i, row in enumerate(body)
    ]
    return make_bundle(
        tmp_path / name,
        {
            "manifest.toml": manifest_toml(volano_run(kernel, files=files)),
            "t.log": volano_log(13000),
            "vmstat.txt": "\n".join(head + body) + "\n",
        },
    )


def test_staff_set_a_vmstat_direction_in_the_admin_and_a_cs_explosion_alerts(client, tmp_path):
    first = ingest_bundle(_vmstat_bundle(tmp_path, "2.6.0", 15000, "a.tar.gz"))
    assert first.status == "done", first.error
    cs = Metric.objects.get(name="vmstat_cs_mean")
    assert cs.better == "none"  # no direction by default (docs/parsers/vmstat.md)

    staff = get_user_model().objects.create_superuser("staff", "s@example.org", "pw")
    client.force_login(staff)
    changelist = client.get("/admin/perfdb/metric/").content.decode()
    assert 'name="form-0-better"' in changelist  # editable in the list
    page = client.get(f"/admin/perfdb/metric/{cs.pk}/change/")
    assert page.status_code == 200
    form = {"name": cs.name, "unit": cs.unit, "better": "lower", "description": ""}
    if "resolution" in page.content.decode():
        form["resolution"] = ""
    response = client.post(f"/admin/perfdb/metric/{cs.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    cs.refresh_from_db()
    assert cs.better == "lower"

    # A later vmstat upload (its parser says "none") keeps the direction and is tested by it.
    second = ingest_bundle(_vmstat_bundle(tmp_path, "2.6.1", 90000, "b.tar.gz"))
    assert second.status == "done", second.error
    cs.refresh_from_db()
    assert cs.better == "lower"
    from perfdb.alerting.regressions import regressions_check_upload

    setup_id = Run.objects.get(pk=second.run_ids[0]).setup_id
    regressions_check_upload(upload_id=second.pk, series=[(setup_id, cs.pk)])
    alert = Alert.objects.get(metric=cs)
    assert alert.direction == "regression" and alert.change_pct > 100


# --- experiments leave the pickers once their runs are gone --------------------------------------


def test_a_workload_without_runs_is_not_listed(client, data):
    hardware = Hardware.objects.get(name="P8")
    probe = Workload.objects.create(name="probe-experiment")
    Setup.objects.create(workload=probe, hardware=hardware, mode="UP", params_digest="x")
    html = client.get("/").content.decode()
    assert "probe-experiment" not in html
    assert "VolanoMark" in html

"""The upload pages (ingest/views.py): an upload's page (its error one problem a line, its
runs with workload, kernel and patches) and, in Chromium, the new-upload page's preview."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.utils import timezone

from perfdb.models import Alert
from tests.factories import AlertFactory, MetricFactory, RunFactory, UploadFactory

# --- the upload's page (upload_detail) ---------------------------------------------------------


@pytest.mark.django_db
def test_a_long_error_is_shown_whole_one_problem_per_line(client):
    first = "run 1 (dbench 2.6.0): file 'a-very-long-name.log' " + "word " * 60 + "END-OF-ONE"
    second = "run 2 (dbench 2.6.1): field 'kernel': second problem"
    upload = UploadFactory(status="failed", error=f"{first}\n{second}")
    html = client.get(f"/uploads/{upload.pk}/").content.decode()
    lines = re.search(r'<ul id="upload-error"[^>]*>(.*?)</ul>', html, re.S)
    assert lines, "the error is a list, one problem per item"
    items = re.findall(r"<li>(.*?)</li>", lines.group(1), re.S)
    assert [i.replace("&#x27;", "'") for i in items] == [first, second]
    assert '<pre id="upload-error"' not in html  # a <pre> scrolls a long line out of view
    css = Path("static/css/site.css").read_text()
    assert ".error-lines li { white-space:pre-wrap; overflow-wrap:anywhere;" in css


@pytest.mark.django_db
def test_the_upload_page_lists_each_run_with_workload_kernel_and_patches(client, data):
    html = client.get(f"/uploads/{data.upload.pk}/").content.decode()
    table = re.search(r'<table id="upload-runs">(.*?)</table>', html, re.S).group(1)
    patched = data.run("2.5.25", "pri_preempt")
    row = re.search(
        rf"<tr><td><a href=\"/runs/{patched.pk}/\">run {patched.pk}</a>(.*?)</tr>", table
    )
    assert row, table[:500]
    cells = re.findall(r"<td>(.*?)</td>", row.group(1))
    compare = f'<a href="/compare/?new={patched.pk}">compare</a>'
    assert cells == ["VolanoMark 2.1.2", "2.5.25", "pri_preempt", "P8", "UP", compare]
    stock = data.run("2.4.20")
    assert re.search(
        rf"run {stock.pk}</a></td><td>VolanoMark 2.1.2</td><td>2.4.20</td><td>stock", table
    )


@pytest.mark.django_db
def test_what_changed_lists_confirmed_moves_apart_from_pending_ones(client):
    """A one-value A/B is pending with what would test it; it is not counted as a
    regression, and a cleared move is not listed at all."""
    upload = UploadFactory(status="done")
    run = RunFactory(upload=upload, kernel__version="6.13.0-rc3")
    confirmed = AlertFactory(
        upload=upload, candidate_run=run, metric=MetricFactory(name="events_per_s")
    )
    pending = AlertFactory(
        upload=upload,
        candidate_run=run,
        metric=MetricFactory(name="bogo_ops"),
        change_pct=-5.4,
        status=Alert.Status.PENDING,
        method="threshold",
    )
    AlertFactory(
        upload=upload,
        candidate_run=run,
        metric=MetricFactory(name="latency_ms"),
        status=Alert.Status.CLEARED,
    )
    html = client.get(f"/uploads/{upload.pk}/").content.decode()
    assert '<p id="alert-summary">1 regression, 0 improvements' in html
    listed = re.search(r'<ul id="pending-moves">(.*?)</ul>', html, re.S)
    assert listed and f"/alerts/{pending.pk}/" in listed.group(1)
    assert pending.state_short in listed.group(1) and pending.state_note in listed.group(1)
    assert f"/alerts/{confirmed.pk}/" in html and f"/alerts/{confirmed.pk}/" not in listed.group(1)
    assert "latency_ms" not in html


@pytest.mark.django_db
def test_while_the_check_runs_the_page_says_so_rather_than_nothing_moved(client):
    """An upload is done before its regression check: "0 regressions" then would be news
    the check has not made. The page says the check is under way and refreshes itself."""
    upload = UploadFactory(status="done", detection_due_at=timezone.now())
    html = client.get(f"/uploads/{upload.pk}/").content.decode()
    assert 'id="check-running"' in html and 'id="alert-summary"' not in html
    assert '<meta http-equiv="refresh"' in html
    upload.detection_due_at = None
    upload.save()
    html = client.get(f"/uploads/{upload.pk}/").content.decode()
    assert '<p id="alert-summary">0 regressions, 0 improvements' in html
    assert 'id="check-running"' not in html and '<meta http-equiv="refresh"' not in html


@pytest.mark.django_db
def test_an_earlier_step_this_upload_confirmed_is_listed_with_it(client):
    """A one-trial step is confirmed by the next kernel's upload and emailed with it: that
    upload's page lists it, saying whose step it is."""
    earlier, confirming = UploadFactory(status="done"), UploadFactory(status="done")
    step = AlertFactory(
        upload=earlier,
        notify_upload=confirming,
        candidate_run=RunFactory(upload=earlier, kernel__version="6.13.0-rc2"),
    )
    html = client.get(f"/uploads/{confirming.pk}/").content.decode()
    assert '<p id="alert-summary">1 regression, 0 improvements' in html
    assert f"/alerts/{step.pk}/" in html and "confirmed by this one" in html
    html = client.get(f"/uploads/{earlier.pk}/").content.decode()
    assert f"/alerts/{step.pk}/" in html and "confirmed by this one" not in html


# --- the new-upload page in Chromium (upload_new) ----------------------------------------------


def logged_in_upload_page(live_server, browser):
    """The upload page, signed in as ``lab`` (the ``user`` fixture)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(live_server.url + "/login/?next=/uploads/new/")
    page.fill("input[name=username]", "lab")
    page.fill("input[name=password]", "lab-password-1")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url("**/uploads/new/")
    return page


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_refused_preview_names_the_problem_as_an_error(
    live_server,
    browser,
    user,
    tmp_path,
):
    notes = tmp_path / "notes.txt"
    notes.write_text("Dear list,\nthe numbers are 1 2 3.\n")
    page = logged_in_upload_page(live_server, browser)
    page.set_input_files("input[name=bundle]", str(notes))
    page.click("#preview-button")
    page.wait_for_selector("#preview:not([hidden])")
    assert page.text_content("#preview-heading") == (
        "This upload would be refused; nothing was stored"
    )
    problem = page.locator("#preview-problems li").first
    assert "not a report this server reads" in (problem.text_content() or "")
    assert page.locator("#preview-problems").is_visible()
    assert not page.locator("#preview-runs").is_visible()  # no empty table of runs
    border = page.eval_on_selector("#preview-problems", "e => getComputedStyle(e).borderTopStyle")
    assert border == "solid"  # styled as the site's error box
    page.close()

"""The upload page (ingest/views.py::upload_new) in Chromium: the preview says plainly what
would be refused, styled as an error, and shows no empty table of runs."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def logged_in_upload_page(live_server, browser):
    """The upload page, signed in as ``lab`` (the ``user`` fixture)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(live_server.url + "/login/?next=/uploads/new/")
    page.fill("input[name=username]", "lab")
    page.fill("input[name=password]", "lab-password-1")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url("**/uploads/new/")
    return page


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

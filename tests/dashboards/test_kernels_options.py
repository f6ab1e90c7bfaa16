"""The kernels page's pickers are rendered once and cached as HTML (dashboards/kernels_page.py):
they reach the page as options, not as escaped text, and what a user typed in them (a run's
label) stays escaped."""

from __future__ import annotations

import re

import pytest

from perfdb.models import Run
from tests.dashboards.data import load

pytestmark = pytest.mark.django_db


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


def test_the_setup_picker_may_lag_an_upload_to_the_scope_but_never_lacks_its_setup(
    client, tmp_path, settings
):
    """Under PAGE_CACHE_STALE_SECONDS the run counts in the setup picker may be as far behind
    as a scope chart: an upload to the scope serves the previous picker (its count not yet
    moved). A setup's first runs (the page's setup missing from it) are computed now."""
    from perfdb import cache as page_cache
    from perfdb.models import Setup

    settings.PAGE_CACHE_STALE_SECONDS = 30
    data = load(tmp_path)
    run = data.run("2.4.20")
    page = f"/kernels/?setup={run.setup_id}"
    before = _select(client.get(page).content.decode(), "setup")
    count = Run.objects.filter(setup_id=run.setup_id).count()
    assert f"({count} runs)" in before
    scope = f"{run.setup.workload_id}-{run.setup.hardware_id}-{run.setup.mode}"
    added = Run.objects.get(pk=run.pk)
    added.pk, added.fingerprint = None, "picker-test"
    added.save()
    page_cache.runs_added([scope], [run.setup_id])
    assert _select(client.get(page).content.decode(), "setup") == before  # lags, for now
    other = Setup.objects.get(pk=run.setup_id)
    other.pk, other.params = None, {**other.params, "picker": "new"}
    other.params_digest = "f" * 64
    other.save()
    first = Run.objects.get(pk=run.pk)
    first.pk, first.setup, first.fingerprint = None, other, "picker-test-2"
    first.save()
    page_cache.runs_added([scope], [other.pk])
    html = client.get(f"/kernels/?setup={other.pk}").content.decode()
    picker = _select(html, "setup")
    assert f'<option value="{other.pk}" selected>' in picker
    assert f"({count + 1} runs)" in picker, "computed now, with the runs added since"

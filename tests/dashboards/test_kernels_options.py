"""The kernels page's pickers are rendered once and cached as HTML (dashboards/kernels.py):
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


def test_the_page_after_an_upload_is_the_page_made_from_nothing(
    client, series, tmp_path, django_capture_on_commit_callbacks
):
    """The baseline options are kept per point with the series and joined: after an
    upload the page (its new run's option in its place, the chosen one selected) is the
    page made on an emptied cache."""
    from django.core.cache import cache

    from tests.bundles import make_bundle
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

    from tests.bundles import make_bundle
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

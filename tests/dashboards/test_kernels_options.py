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

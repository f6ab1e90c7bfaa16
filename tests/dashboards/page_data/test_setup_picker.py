"""The set-up picker of a scope (dashboards/page_data/setup_picker.py): its options are
rendered once per scope version and joined with the chosen one selected; the across-kernels
and the compare pages show the same options; an upload to the scope shows its new run
count."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dashboards.page_data import setup_picker
from perfdb.models import Run
from tests.dashboards.data import base_setup, load
from tests.dashboards.scopes import scope_key

pytestmark = pytest.mark.django_db


def picker(html: str) -> str:
    select = re.search(r'<select name="setup"[^>]*>(.*?)</select>', html, re.S)
    assert select, "no set-up picker"
    return select.group(1)


def scope_of(setup) -> tuple[str, tuple[int, int, str]]:
    return scope_key(setup), (setup.workload_id, setup.hardware_id, setup.mode)


def test_options_are_rendered_once_per_scope_version(tmp_path, django_assert_num_queries):
    load(tmp_path)
    setup = base_setup()
    scope, ids = scope_of(setup)
    first = setup_picker.setup_options(scope, ids, setup.pk)
    runs = Run.objects.filter(setup=setup).count()
    chosen = f'<option value="{setup.pk}" selected>'
    assert first.count(" selected>") == 1 and chosen in first
    assert f"({runs} runs)</option>" in first
    with django_assert_num_queries(0):  # kept: no query, the same options
        again = setup_picker.setup_options(scope, ids, setup.pk)
    assert again == first
    other = setup_picker.setup_choices({scope: ids})[scope][-1]["id"]
    moved = setup_picker.setup_options(scope, ids, other)
    assert f'<option value="{other}" selected>' in moved and chosen not in moved


def test_the_kernels_and_the_compare_pages_show_the_same_options(tmp_path, client):
    load(tmp_path)
    setup = base_setup()
    run = Run.objects.filter(setup=setup).order_by("pk").first()
    other = Run.objects.filter(setup=setup).order_by("pk").last()
    kernels = client.get(f"/kernels/?setup={setup.pk}").content.decode()
    compare = client.get(f"/compare/?base={run.pk}&new={other.pk}").content.decode()
    assert picker(kernels).strip() == picker(compare).strip()
    assert picker(kernels).count("<option") == len(
        setup_picker.setup_choices(dict([scope_of(setup)]))[scope_key(setup)]
    )


def test_a_warm_up_after_an_upload_leaves_the_counts_current(tmp_path):
    load(tmp_path)
    setup = base_setup()
    scope, ids = scope_of(setup)
    setup_picker.pickers_warm([scope])
    with CaptureQueriesContext(connection) as queries:
        setups = setup_picker.setup_choices({scope: ids})[scope]
    assert len(queries) == 0
    counts = {s["id"]: s["run_count"] for s in setups}
    assert counts[setup.pk] == Run.objects.filter(setup=setup).count()

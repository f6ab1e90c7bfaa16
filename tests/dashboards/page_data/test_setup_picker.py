"""The set-up picker of a scope (dashboards/page_data/setup_picker.py): its options are
rendered once and joined with the chosen one selected; the across-kernels and the compare
pages show the same options; an upload to the scope shows its new run count, rendering
again only the options it moved."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.signals import template_rendered
from django.test.utils import CaptureQueriesContext

from dashboards.page_data import setup_picker
from perfdb.models import Run
from tests.bundles import make_bundle
from tests.dashboards.data import base_setup, ingest, load
from tests.dashboards.scopes import scope_key
from tests.dashboards.series_data import NEW_RUN

pytestmark = pytest.mark.django_db


def picker(html: str) -> str:
    select = re.search(r'<select name="setup"[^>]*>(.*?)</select>', html, re.S)
    assert select, "no set-up picker"
    return select.group(1)


def picker_setups(scope: str, ids: tuple[int, int, str]) -> list:
    return setup_picker.setup_choices({scope: ids})[scope]


def scope_of(setup) -> tuple[str, tuple[int, int, str]]:
    return scope_key(setup), (setup.workload_id, setup.hardware_id, setup.mode)


def test_options_are_rendered_once_per_scope_version(tmp_path, django_assert_num_queries):
    load(tmp_path)
    setup = base_setup()
    scope, ids = scope_of(setup)
    first = setup_picker.setup_options(scope, picker_setups(scope, ids), setup.pk)
    runs = Run.objects.filter(setup=setup).count()
    chosen = f'<option value="{setup.pk}" selected>'
    assert first.count(" selected>") == 1 and chosen in first
    assert f"({runs} runs)</option>" in first
    with django_assert_num_queries(0):  # kept: no query, the same options
        again = setup_picker.setup_options(scope, picker_setups(scope, ids), setup.pk)
    assert again == first
    other = setup_picker.setup_choices({scope: ids})[scope][-1]["id"]
    moved = setup_picker.setup_options(scope, picker_setups(scope, ids), other)
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


def test_an_upload_renders_again_only_the_options_it_moved(
    tmp_path, django_capture_on_commit_callbacks
):
    load(tmp_path)
    setup = base_setup()
    scope, ids = scope_of(setup)
    rendered: list[str] = []

    def seen(sender, template, **kwargs):
        if template.name == setup_picker.SETUP_OPTION:
            rendered.append(template.name)

    template_rendered.connect(seen)
    try:
        setup_picker.setup_options(scope, picker_setups(scope, ids), None)
        whole = len(rendered)
        runs = Run.objects.filter(setup=setup).count()
        with django_capture_on_commit_callbacks(execute=True):  # the versions it moves
            ingest(make_bundle(tmp_path / "new.tar.gz", {"manifest.toml": NEW_RUN}))
        del rendered[:]
        options = setup_picker.setup_options(scope, picker_setups(scope, ids), None)
    finally:
        template_rendered.disconnect(seen)
    assert whole == len(setup_picker.setup_choices({scope: ids})[scope]) > 1
    assert len(rendered) == 1  # the moved setup's option, not the scope's
    assert f'<option value="{setup.pk}">messages=1000, rooms=10 ({runs + 1} runs)' in options

"""Moving the versions when the stored data change (perfdb/cache/invalidate.py): runs added
to a scope move that scope's version and the data version only, so entries of other scopes
survive an upload and values read from every run do not; runs removed or edited move every
version; every writer of runs (the ingest, the synthetic history, the demo, the ORM) and an
admin edit or deletion of a run or of the vocabulary it is shown with move them on commit,
never before, while new vocabulary rows move nothing; and an alert written moves its own
series' alerts version only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache

from ingest.demo import demo_remove
from ingest.synthetic import history_remove, history_write
from perfdb import cache as page_cache
from perfdb.models import Hardware, Kernel, Metric, Run, Setup
from tests.dashboards.data import load
from tests.dashboards.scopes import ingest_on_hardware, scope_key
from tests.factories import make_alert
from tests.perfdb.cache.counting import counter

pytestmark = pytest.mark.django_db


def test_a_scope_entry_survives_runs_added_elsewhere_not_its_own():
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1
    page_cache.runs_added(["2-1-SMP"])
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 2
    page_cache.data_changed()  # runs removed or edited: every scope
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 3


def test_runs_added_still_moves_the_data_version():
    """Values cached with ``cached`` read every run: any upload makes them stale."""
    compute = counter()
    assert page_cache.cached("t:all", compute) == 1
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached("t:all", compute) == 2


def test_an_upload_recomputes_its_scope_only(tmp_path, django_capture_on_commit_callbacks):
    load(tmp_path)
    first = Setup.objects.order_by("id").first()
    compute = counter()
    key = scope_key(first)
    page_cache.cached_in_scope("t:first-scope-chart", key, compute)
    with django_capture_on_commit_callbacks(execute=True):
        upload = ingest_on_hardware(tmp_path, "P9")  # a new scope
    new_scope = scope_key(Run.objects.get(pk=upload.run_ids[0]).setup)
    assert new_scope != key
    assert page_cache.cached_in_scope("t:first-scope-chart", key, compute) == 1


def remove_a_run() -> None:
    run = Run.objects.order_by("id").last()
    assert run is not None
    run.delete()


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(lambda: history_write(scale=1, seed=3), id="synthetic history_write"),
        pytest.param(history_remove, id="synthetic history_remove"),
        pytest.param(demo_remove, id="demo_remove"),
        pytest.param(remove_a_run, id="a run deleted through the ORM (admin)"),
    ],
)
def test_every_writer_of_runs_moves_the_data_version_on_commit(
    data, django_capture_on_commit_callbacks, write
):
    before = page_cache.data_version()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        write()
    assert page_cache.data_version() == before, "bumped before the commit"
    for callback in callbacks:
        callback()
    assert page_cache.data_version() > before


# --- one by one: the admin, a shell, the detector's alerts ----------------------------------


def _first(model):
    return model.objects.order_by("pk").first()


EDITS = {
    "run": lambda: _save(_first(Run), notes="edited in the admin"),
    "kernel": lambda: _save(_first(Kernel), version="2.6.0"),
    "setup": lambda: _save(_first(Setup), mode="UP"),
    "metric": lambda: _save(_first(Metric), unit="msg/s (edited)"),
    "hardware": lambda: _save(_first(Hardware), name="renamed"),
    "run deleted": lambda: _first(Run).delete(),
    # Unused rows (a kernel, metric or hardware with runs is protected from deletion):
    "kernel deleted": lambda: Kernel.objects.create(version="2.7.1").delete(),
    "metric deleted": lambda: Metric.objects.create(name="spare", unit="s").delete(),
    "hardware deleted": lambda: Hardware.objects.create(name="spare").delete(),
}


def _save(obj, **changes) -> None:
    for name, value in changes.items():
        setattr(obj, name, value)
    obj.save()


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_an_edit_or_deletion_moves_the_data_version_on_commit(
    data, django_capture_on_commit_callbacks, edit
):
    before = page_cache.data_version()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        EDITS[edit]()
    assert page_cache.data_version() == before, "bumped before the commit"
    for callback in callbacks:
        callback()
    assert page_cache.data_version() > before


def test_new_vocabulary_rows_leave_the_cache_alone(data, django_capture_on_commit_callbacks):
    """The ingest writer creates kernels and metrics: only the runs it adds move versions."""
    before = page_cache.data_version()
    with django_capture_on_commit_callbacks(execute=True):
        Kernel.objects.create(version="2.6.1")
        Metric.objects.create(name="new_metric", unit="s", better="lower")
    assert page_cache.data_version() == before


def test_an_admin_rename_shows_on_the_cached_home_page(
    client, data, django_capture_on_commit_callbacks
):
    client.force_login(User.objects.create_superuser("admin", "a@example.com", "pw"))
    hardware = _first(Hardware)
    assert hardware.name in client.get("/").content.decode()  # cached now
    form = client.get(f"/admin/perfdb/hardware/{hardware.pk}/change/").context["adminform"].form
    post = {name: form[name].value() for name in form.fields}
    post = {
        k: ("" if v is None else ",".join(v) if isinstance(v, list) else v) for k, v in post.items()
    }
    post["name"] = "Renamed-P8"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/perfdb/hardware/{hardware.pk}/change/", post)
    assert response.status_code == 302, response.content.decode()[:2000]
    html = client.get("/").content.decode()
    assert "Renamed-P8" in html


def _alerts_version(setup_id: int, metric_id: int) -> int | None:
    return cache.get(f"{page_cache.ALERTS_VERSION_PREFIX}{setup_id}:{metric_id}")


# Each given an alert of another run of the setup, written before.
ALERT_WRITES = {
    "created": lambda run, metric, _: make_alert(run, metric),
    "triaged": lambda run, metric, alert: _save(alert, status="acknowledged"),
    "deleted": lambda run, metric, alert: alert.delete(),
}


@pytest.mark.parametrize("write", list(ALERT_WRITES), ids=list(ALERT_WRITES))
def test_an_alert_written_moves_its_series_alerts_version_on_commit(
    data, django_capture_on_commit_callbacks, write
):
    run, other = data.run("2.5.25"), data.run("2.4.20", rooms=20)
    metric = Metric.objects.get(name="throughput")
    alert = make_alert(data.run("2.4.20"), metric)
    series = [(run.setup_id, metric.pk), (other.setup_id, metric.pk), (run.setup_id, 0)]
    page_cache.alerts_changed(series)  # all started
    before, *others = (_alerts_version(*s) for s in series)
    data_before = page_cache.data_version()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        ALERT_WRITES[write](run, metric, alert)
    assert _alerts_version(*series[0]) == before, "moved before the commit"
    for callback in callbacks:
        callback()
    assert _alerts_version(*series[0]) > before
    assert [_alerts_version(*s) for s in series[1:]] == others, "another series' moved"
    assert page_cache.data_version() == data_before, "an alert moved the data version"

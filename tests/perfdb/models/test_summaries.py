"""SetupSummary (perfdb_setupsummary), kept by PostgreSQL triggers (migration 0015): after
every kind of write it equals the summary counted from the runs themselves, including writes
from two transactions at once."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction

from ingest import synthetic
from perfdb.models import ProfileEntry, Run, Setup, SetupSummary
from tests.factories import RunFactory

FROM_RUNS = """
SELECT r.setup_id, count(*), (array_agg(r.id ORDER BY r.created_at DESC, r.id DESC))[1],
       max(r.created_at),
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM perfdb_profileentry e WHERE e.run_id = r.id))
FROM perfdb_run r GROUP BY r.setup_id
"""


def counted() -> dict[int, tuple]:
    """Each setup's (runs, newest run, newest time, profiled runs), counted from the runs."""
    with connection.cursor() as cursor:
        cursor.execute(FROM_RUNS)
        return {row[0]: tuple(row[1:]) for row in cursor.fetchall()}


def kept() -> dict[int, tuple]:
    rows = SetupSummary.objects.values_list(
        "setup_id", "run_count", "newest_run_id", "newest_at", "profiled_runs"
    )
    return {row[0]: tuple(row[1:]) for row in rows}


def copy_of(run: Run, **changes) -> Run:
    """A new run like ``run`` (its own fingerprint), saved."""
    keys = {"setup": run.setup, "kernel": run.kernel, "patch_set": run.patch_set}
    return RunFactory(**{**keys, **changes})


def profile(run: Run, functions: list[str]) -> None:
    """The entries in one INSERT: the summary triggers are statement-level."""
    ProfileEntry.objects.bulk_create(
        ProfileEntry(run=run, function=name, ticks=10.0) for name in functions
    )


@pytest.fixture
def history(db):
    """The synthetic history's first unit, stored by COPY with the foreign-key triggers off
    (session_replication_role = replica): the summary triggers fire anyway."""
    synthetic.history_write(scale=1, seed=1)
    assert Run.objects.exists() and ProfileEntry.objects.exists()


def test_a_bulk_load_and_its_removal_are_summarised(history):
    summary = kept()
    assert summary == counted()
    assert any(row[3] for row in summary.values()), "some setups have profiled runs"
    synthetic.history_remove()
    assert kept() == counted() == {}


def test_runs_added_removed_and_moved(history):
    run = Run.objects.filter(profile__isnull=False).first()
    setup = run.setup_id
    before = kept()[setup]
    newest = copy_of(run)
    assert kept()[setup][:2] == (before[0] + 1, newest.pk)
    assert kept() == counted()

    newest.delete()  # the newest goes: the one before is newest again
    assert kept()[setup] == before
    other = Run.objects.exclude(setup_id=setup).first()
    Run.objects.filter(pk=run.pk).update(setup_id=other.setup_id)  # a profiled run moved
    assert kept()[setup][0] == before[0] - 1 and kept()[setup][3] == before[3] - 1
    assert kept() == counted()

    lone = copy_of(other, setup=Setup.objects.get(pk=setup))
    Run.objects.filter(setup_id=setup).exclude(pk=lone.pk).delete()
    assert kept()[setup][:2] == (1, lone.pk)
    lone.delete()
    assert setup not in kept()  # no runs, no row
    assert kept() == counted()


def test_profiles_added_in_parts_count_a_run_once(history):
    run = copy_of(Run.objects.first())
    setup = run.setup_id
    before = kept()[setup][3]
    profile(run, ["schedule", "default_idle"])
    profile(run, ["tcp_v4_rcv"])  # a second statement for the same run
    assert kept()[setup][3] == before + 1
    ProfileEntry.objects.filter(run=run, function="schedule").delete()
    assert kept()[setup][3] == before + 1  # it still has entries
    ProfileEntry.objects.filter(run=run).delete()
    assert kept()[setup][3] == before
    profile(run, ["schedule"])
    run.delete()  # the ORM removes the entries with it
    assert kept() == counted()


def test_profile_entries_moved_to_another_run(history):
    profiled = Run.objects.filter(profile__isnull=False).first()
    bare = copy_of(Run.objects.exclude(setup_id=profiled.setup_id).first())
    ProfileEntry.objects.filter(run=profiled).update(run=bare)
    assert kept() == counted()
    assert kept()[bare.setup_id][3] >= 1


@pytest.mark.django_db(transaction=True)
def test_two_writers_to_one_setup_at_once():
    """Each transaction adds runs to the same setup while the other is open: the counts add
    up (the summary row's lock orders them), whichever commits first."""
    synthetic.history_write(scale=1, seed=1)
    template = Run.objects.first()
    setup = template.setup_id
    start = kept()[setup][0]
    first_inserted = threading.Event()
    second_done = threading.Event()
    errors: list[BaseException] = []

    def writer(runs: int, wait: threading.Event | None, signal: threading.Event) -> None:
        try:
            with transaction.atomic():
                for _ in range(runs):
                    copy_of(template)
                signal.set()
                if wait is not None:
                    wait.wait(timeout=10)
        except BaseException as error:  # noqa: BLE001 (reported by the test)
            errors.append(error)
            signal.set()
        finally:
            connections.close_all()

    second_started = threading.Event()
    first = threading.Thread(target=writer, args=(3, second_started, first_inserted))
    first.start()
    first_inserted.wait(timeout=10)
    # The second blocks on the summary row until the first commits, which it does once the
    # second has started.
    second = threading.Thread(target=writer, args=(2, None, second_done))
    second.start()
    second_started.set()
    first.join(timeout=30)
    second.join(timeout=30)
    assert not errors
    assert kept()[setup][0] == start + 5
    assert kept() == counted()


def test_the_product_write_paths_keep_it(db, tmp_path):
    """A real upload (runs with readprofile files: profiled runs), its re-ingest (runs
    replaced in one transaction) and its deletion: the summary follows each."""
    from ingest.recovery import upload_delete, upload_reingest
    from ingest.services import upload_ingest
    from tests.dashboards.data import load

    upload = load(tmp_path).upload
    summary = kept()
    assert summary == counted() and summary
    assert sum(row[3] for row in summary.values()) > 0, "the bundle's profiles count"
    upload_reingest(upload_id=upload.pk, queue_it=False)
    upload_ingest(upload_id=upload.pk)
    assert {k: v[0] for k, v in kept().items()} == {k: v[0] for k, v in summary.items()}
    assert kept() == counted()
    upload_delete(upload_id=upload.pk)
    assert kept() == counted() == {}

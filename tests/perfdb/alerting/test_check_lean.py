"""The check's lean paths give what the plain ones give (one run onto long series).

``check_data.load_points`` reads each series as two arrays; here it is held against
``builds.series_points`` (one row per trial, grouped in Python), the reference kept for
it. ``detector.ordered`` is cleaned and sorted once for ``detect`` and ``change_points``:
their answers must not depend on whether the points come ordered or shuffled, and ``detect``
returns its changes in kernel order. The check pauses the garbage collector and must leave
it as it found it.
"""

from __future__ import annotations

import gc
import math
import random

import numpy as np
import pytest
from django.db import connection, transaction
from django.db.models import F

from perfdb import detector
from perfdb.alerting import check_data
from perfdb.alerting.regressions import regressions_check_upload
from perfdb.detector import detection, series, series_check
from perfdb.detector.series import run_order
from perfdb.models import Result
from tests.perfdb.alerting.batch_uploads import UPLOADS, ingest, touched
from tests.perfdb.alerting.builds import series_points


@pytest.mark.django_db
def test_load_points_reads_what_the_per_trial_query_reads(tmp_path):
    late = [("2.4.16", "[]", (12000, 12100), (12000,), (12010,))]  # an older kernel, uploaded last
    uploads = [ingest(tmp_path, "lean", n, runs) for n, runs in enumerate([*UPLOADS, late])]
    series = sorted({key for upload in uploads for key in touched(upload)})
    # a discarded trial: left out by both (a NaN trial cannot be stored: migration 0016)
    first = Result.objects.filter(setup_id=series[0][0], metric_id=series[0][1]).order_by("pk")
    Result.objects.filter(pk=first[0].pk).update(discarded=True)
    # rows no longer stored in run and trial order: an update writes a row anew at the end
    # of its table, so the database reads these after the rest (the columns come unordered)
    second = Result.objects.filter(setup_id=series[1][0], metric_id=series[1][1])
    Result.objects.filter(pk__in=second.filter(trial=0).values("pk")).update(value=F("value"))
    Result.objects.filter(pk__in=second.order_by("run_id")[:2].values("pk")).update(
        value=F("value")
    )
    loaded, ordered = check_data.load_points(series)
    assert len(series) > 2 and set(loaded) == set(series)
    for setup_id, metric_id in series:
        expected = series_points(setup_id=setup_id, metric_id=metric_id)
        got = loaded[(setup_id, metric_id)]
        assert [(p.run_id, p.kernel, p.patches) for p in got] == [
            (p.run_id, p.kernel, p.patches) for p in expected
        ]
        # the same floats, bit for bit
        assert [repr(p.values) for p in got] == [repr(p.values) for p in expected]
    assert any(len(p.values) > 1 for p in loaded[series[0]])  # trials grouped per run
    assert any(p.patches for points in loaded.values() for p in points)
    # the check's kernel order, from the runs ranked once: what the detector's sort gives
    assert set(ordered) == set(series)  # every series finite: each is ordered by the check
    for key in series:
        assert ordered[key] == detector.ordered(loaded[key])
        assert [p.run_id for p in ordered[key]] != [p.run_id for p in loaded[key]]
    assert check_data.load_points([(series[0][0], 10**9)]) == ({(series[0][0], 10**9): []}, {})


def work_mem() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW work_mem")
        return str(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)  # the check's own transaction, not the test's
def test_the_points_query_memory_lasts_only_for_the_checks_transaction(tmp_path):
    """The room the points query is given to hash its rows is the check's transaction's: the
    next user of the connection has the server's setting again."""
    upload = ingest(tmp_path, "room", 0, UPLOADS[0])
    before = work_mem()
    assert before != check_data.POINTS_WORK_MEM
    with transaction.atomic():
        check_data.load_points(touched(upload))
        assert work_mem() == check_data.POINTS_WORK_MEM
    assert work_mem() == before
    regressions_check_upload(upload_id=upload.pk, series=touched(upload))
    assert work_mem() == before


def long_series(seed: int) -> list[detection.Point]:
    """200 kernels with two steps, patched builds, repeated runs and a NaN trial."""
    rng = random.Random(seed)
    points, run_id = [], 0
    for i in range(200):
        level = 100.0 * (0.9 if 80 <= i < 150 else 1.0) * (1.1 if i >= 150 else 1.0)
        builds: list[tuple[str, ...]] = [(), ()] if i % 17 == 0 else [(), ("O(1)",)]
        for patches in builds if i % 17 == 0 or i % 11 == 0 else [()]:
            run_id += 1
            values = tuple(level * rng.gauss(1, 0.01) for _ in range(1 + run_id % 3))
            points.append(detection.Point(run_id, f"4.{i // 100}.{i % 100}", patches, values))
    points[7] = detection.Point(points[7].run_id, points[7].kernel, (), (math.nan,))
    return points


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_detect_answers_the_same_for_ordered_and_shuffled_points(seed):
    points = long_series(seed)
    shuffled = points[:]
    random.Random(seed).shuffle(shuffled)
    usable = detector.ordered(shuffled)
    assert detector.ordered(usable) is usable
    assert len(usable) == len(points) - 1  # the NaN-only run is no observation
    candidates = {p.run_id for p in points[-30:]} | {points[40].run_id}
    for given in (points, shuffled, usable):
        changes = detection.detect(given, better="higher", candidates=candidates)
        assert changes == detection.detect(points, better="higher", candidates=candidates)
        assert detection.change_points(given, better="higher") == detection.change_points(
            points, better="higher"
        )
    by_run = {p.run_id: p for p in points}
    everything = detection.detect(shuffled, better="higher")
    assert len(everything) >= 2  # both steps
    assert everything == sorted(everything, key=lambda c: run_order(by_run[c.candidate_run_id]))


@pytest.mark.django_db
def test_the_check_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    upload = ingest(tmp_path, "gc", 0, UPLOADS[0])
    assert gc.isenabled()
    regressions_check_upload(upload_id=upload.pk, series=touched(upload))
    assert gc.isenabled()
    gc.disable()
    try:
        regressions_check_upload(upload_id=upload.pk, series=touched(upload))
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("seed", range(10))
def test_packed_rows_are_put_in_run_and_trial_order(seed):
    """``check_data.in_run_order``: a series' packed rows, in whatever order the database
    aggregated them, come out by run then trial, each value with its own row."""
    rng = random.Random(seed)
    rows = [
        (run_id, trial, rng.gauss(0, 1e6))
        for run_id in rng.sample(range(1, 10**6), rng.choice([1, 3, 200]))
        for trial in range(rng.choice([1, 1, 2, 5]))
    ]
    shuffled = rng.sample(rows, len(rows))
    packed = np.array(shuffled, dtype=check_data.PACKED_ROW).tobytes()
    assert len(packed) == 18 * len(rows)  # as int8send || int2send || float8send make them
    run_ids, values = check_data.in_run_order(packed)
    expected = sorted(rows)
    assert run_ids.tolist() == [r[0] for r in expected]
    assert values.tolist() == [r[2] for r in expected]


def test_among_finds_the_runs_a_pass_would_find():
    points = [p for p in long_series(4) if p.run_id % 3]  # in run-id order, with gaps
    for wanted in ([], [points[0].run_id], [3, 6, 9], [p.run_id for p in points[::7]], [10**9]):
        assert check_data.among(points, wanted) == {p.run_id for p in points if p.run_id in wanted}


def test_the_analysis_the_check_puts_on_a_series_is_the_one_detect_uses():
    """``series_check.analysed_once``: ``series.analyse`` (uncached: no hash of every point)
    where ``detect`` and ``change_points`` look first; their answers are the plain call's."""
    points = long_series(5)
    settings = detection.Settings()
    series.analyse.cache_clear()
    usable = series_check.analysed_once(detector.ordered(points), settings)
    analysis = usable.analyses[settings]
    assert series_check.analysed_once(usable, settings).analyses[settings] is analysis  # once
    assert analysis is not None and analysis == series.analyse(tuple(usable), settings)
    series.analyse.cache_clear()
    candidates = {p.run_id for p in points[-5:]}
    changes = detection.detect(usable, better="higher", settings=settings, candidates=candidates)
    steps = detection.change_points(usable, better="higher", settings=settings)
    assert series.analyse.cache_info().currsize == 0  # the check's analysis was used
    assert usable.analyses[settings] is analysis
    assert steps and changes == detection.detect(
        points, better="higher", settings=settings, candidates=candidates
    )
    assert steps == detection.change_points(points, better="higher", settings=settings)
    # a short series goes through analyse's cache: a check run again finds it there
    series.analyse.cache_clear()
    assert len(points[:50]) < series_check.UNCACHED_FROM <= len(points)
    analysis = series_check.analysed_once(detector.ordered(points[:50]), settings).analyses[
        settings
    ]
    assert series.analyse.cache_info().currsize == 1
    assert series.analyse(tuple(detector.ordered(points[:50])), settings) is analysis

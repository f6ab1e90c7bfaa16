"""The accuracy bench scores the product's alerts, not a model of them.

bench/detector_accuracy.py replays its lab-like series through the detector's calls and keeps
the alerts by the service's rules in memory (``detector_suite.AlertBook``). Here series of a
held-out seed of that suite (31, used by no tuning) go through the product instead: a bundle
per kernel, ingested, checked, the alerts read back from the database, with the four sibling
setups whose levels the bench pools into the prior uploaded first. Both must end with the
same alerts: kernel, direction, confirmed or not; and the compare page, shown each alert's
runs and each kernel against the one before, must agree with the alerts or say why not
(the compare page and the alerts never disagree without saying why). Series of the peer
suite are uploaded whole, as a lab uploads its history, and must give the bench's
whole-series reading.
``python bench/situations_agreement.py`` runs the lab situations through the product the same
way, over more series.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import product_replay  # noqa: E402
from detector_accuracy import jobs  # noqa: E402
from detector_suite import (  # noqa: E402
    Series,
    lab_prior,
    make_series,
    peer_series,
    sibling_series,
    whole_series_alerts,
)

from perfdb.alerting import queue  # noqa: E402
from perfdb.detector.detection import Settings  # noqa: E402

pytestmark = pytest.mark.django_db

SEED = 31
# (kind, trials, step size): steps small and large, a spike, bimodal and clean series, with
# one trial and with several; two series of each
CELLS = [
    ("step", 1, 3),
    ("step", 3, 2),
    ("step", 2, 4),
    ("spike", 1, 0),
    ("bimodal", 3, 0),
    ("clean", 1, 0),
]
PER_CELL = 2
# and two series (their places in the seed's suite) where a later check re-places a confirmed
# step one kernel away, so its alert moves
MOVING = (88, 1503)


def _sample() -> list[tuple[int, Series]]:
    taken: Counter[tuple[str, int, int]] = Counter()
    picked = []
    for number, (seed, kind, trials, size, _) in enumerate(jobs(SEED, 1.0, {})):
        cell = (kind, trials, size)
        if number in MOVING or (cell in CELLS and taken[cell] < PER_CELL):
            taken[cell] += 1
            picked.append((seed, make_series(random.Random(seed), kind, trials, size)))
    return picked


SAMPLE = _sample()

# Step series (their places in the seed's suite) uploaded as a lab backfills: every 4th
# kernel first, then the kernels between two of them together. In each, the step first
# confirmed on a "release" is placed into the gap before it once that gap's kernels arrive:
# its alert moves there (perfdb.alerting.moves_rule.KernelOrder) instead of a second one.
BACKFILLED = (119, 161)
BACKFILL_SAMPLE = [
    (seed, make_series(random.Random(seed), kind, trials, size))
    for number, (seed, kind, trials, size, _) in enumerate(jobs(SEED, 1.0, {}))
    if number in BACKFILLED
]


@pytest.fixture
def checks_here(monkeypatch, django_capture_on_commit_callbacks):
    """Each check run here, as the detection worker would run it (nothing to the broker);
    each ingest's on-commit work (the caches' new versions) run as its commit would."""
    monkeypatch.setattr(queue, "regressions_check", lambda **kwargs: None)
    monkeypatch.setattr(queue, "notify_upload", lambda **kwargs: None)
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.mark.parametrize(
    "seed,series",
    SAMPLE,
    ids=[f"{s.kind}-{s.trials}t-{s.sigma_steps}s-{seed}" for seed, s in SAMPLE],
)
def test_the_product_ends_with_the_alerts_the_bench_scores(seed, series, checks_here):
    bench = product_replay.in_bench(series, lab_prior(seed, series)).held
    siblings = sibling_series(seed, series)
    product = product_replay.replay(series, str(seed), siblings, committed=checks_here)
    assert product_replay.differences(bench, product) == ([], [])
    # the compare page, on each alert's runs and each kernel against the one before, agrees
    # with the alerts or says why not
    readings = product_replay.compare_page_readings(product_replay.Names.of(str(seed)))
    assert readings[product_replay.SILENT] == 0
    assert readings[product_replay.AGREES] >= len(series.points) // 2


@pytest.mark.parametrize("seed,series", BACKFILL_SAMPLE, ids=[str(s) for s, _ in BACKFILL_SAMPLE])
def test_kernels_backfilled_between_releases_end_as_in_the_bench(
    seed, series, checks_here, settings
):
    # the step scan from six kernels, as these series were picked for: a step it confirms on
    # a release moves into the gap before it once the gap's kernels come
    settings.PERFDB_SHORT_KERNELS = 6
    prior = lab_prior(seed, series)
    replayed = product_replay.in_bench(series, prior, "backfill", short_kernels=6)
    assert replayed.moved >= 1
    assert sum(confirmed for _, _, confirmed in replayed.held) == 1  # one alert, moved
    siblings = sibling_series(seed, series)
    product = product_replay.replay(
        series, str(seed), siblings, committed=checks_here, plan="backfill"
    )
    assert product_replay.differences(replayed.held, product) == ([], [])


def test_the_sample_has_alerts_of_every_state():
    """The comparison is not of empty lists: the sample's replays (in the bench, which the
    test above holds equal to the product) confirm steps, keep unconfirmed ones (pending or
    cleared) and move alerts."""
    books = [product_replay.in_bench(s, lab_prior(seed, s)) for seed, s in SAMPLE]
    held = [alert for book in books for alert in book.held]
    assert sum(1 for _, _, confirmed in held if confirmed) >= 4
    assert any(not confirmed for _, _, confirmed in held)
    assert sum(book.moved for book in books) >= 2


PEER_SEEDS = range(3)


@pytest.mark.parametrize("noisy", [False, True], ids=["clean-steps", "spikes-bimodal"])
@pytest.mark.parametrize("seed", PEER_SEEDS)
def test_a_peer_series_uploaded_whole_gives_the_benchs_reading(seed, noisy, checks_here):
    series = peer_series(random.Random(SEED + seed), noisy)
    held = product_replay.replay(series, f"peer{seed}", committed=checks_here, plan="whole")
    product = sorted({(i, d) for i, d, confirmed in held if confirmed})
    assert product == whole_series_alerts(series, Settings())


def test_the_peer_sample_has_steps_found():
    """Not a comparison of empty lists: the peer sample's series have steps the bench finds."""
    found = [
        whole_series_alerts(peer_series(random.Random(SEED + seed), noisy), Settings())
        for seed in PEER_SEEDS
        for noisy in (False, True)
    ]
    assert sum(map(len, found)) >= 4

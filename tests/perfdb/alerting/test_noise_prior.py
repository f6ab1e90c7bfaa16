"""The pooled prior: a short series borrows its workload/metric's typical noise from the
workload's other setups (perfdb/alerting/noise_prior.py)."""

from __future__ import annotations

import random

import pytest

from ingest.services import upload_create, upload_ingest
from perfdb.alerting import noise_prior
from perfdb.alerting.noise_prior import typical_noise, with_prior
from perfdb.detector import detection, policy
from perfdb.models import Metric, Run
from tests.bundles import make_bundle, manifest_toml, volano_log, volano_run
from tests.perfdb.alerting.builds import series_points

pytestmark = pytest.mark.django_db


def ingest_setup(tmp_path, rooms: int, throughputs: list[int]) -> int:
    """One setup (VolanoMark on P8 with ``rooms``), one single-trial run per kernel; its id."""
    files: dict[str, str | bytes] = {}
    blocks = []
    for k, value in enumerate(throughputs):
        files[f"r{k}.log"] = volano_log(value)
        entry = f'{{ path = "r{k}.log", parser = "volanomark", trial = 1 }}'
        blocks.append(
            volano_run(f"2.6.{k + 1}", files=entry).replace("rooms = 10", f"rooms = {rooms}")
        )
    files["manifest.toml"] = manifest_toml(*blocks)
    path = make_bundle(tmp_path / f"rooms{rooms}.tar.gz", files)
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name)
    upload_ingest(upload_id=upload.pk)
    return Run.objects.filter(upload=upload).values_list("setup_id", flat=True).first()


def noisy(seed: int, n: int, sd_pct: float) -> list[int]:
    rng = random.Random(seed)
    return [round(13000 * (1 + rng.gauss(0, sd_pct / 100))) for _ in range(n)]


def test_a_short_series_borrows_the_median_noise_of_its_workloads_other_setups(tmp_path):
    others = {rooms: noisy(rooms, 12, 2.0) for rooms in (20, 30, 40)}
    ids = {rooms: ingest_setup(tmp_path, rooms, values) for rooms, values in others.items()}
    short = ingest_setup(tmp_path, 10, noisy(9, 5, 2.0))
    metric = Metric.objects.get(name="throughput")

    prior = typical_noise([(short, metric.pk)])[(short, metric.pk)]
    expected, moves = policy.pooled_level_noise_pct(others.values())
    assert prior == pytest.approx(expected) and moves == 3 * 11
    # one setup's own series never votes for its own prior
    own = typical_noise([(ids[20], metric.pk)])[(ids[20], metric.pk)]
    assert own == pytest.approx(policy.pooled_level_noise_pct([others[30], others[40]])[0])

    points = series_points(setup_id=short, metric_id=metric.pk)
    settings = with_prior(policy.Settings(), points, (short, metric.pk))
    assert settings.prior_noise_pct == pytest.approx(prior)
    # the staff's typical noise wins
    staff = with_prior(policy.Settings(prior_noise_pct=1.5), points, (short, metric.pk))
    assert staff.prior_noise_pct == 1.5


def test_a_workload_with_one_setup_has_no_prior(tmp_path):
    alone = ingest_setup(tmp_path, 10, noisy(1, 12, 2.0))
    metric = Metric.objects.get(name="throughput")
    assert typical_noise([(alone, metric.pk)]) == {}


def test_after_uploads_the_prior_follows_them_reading_only_the_setups_written_to(
    tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    """Each setup's levels are cached per setup version: an upload to one setup reads that
    setup's runs again, a new setup is pooled at once, the others are not read again."""
    from perfdb.alerting import noise_prior

    others = {rooms: noisy(rooms, 12, 2.0) for rooms in (20, 30)}
    ids = {rooms: ingest_setup(tmp_path, rooms, values) for rooms, values in others.items()}
    short = ingest_setup(tmp_path, 10, noisy(9, 5, 2.0))
    metric = Metric.objects.get(name="throughput")
    key = (short, metric.pk)
    typical_noise([key])
    read: list[list[int]] = []
    levels_of = noise_prior.levels_of

    def counted(setup_ids, metric_id):
        read.append(sorted(setup_ids))
        return levels_of(setup_ids, metric_id)

    monkeypatch.setattr(noise_prior, "levels_of", counted)
    with django_capture_on_commit_callbacks(execute=True):
        ids[40] = ingest_setup(tmp_path, 40, noisy(40, 12, 6.0))  # a new, noisier setup
    others[40] = noisy(40, 12, 6.0)
    assert typical_noise([key])[key] == pytest.approx(
        policy.pooled_level_noise_pct(others.values())[0]
    )
    assert read == [[ids[40]]]


@pytest.mark.parametrize("count", [0, 1, 3, 40])
def test_stock_kernels_counted_until_enough(count):
    """``stock_kernels_reach`` stops early; it answers what counting every one answers."""
    rng = random.Random(count)
    for n in (0, 2, 39, 40, 41, 200):
        points = [
            detection.Point(i, f"2.6.{rng.randrange(60)}", rng.choice([(), (), ("x",)]), (1.0,))
            for i in range(n)
        ]
        stock = {p.kernel for p in points if not p.patches}
        assert noise_prior.stock_kernels_reach(points, count) is (len(stock) >= count)


def test_every_setups_prior_is_the_median_of_the_others_votes(db):
    """Over a synthetic workload's setups (votes counted once, each setup's own left out):
    what ``pooled_level_noise_pct`` gives over the other setups' series."""
    from ingest import synthetic
    from perfdb.models import Result, Setup

    synthetic.history_write(scale=5, seed=5)
    setup = Setup.objects.filter(workload__name__startswith="synthetic-").first()
    setups = list(Setup.objects.filter(workload=setup.workload).values_list("pk", flat=True))
    metric_id = Result.objects.filter(setup=setup).values_list("metric_id", flat=True).first()
    assert len(setups) >= 3
    levels = noise_prior.levels_of(setups, metric_id=metric_id)  # each setup's series
    priors = typical_noise([(s, metric_id) for s in setups])
    for s in setups:
        expected = policy.pooled_level_noise_pct(v for o, v in levels.items() if o != s)[0]
        assert priors[(s, metric_id)] == expected

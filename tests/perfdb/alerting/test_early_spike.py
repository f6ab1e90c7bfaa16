"""A bad run on a series' second kernel is a spike, not the old level of a step.

Twice it was read as one: the short series' check judged the third kernel against it (a
move, confirmed by the fourth: ``detection.short_scan``), and once the series was long
enough for the step scan, it stayed in the baseline of the first starts, where no kernel
before it could make it pending (``stats.baseline_holds``). A bad *first* run cannot be
told from a step at the second kernel when it arrives (an A/B of two kernels is judged
then), and is alerted as one: here an improvement, never emailed, and the way back raises
no regression."""

from __future__ import annotations

import random

import pytest

from perfdb.alerting.notify import outbox_fill_for_upload
from perfdb.models import Alert
from tests.perfdb.alerting.builds import upload

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("seed", [0, 1])
def test_a_bad_second_run_raises_no_step_alert(tmp_path, subscriber, seed):
    rng = random.Random(seed)
    uploads = []
    for i in range(12):
        level = 13000 * (1.06 if i == 1 else 1.0)  # one run 6 % high, ~35 sd of a level
        trials = tuple(round(level * (1 + rng.gauss(0, 0.005))) for _ in range(3))
        uploads.append(upload(tmp_path, f"u{i}", f"2.6.{i}", trials))
    emailed = Alert.objects.filter(metric__name="throughput", confirmed_at__isnull=False)
    found = list(emailed.values_list("candidate_run__kernel__version", "direction"))
    assert found in ([], [("2.6.1", "improvement")])
    assert not Alert.objects.filter(metric__name="throughput", direction="regression").exists()
    assert all(outbox_fill_for_upload(upload_id=u.pk) == [] for u in uploads)

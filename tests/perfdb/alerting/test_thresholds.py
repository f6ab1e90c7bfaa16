"""Detector thresholds staff set per workload and metric (perfdb/alerting/thresholds.py and the
``Threshold`` model): both numbers finite and > 0 or empty on every write path (model, admin
form, API service, the database itself), one row per workload and metric."""

from __future__ import annotations

import math

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from perfdb.admin import ThresholdForm
from perfdb.alerting.thresholds import Taken, threshold_save
from perfdb.models import Threshold
from tests.factories import MetricFactory, ThresholdFactory, WorkloadFactory

pytestmark = pytest.mark.django_db


def _threshold(value=None, noise=None) -> Threshold:
    """Unsaved: the tests save it (or not) through each write path."""
    return ThresholdFactory.build(
        workload=WorkloadFactory(),
        metric=MetricFactory(),
        threshold_pct=value,
        typical_noise_pct=noise,
    )


@pytest.mark.parametrize("bad", [0.0, -3.0, math.nan, math.inf])
def test_a_threshold_must_be_finite_and_positive_everywhere(bad):
    row = _threshold(bad)
    with pytest.raises(ValidationError):
        row.full_clean()
    with pytest.raises(ValueError):
        row.save()
    with pytest.raises(ValidationError):
        _threshold(5.0, noise=bad).full_clean()
    form = ThresholdForm(
        data={
            "workload": row.workload.pk,
            "metric": row.metric.pk,
            "threshold_pct": str(bad),
            "typical_noise_pct": "",
        }
    )
    assert not form.is_valid() and "threshold_pct" in form.errors


def test_the_database_refuses_a_nan_or_zero_threshold_written_around_the_model():
    row = _threshold(5.0)
    row.save()
    for bad in (math.nan, 0.0, math.inf):
        with pytest.raises(IntegrityError), transaction.atomic():
            Threshold.objects.filter(pk=row.pk).update(threshold_pct=bad)


def test_the_admin_form_saves_a_valid_threshold_and_prior():
    row = _threshold()
    form = ThresholdForm(
        data={
            "workload": row.workload.pk,
            "metric": row.metric.pk,
            "threshold_pct": "",
            "typical_noise_pct": "1.5",
        }
    )
    assert form.is_valid(), form.errors
    saved = form.save()
    assert saved.threshold_pct is None and saved.typical_noise_pct == 1.5


def test_the_service_stores_a_valid_row_and_names_a_bad_field():
    saved = threshold_save(_threshold(5.0, noise=1.5))
    assert Threshold.objects.get().pk == saved.pk
    with pytest.raises(ValidationError) as caught:
        threshold_save(
            ThresholdFactory.build(
                workload=WorkloadFactory(name="dbench"),
                metric=MetricFactory(),
                threshold_pct=math.nan,
            )
        )
    assert "threshold_pct" in caught.value.message_dict
    assert Threshold.objects.count() == 1


def test_a_second_row_for_a_pair_is_taken_naming_the_first():
    first = threshold_save(_threshold(5.0))
    with pytest.raises(Taken) as caught:
        threshold_save(_threshold(7.0))
    assert caught.value.existing_id == first.pk
    first.threshold_pct = 7.0  # the row itself may change
    assert threshold_save(first).threshold_pct == 7.0
    assert Threshold.objects.get().threshold_pct == 7.0
